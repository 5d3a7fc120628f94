import { Elysia, t } from "elysia";
import { consolePage, NO_NOTICE, notice, pageDoc, refusingPage, when } from "../../auth/console-kit";
import type { Guards } from "../../auth/guards";
import type { OperatorRequest } from "../../auth/session-plugin";
import type { AppContext } from "../../context";
import { compileHtml, type SafeHtml } from "../../http/html";
import { intQuery } from "../../http/params";
import { preflightDelta, preflightHistory, selectionOf } from "../preflight/service";
import { ANOMALY_DEFAULTS, preflightAnomalies } from "../preflight/anomalies";
import { currentGuards } from "../preflight/guards";
import { ignoredMetaQuery } from "../../http/envelope";

// GET /admin/console/preflight: the preflight guards for a person — what changed since a past day's snapshot
// (the delta, first: that is what an on-call person asks after a deploy), the days whose number of changes stands
// out (the z-score detector), the daily history (which fields each day's snapshot changed), and every guard value
// now (secrets only as set/unset and a fingerprint).

const PATH = "/admin/console/preflight";
const BASE = "/admin/ops/preflight-guards";

const PageQuery = t.Object({
  ...ignoredMetaQuery,
  day_offset: intQuery({ minimum: 1, maximum: 30, defaultValue: 1, description: "compare with the snapshot of this many days ago" }),
  days: intQuery({ minimum: 1, maximum: 90, defaultValue: ANOMALY_DEFAULTS.days, description: "anomalies and history: the last N days" }),
});

interface PageData {
  generatedAt: string;
  /** The refusal of a parameter out of range (the page then shows its defaults), or none. */
  notice: SafeHtml;
  dayOffset: number;
  days: number;
  compareDay: string;
  compareAvailable: boolean;
  compareTakenAt: string | null;
  counts: { added: number; removed: number; changed: number; unchanged: number };
  changes: Array<{ field: string; change: string; badge: string; before: string; after: string }>;
  evaluated: number;
  anomalies: Array<{ day: string; series: string; count: number; mean: string; z: string }>;
  guards: Array<{ field: string; value: string; fingerprint: string; secret: boolean }>;
  history: HistoryDay[];
  exports: Array<readonly [string, string]>;
}

const body = compileHtml<PageData>(
  "console-preflight",
  `<h1>Preflight guards</h1>
<p class="lead">As of <%= it.generatedAt %>; all times UTC. The configuration and artifacts that decide how Herald behaves, snapshotted daily: what changed, and when the changes were unusual.</p>
<%= it.notice %>
<form method="get" action="${PATH}" id="compare" class="filters">
<p><label>Compare with the snapshot of <input type="number" name="day_offset" min="1" max="30" step="1" value="<%= it.dayOffset %>" required> days ago (1–30)</label></p>
<p><label>Unusual days and history over the last <input type="number" name="days" min="1" max="90" step="1" value="<%= it.days %>" required> days (1–90)</label></p>
<p><button type="submit" id="apply">Show</button></p></form>
<section id="delta"><h2>Changes since <%= it.compareDay %></h2>
<% if (!it.compareAvailable) { %><p class="muted" id="delta-unavailable">No snapshot was taken on <%= it.compareDay %>: nothing to compare with (the preflight-snapshot job takes one a day).</p><% } else { %>
<section class="summary <%= it.changes.length ? "attention" : "ready" %>"><p id="delta-counts"><%= it.counts.changed %> changed, <%= it.counts.added %> added, <%= it.counts.removed %> removed, <%= it.counts.unchanged %> unchanged against the snapshot taken <%= it.compareTakenAt %>.</p></section>
<% if (it.changes.length) { %><table class="data" id="change-rows"><thead><tr><th>Field</th><th>Change</th><th>Before</th><th>Now</th></tr></thead><tbody>
<% for (const c of it.changes) { %><tr><td data-label="Field"><code><%= c.field %></code></td><td data-label="Change"><span class="badge <%= c.badge %>"><%= c.change %></span></td><td data-label="Before"><code><%= c.before %></code></td><td data-label="Now"><code><%= c.after %></code></td></tr>
<% } %></tbody></table><% } %><% } %></section>
<section id="anomalies"><h2>Unusual days</h2>
<p class="muted"><%= it.evaluated %> day-series evaluated over the last <%= it.days %> days; a day is unusual when its number of changes is far above the days before it (z-score).</p>
<% if (it.anomalies.length === 0) { %><p class="muted" id="anomalies-none">None.</p><% } else { %><table class="data" id="anomaly-rows"><thead><tr><th>Day</th><th>Series</th><th>Changes</th><th>Usual</th><th>z</th></tr></thead><tbody>
<% for (const a of it.anomalies) { %><tr><td data-label="Day"><%= a.day %></td><td data-label="Series"><code><%= a.series %></code></td><td data-label="Changes"><%= a.count %></td><td data-label="Usual"><%= a.mean %></td><td data-label="z"><%= a.z %></td></tr>
<% } %></tbody></table><% } %></section>
<section id="history"><h2>History</h2>
<p class="muted" id="history-count"><%= it.history.length %> of the last <%= it.days %> days have a snapshot; newest first, each against the day before.</p>
<% if (it.history.length === 0) { %><p class="muted" id="history-none">None.</p><% } else { %><table class="data" id="history-rows"><thead><tr><th>Day</th><th>Fields</th><th>Changed</th><th>Which</th></tr></thead><tbody>
<% for (const d of it.history) { %><tr><td data-label="Day"><%= d.day %></td><td data-label="Fields"><%= d.fields %></td><td data-label="Changed"><% if (d.changed === null) { %><span class="muted">no snapshot the day before</span><% } else { %><span class="badge <%= d.changed ? "warn" : "ok" %>"><%= d.changed %></span><% } %></td><td data-label="Which"><% if (d.which.length) { %><code><%= d.which.join(", ") %></code><% } else { %><span class="muted">–</span><% } %></td></tr>
<% } %></tbody></table><% } %></section>
<section id="guards"><h2>Every guard now</h2>
<table class="data" id="guard-rows"><thead><tr><th>Field</th><th>Value</th><th>Fingerprint</th></tr></thead><tbody>
<% for (const g of it.guards) { %><tr><td data-label="Field"><code><%= g.field %></code></td><td data-label="Value"><% if (g.secret) { %><span class="badge">secret</span> <% } %><% if (g.value === "") { %><span class="muted">(empty)</span><% } else { %><code><%= g.value %></code><% } %></td><td data-label="Fingerprint"><code><%= g.fingerprint %></code></td></tr>
<% } %></tbody></table></section>
<section id="exports"><h2>Exports</h2><ul class="exports"><% for (const [label, href] of it.exports) { %><li><a href="<%= href %>"><%= label %></a></li><% } %></ul></section>`,
);

