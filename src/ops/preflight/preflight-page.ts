import { consoleRoute } from "../../console/kit";
import type { Guards } from "../../auth/guards";
import { badge, cells, code, dataTable, muted, when } from "../../console/frame";
import type { AppContext } from "../../context";
import { compileHtml, type SafeHtml } from "../../http/formats/html";
import { intQuery } from "../../http/params";
import { ANOMALY_DEFAULTS, preflightAnomalies } from "./anomalies";
import { currentGuards } from "./guards";
import { preflightDelta, preflightHistory, selectionOf } from "./service";

// GET /admin/console/preflight: the preflight guards for a person — what changed since a past day's snapshot
// (the delta, first: that is what an on-call person asks after a deploy), the days whose number of changes stands
// out (the z-score detector), the daily history (which fields each day's snapshot changed), and every guard value
// now (secrets only as set/unset and a fingerprint).

const PATH = "/admin/console/preflight";
const BASE = "/admin/ops/preflight-guards";
const CHANGE_BADGE: Record<string, string> = { changed: "warn", added: "warn", removed: "bad" };

const body = compileHtml<{
  dayOffset: number;
  days: number;
  delta: Delta;
  anomalies: SafeHtml;
  evaluated: number;
  historyDays: number;
  history: SafeHtml;
  guards: SafeHtml;
}>(
  "console-preflight",
  `<form method="get" action="${PATH}" id="compare" class="filters">
<label>Compare with the snapshot of this many days ago (1–30) <input type="number" name="day_offset" min="1" max="30" step="1" value="<%= it.dayOffset %>" required></label>
<label>Unusual days and history over the last days (1–90) <input type="number" name="days" min="1" max="90" step="1" value="<%= it.days %>" required></label>
<button type="submit" id="apply">Show</button></form>
<section id="delta"><h2>Changes since <%= it.delta.compare_day %></h2>
<% if (!it.delta.compare_available) { %><p class="muted" id="delta-unavailable">No snapshot was taken on <%= it.delta.compare_day %>: nothing to compare with (the preflight-snapshot job takes one a day).</p><% } else { %>
<section class="summary <%= it.delta.changes.length ? "attention" : "ready" %>"><p id="delta-counts"><%= it.delta.counts.changed %> changed, <%= it.delta.counts.added %> added, <%= it.delta.counts.removed %> removed, <%= it.delta.counts.unchanged %> unchanged against the snapshot taken <%= it.delta.takenAt %>.</p></section>
<%= it.delta.table %><% } %></section>
<section id="anomalies"><h2>Unusual days</h2>
<p class="muted"><%= it.evaluated %> day-series evaluated over the last <%= it.days %> days; a day is unusual when its number of changes is far above the days before it (z-score).</p>
<%= it.anomalies %></section>
<section id="history"><h2>History</h2>
<p class="muted" id="history-count"><%= it.historyDays %> of the last <%= it.days %> days have a snapshot; newest first, each against the day before.</p>
<%= it.history %></section>
<section id="guards"><h2>Every guard now</h2><%= it.guards %></section>`,
);

type Delta = Awaited<ReturnType<typeof preflightDelta>> & { takenAt: string | null; table: SafeHtml };

/** The history's rows as one line per day, newest first; `changed` is null when the day before has no snapshot. */
function historyDays(rows: Awaited<ReturnType<typeof preflightHistory>>["rows"]) {
  const byDay = new Map<string, { day: string; fields: number; changed: number | null; which: string[] }>();
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

export function preflightPageRoutes(ctx: AppContext, guards: Guards) {
  return consoleRoute(ctx, guards, {
    path: PATH,
    title: "Preflight guards",
    lead: "The configuration and artifacts that decide how Herald behaves, snapshotted daily: what changed, and when the changes were unusual.",
    summary: "Preflight guards (HTML page): changes since a past day's snapshot, unusual days (z-score), the daily history, every guard value now, exports",
    query: {
      day_offset: intQuery({ minimum: 1, maximum: 30, defaultValue: 1, description: "compare with the snapshot of this many days ago" }),
      days: intQuery({ minimum: 1, maximum: 90, defaultValue: ANOMALY_DEFAULTS.days, description: "anomalies and history: the last N days" }),
    },
    async load(q) {
      const dayOffset = q.day_offset ?? 1;
      const days = q.days ?? ANOMALY_DEFAULTS.days;
      const sel = await selectionOf(ctx, {});
      const guardsNow = await currentGuards(ctx);
      return {
        dayOffset,
        days,
        guardsNow,
        delta: await preflightDelta(ctx, dayOffset, sel, guardsNow),
        anomalies: await preflightAnomalies(ctx, { ...ANOMALY_DEFAULTS, days }, sel),
        history: historyDays((await preflightHistory(ctx, days, sel)).rows),
      };
    },
    view: ({ dayOffset, days, guardsNow, delta, anomalies, history }) =>
      body({
        dayOffset,
        days,
        delta: {
          ...delta,
          takenAt: when(delta.compare_taken_at),
          table: dataTable({
            id: "change-rows",
            rows: delta.changes,
            columns: {
              Field: (c) => code(`${c.section}.${c.field}`),
              Change: (c) => badge(CHANGE_BADGE[c.change] ?? "", c.change),
              Before: (c) => code(c.before ?? "–"),
              Now: (c) => code(c.after ?? "–"),
            },
          }),
        },
        evaluated: anomalies.evaluated,
        anomalies: dataTable({
          id: "anomaly-rows",
          rows: anomalies.anomalies,
          empty: "None.",
          columns: {
            Day: (e) => e.day,
            Series: (e) => code(e.series),
            Changes: (e) => e.count,
            Usual: (e) => (e.baseline_mean === null ? "–" : String(e.baseline_mean)),
            z: (e) => (e.z === null ? "∞" : String(e.z)),
          },
        }),
        historyDays: history.length,
        history: dataTable({
          id: "history-rows",
          rows: history,
          empty: "None.",
          columns: {
            Day: (d) => d.day,
            Fields: (d) => d.fields,
            Changed: (d) => (d.changed === null ? muted("no snapshot the day before") : badge(d.changed ? "warn" : "ok", d.changed)),
            Which: (d) => (d.which.length ? code(d.which.join(", ")) : muted("–")),
          },
        }),
        guards: dataTable({
          id: "guard-rows",
          rows: guardsNow,
          columns: {
            Field: (g) => code(`${g.section}.${g.field}`),
            Value: (g) => cells(g.secret ? badge("", "secret") : null, g.value === "" ? muted("(empty)") : code(g.value)),
            Fingerprint: (g) => code(g.fingerprint || "–"),
          },
        }),
      }),
    exports: ({ dayOffset, days }) => ({
      links: [
        ["Guards now (JSON)", `${BASE}.json`],
        ["Guards now (CSV)", `${BASE}/export.csv`],
        ["Delta (JSON)", `${BASE}/delta.json?day_offset=${dayOffset}`],
        ["Delta (CSV)", `${BASE}/delta.csv?day_offset=${dayOffset}`],
        ["Delta summary (JSON, with validators)", `${BASE}/delta.summary.json?day_offset=${dayOffset}`],
        ["History per day (JSON)", `${BASE}/history.json?days=${days}`],
        ["History per day (CSV)", `${BASE}/history.csv?days=${days}`],
        ["Anomalies (JSON)", `${BASE}/anomalies.json?days=${days}`],
        ["Anomalies (CSV)", `${BASE}/anomalies.csv?days=${days}`],
      ],
    }),
  });
}