interface HistoryDay {
  day: string;
  fields: number;
  /** Fields whose fingerprint differs from the day before; null when the day before has no snapshot. */
  changed: number | null;
  which: string[];
}

/** The history's rows (one per day and field) as one line per day, newest first. */
function historyDays(rows: Awaited<ReturnType<typeof preflightHistory>>["rows"]): HistoryDay[] {
  const byDay = new Map<string, HistoryDay>();
  for (const r of rows) {
    let d = byDay.get(r.day);
    if (!d) byDay.set(r.day, (d = { day: r.day, fields: 0, changed: r.changed === null ? null : 0, which: [] }));
    d.fields++;
    if (r.changed === true && d.changed !== null) {
      d.changed++;
      d.which.push(`${r.section}.${r.field}`);
    }
  }
  return [...byDay.values()].sort((a, b) => b.day.localeCompare(a.day));
}

const CHANGE_BADGE: Record<string, string> = { changed: "warn", added: "warn", removed: "bad" };

/** The page comparing with `dayOffset` days ago over the last `days`; `error` above it (a refused parameter), or none. */
async function render(ctx: AppContext, operator: OperatorRequest, dayOffset: number, days: number, error: string | null = null, status = 200) {
  const sel = await selectionOf(ctx, {});
  const guardsNow = await currentGuards(ctx);
  const d = await preflightDelta(ctx, dayOffset, sel, guardsNow);
  const a = await preflightAnomalies(ctx, { ...ANOMALY_DEFAULTS, days }, sel);
  const h = await preflightHistory(ctx, days, sel);
  const q = `day_offset=${dayOffset}`;
  return consolePage(
    operator,
    "Preflight guards",
    PATH,
    body({
      generatedAt: when(ctx.clock.now().toISOString())!,
      notice: notice({ ...NO_NOTICE, error }),
      dayOffset,
      days,
      compareDay: d.compare_day,
      compareAvailable: d.compare_available,
      compareTakenAt: when(d.compare_taken_at),
      counts: d.counts,
      changes: d.changes.map((c) => ({
        field: `${c.section}.${c.field}`,
        change: c.change,
        badge: CHANGE_BADGE[c.change] ?? "",
        before: c.before ?? "–",
        after: c.after ?? "–",
      })),
      evaluated: a.evaluated,
      anomalies: a.anomalies.map((e) => ({
        day: e.day,
        series: e.series,
        count: e.count,
        mean: e.baseline_mean === null ? "–" : String(e.baseline_mean),
        z: e.z === null ? "∞" : String(e.z),
      })),
      history: historyDays(h.rows),
      guards: guardsNow.map((g) => ({ field: `${g.section}.${g.field}`, value: g.value, fingerprint: g.fingerprint || "–", secret: g.secret })),
      exports: [
        ["Guards now (JSON)", `${BASE}.json`],
        ["Guards now (CSV)", `${BASE}/export.csv`],
        ["Delta (JSON)", `${BASE}/delta.json?${q}`],
        ["Delta (CSV)", `${BASE}/delta.csv?${q}`],
        ["Delta summary (JSON, with validators)", `${BASE}/delta.summary.json?${q}`],
        ["History per day (JSON)", `${BASE}/history.json?days=${days}`],
        ["History per day (CSV)", `${BASE}/history.csv?days=${days}`],
        ["Anomalies (JSON)", `${BASE}/anomalies.json?days=${days}`],
        ["Anomalies (CSV)", `${BASE}/anomalies.csv?days=${days}`],
      ],
    }),
    status,
  );
}

export function preflightPageRoutes(ctx: AppContext, guards: Guards) {
  return new Elysia({ name: "herald:console-preflight" })
    .use(guards.operator.plugin)
    .get(PATH, ({ operator, query }) => render(ctx, operator, query.day_offset ?? 1, query.days ?? ANOMALY_DEFAULTS.days), {
      // A parameter out of range: for a browser, the page with the defaults and the message (a script: the envelope).
      operator: refusingPage((operator) => (status, error) => render(ctx, operator, 1, ANOMALY_DEFAULTS.days, error, status)),
      query: PageQuery,
      detail: pageDoc(
        "Preflight guards (HTML page): changes since a past day's snapshot, unusual days (z-score), the daily history, every guard value now, exports",
        PATH,
      ),
    });
}
