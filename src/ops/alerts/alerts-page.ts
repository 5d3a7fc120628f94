import { t } from "elysia";
import { consoleRoute, form, refusal } from "../../console/kit";
import type { Guards } from "../../auth/guards";
import { badge, type Cell, choice, code, dataTable, endNowForm, hrefWith, link, when } from "../../console/frame";
import type { AppContext } from "../../context";
import { AppError } from "../../http/errors/errors";
import { compileHtml, type SafeHtml } from "../../http/formats/html";
import { MAX_CURSOR_CHARS, parsePage } from "../../http/pagination";
import { intPath, intQuery } from "../../http/params";
import { alertsExport } from "./export";
import { ALERTS_DEFAULTS } from "./model";
import { ALERT_SOURCES, ALERT_STATUSES } from "./service";
import { createSilence, expireSilence, listSilences, MAX_SILENCE_DAYS, type Silence } from "./silences";
import { notConfigured, summaryOf } from "./state";
import { levelBadge } from "./alert-pages";
import { type AlertView, firingAlerts, recentAlerts } from "./views";
import { formInstantMs, lenientValues } from "../incidents/window";

// GET /admin/console/alerts: what fires now, the recent changes, the evaluations (paged like export.json) and the
// silences, with forms calling the same audited verbs as the silences API. The query is read leniently, as a GET form
// sends it: a value out of bounds is replaced by its default and named on the page (400).

const PATH = "/admin/console/alerts";
const BASE = "/admin/ops/alerts-monitor";
const MAX_HOURS = MAX_SILENCE_DAYS * 24;
/** Alerts (state rows) read for the changes list and the key → page map; Herald has a few dozen alert keys. */
const STATES_MAX = 500;
const CHANGES_PAGE = 25;
const RUNS_PAGE = 25;
const RUNS_MAX_DAYS = 90;
const ACTIVE_SHOWN = 100;
const ENDED_PAGE = 10;

const SOURCES = ["all", ...ALERT_SOURCES];
const STATUSES = ["all", ...ALERT_STATUSES];
const str = (maxLength: number, description: string) => t.Optional(t.String({ maxLength, description }));

const DEFAULTS = {
  /** Offsets into the recent changes and the evaluations (export.json's offset). */
  changes: 0,
  days: ALERTS_DEFAULTS.days as number,
  source: "all",
  status: "all",
  runs: 0,
  /** The recently-ended silences' cursor (the silences list's next_cursor), or null for the newest. */
  ended: null as string | null,
};
type AlertsQuery = typeof DEFAULTS;

/** The page's query, each bad value replaced by its default and named in `error`. */
function parseAlertsQuery(raw: Partial<Record<keyof AlertsQuery, string | number>>): { q: AlertsQuery; error: string | null } {
  const problems: string[] = [];
  const read = lenientValues(problems);
  const int = (name: "changes" | "runs" | "days", min: number, max: number, what: string) => read.int(raw[name], min, max, DEFAULTS[name], what);
  let ended = raw.ended ? String(raw.ended) : null;
  if (ended !== null) {
    try {
      parsePage({ cursor: ended });
    } catch {
      problems.push("the Older link of the ended silences is stale or mangled; showing the newest");
      ended = null;
    }
  }
  const q: AlertsQuery = {
    changes: int("changes", 0, STATES_MAX - 1, "the changes offset"),
    days: int("days", 1, RUNS_MAX_DAYS, "Days"),
    source: read.oneOf(raw.source, SOURCES, "source"),
    status: read.oneOf(raw.status, STATUSES, "status"),
    runs: int("runs", 0, 1_000_000, "the evaluations offset"),
    ended,
  };
  return { q, error: problems.length ? `Shown with defaults instead: ${problems.join("; ")}.` : null };
}

/** The page's own address with `patch` applied (defaults left out). */
function hrefOf(q: AlertsQuery, patch: Partial<AlertsQuery>, anchor: string): string {
  const next: AlertsQuery = { ...q, ...patch };
  const parts = Object.entries(next).map(([k, v]) => [k, v === DEFAULTS[k as keyof AlertsQuery] ? null : v]);
  return hrefWith(PATH, Object.fromEntries(parts), `#${anchor}`);
}

/** `2026-04-01T12:00` (a datetime-local input's value, read as UTC) from a time. */
const localMinute = (ms: number) => new Date(ms).toISOString().slice(0, 16);

/** When the silence ends: `until` if given (it wins), else now + hours; bounded as the verb bounds it. */
function endsAtOf(ctx: AppContext, hoursRaw: string, untilRaw: string): string {
  const now = ctx.clock.now().getTime();
  const max = now + MAX_SILENCE_DAYS * 86_400_000;
  if (untilRaw !== "") {
    const ms = formInstantMs(untilRaw);
    if (Number.isNaN(ms)) throw refusal(400, "Nothing was changed: Until must be a date and time in UTC, such as 2026-04-02T09:00.");
    if (ms <= now) throw refusal(400, `Nothing was changed: Until must be in the future (it is ${when(new Date(now).toISOString())} now).`);
    if (ms > max)
      throw refusal(400, `Nothing was changed: Until must be at most ${MAX_SILENCE_DAYS} days ahead (${when(new Date(max).toISOString())} at the latest).`);
    return new Date(ms).toISOString();
  }
  const hours = /^\d{1,4}$/.test(hoursRaw) ? Number(hoursRaw) : Number.NaN;
  if (!(hours >= 1 && hours <= MAX_HOURS))
    throw refusal(400, `Nothing was changed: Hours must be a whole number from 1 to ${MAX_HOURS} (or give Until instead).`);
  return new Date(now + hours * 3_600_000).toISOString();
}

const alertLink = (a: { page: string | null; key: string }): Cell => (a.page === null ? code(a.key) : link(a.page, code(a.key)));
const silenced = (s: AlertView["silenced_by"]) => (s ? `#${s.id} by ${s.created_by} until ${when(s.ends_at)}: ${s.reason}` : null);
const changeOf = (a: AlertView) =>
  a.level !== "ok"
    ? `${a.level} since ${when(a.since)}`
    : a.resolved_at
      ? `resolved ${when(a.resolved_at)}${a.fired_at ? ` (fired ${when(a.fired_at)})` : ""}`
      : `${notConfigured(a.details) ? "not configured" : "ok"} since ${when(a.since)}`;

function silenceTable(id: string, rows: Silence[], csrf: SafeHtml | null): SafeHtml {
  return dataTable({
    id,
    rows,
    empty: "None.",
    rowId: (s) => `silence-${s.id}`,
    columns: {
      Silence: (s) => `#${s.id}`,
      State: (s) => badge(s.state === "active" ? "warn" : "", s.state),
      Matches: (s) => code(s.matcher),
      Why: (s) => s.reason,
      By: (s) => `${s.created_by} at ${when(s.created_at)}`,
      Until: (s) => (s.expired_at ? `ended ${when(s.expired_at)} by ${s.expired_by ?? "?"} (was until ${when(s.ends_at)})` : when(s.ends_at)),
      ...(csrf ? { Action: { class: "act", cell: (s: Silence) => endNowForm({ action: `${PATH}/silences/${s.id}/end`, id: s.id, csrf }) } } : {}),
    },
  });
}

const body = compileHtml<{
  firingCount: number;
  firing: SafeHtml | null;
  changes: SafeHtml;
  runsFilter: SafeHtml;
  runs: SafeHtml;
  runsJson: string;
  active: SafeHtml;
  activeMore: boolean;
  ended: SafeHtml;
  endedNewest: string | null;
  endedOlder: string | null;
  form: { matcher: string; reason: string; hours: string; until: string; minUntil: string; maxUntil: string };
  csrf: SafeHtml;
}>(
  "console-alerts",
  `<section id="firing" class="summary <%= it.firingCount ? "attention" : "ready" %>"><p><strong id="firing-count"><%= it.firingCount %></strong> <%= it.firingCount === 1 ? "alert fires" : "alerts fire" %> now.</p></section>
<%= it.firing %>
<section id="history"><h2>Recent changes</h2>
<p class="muted">Each alert once, the latest change (fired, escalated, resolved) first.</p>
<%= it.changes %></section>
<section id="runs"><h2>Evaluations</h2>
<p class="muted">Every evaluation the monitors recorded, newest first (as export.json pages them).</p>
<%= it.runsFilter %>
<%= it.runs %><p class="muted"><a id="runs-json" href="<%= it.runsJson %>">These evaluations as JSON</a></p></section>
<section id="silences"><h2>Silences</h2>
<h3>Active</h3>
<%= it.active %><% if (it.activeMore) { %><p class="muted">More are active than shown: <a href="${BASE}/silences?state=active">all of them (JSON)</a>.</p><% } %>
<h3>Recently ended</h3>
<%= it.ended %>
<% if (it.endedNewest !== null || it.endedOlder !== null) { %><nav class="pages muted"><% if (it.endedNewest !== null) { %><a id="ended-newest" href="<%= it.endedNewest %>">Newest</a><% } %><% if (it.endedOlder !== null) { %><a id="ended-older" href="<%= it.endedOlder %>">Older</a><% } %></nav><% } %>
<h3>Add a silence</h3>
<p class="muted">It holds back the notices of every alert whose key matches, until it ends (at most ${MAX_HOURS} hours ahead) or someone ends it here.</p>
<form method="post" action="${PATH}/silences" class="filters" id="silence-form"><%= it.csrf %>
<label class="wide">Alert key or pattern <input name="matcher" maxlength="200" required value="<%= it.form.matcher %>" placeholder="digest:403_spike or webhooks:*"></label>
<label class="wide">Why (shown to everyone on call) <input name="reason" maxlength="500" required value="<%= it.form.reason %>"></label>
<label>For hours <input type="number" name="hours" min="1" max="${MAX_HOURS}" value="<%= it.form.hours %>"></label>
<label>Or until (UTC; wins over hours) <input type="datetime-local" name="until" min="<%= it.form.minUntil %>" max="<%= it.form.maxUntil %>" value="<%= it.form.until %>"></label>
<button type="submit" class="primary" id="silence">Silence</button></form></section>`,
);

const runsFilter = compileHtml<{ days: number; source: SafeHtml; status: SafeHtml }>(
  "console-alerts-runs-filter",
  `<form method="get" action="${PATH}#runs" class="filters" id="runs-form"><label>Last <input type="number" name="days" min="1" max="${RUNS_MAX_DAYS}" value="<%= it.days %>" required> days</label>
<%= it.source %> <%= it.status %> <button type="submit" id="runs-apply">Show</button></form>`,
);

export function alertsPageRoutes(ctx: AppContext, guards: Guards) {
  return consoleRoute(ctx, guards, {
    path: PATH,
    title: "Alerts",
    lead: "An alert fires while its latest evaluation is warn or fail; a silence holds its notices back, never the alert itself.",
    summary: "Alerts (HTML page): firing now with links to each alert, recent changes, evaluations (paged), silences with add/end forms, exports",
    query: {
      changes: str(9, "recent changes to skip (the Older link), 0 to 499"),
      // Typed and bounded like every numeric parameter (a value out of range is the 400 envelope naming it).
      days: intQuery({ minimum: 1, maximum: RUNS_MAX_DAYS, description: "evaluations of the last N days, 1 to 90 (default 7)" }),
      source: str(16, "evaluations of one source: all, status, transparency, webhooks, digest, preflight"),
      status: str(8, "evaluations of one status: all, ok, warn, fail"),
      runs: str(9, "evaluations to skip (the Older link), as export.json's offset"),
      ended: str(MAX_CURSOR_CHARS, "the ended silences' cursor (the Older link)"),
      matcher: str(200, "pre-fills the silence form (from a firing alert's Silence link)"),
      reason: str(500, "pre-fills the silence form"),
      hours: intQuery({ minimum: 1, maximum: MAX_HOURS, description: "pre-fills the silence form" }),
      until: str(40, "pre-fills the silence form"),
    },
    done: { field: "silence", pattern: /^\d{1,12}$/, says: { silenced: (id) => `Silence #${id} added.`, ended: (id) => `Silence #${id} ended now.` } },
    async load(raw, call) {
      const { q, error } = parseAlertsQuery(raw);
      if (error) call.refuse(new AppError("invalid_query", error));
      const states = await recentAlerts(ctx, STATES_MAX);
      const filter = { days: q.days, source: q.source as "all", status: q.status as "all" };
      return {
        q,
        windowQuery: new URLSearchParams({ days: String(q.days), source: q.source, status: q.status }).toString(),
        form: { matcher: raw.matcher ?? "", reason: raw.reason ?? "", hours: String(raw.hours ?? "4"), until: raw.until ?? "" },
        firing: await firingAlerts(ctx),
        states,
        pageOfKey: new Map(states.map((a) => [a.key, a.page])),
        runs: await alertsExport(ctx, { ...filter, limit: RUNS_PAGE, offset: q.runs }),
        active: await listSilences(ctx, { limit: ACTIVE_SHOWN, offset: 0, after: null, cursor: null }, "active"),
        ended: await listSilences(ctx, { ...parsePage({ cursor: q.ended ?? undefined }), limit: ENDED_PAGE }, "expired"),
      };
    },
    view: ({ q, windowQuery, form, firing, states, pageOfKey, runs, active, ended }, { csrf }) => {
      const now = ctx.clock.now().getTime();
      const changes = states.slice(q.changes, q.changes + CHANGES_PAGE);
      const level = (a: AlertView) => levelBadge(a.level, a.details);
      return body({
        firingCount: firing.length,
        firing: firing.length
          ? dataTable({
              id: "firing-rows",
              rows: firing,
              columns: {
                Alert: alertLink,
                Level: level,
                Since: (a) => when(a.fired_at ?? a.since),
                Summary: (a) => a.summary ?? "",
                Silenced: (a) => silenced(a.silenced_by) ?? "no",
                Action: { class: "act", cell: (a) => (a.silenced_by ? null : link(`${PATH}?matcher=${encodeURIComponent(a.key)}#silence-form`, "Silence…")) },
              },
            })
          : null,
        changes: dataTable({
          id: "history-rows",
          rows: changes,
          empty: "None: no alert has been evaluated yet.",
          columns: { Alert: alertLink, Now: level, "Last change": changeOf, Summary: (a) => a.summary ?? "", Silenced: (a) => silenced(a.silenced_by) ?? "" },
          pages: { id: "history-pages", offset: q.changes, pageSize: CHANGES_PAGE, total: states.length, href: (o) => hrefOf(q, { changes: o }, "history") },
        }),
        runsFilter: runsFilter({
          days: q.days,
          source: choice({ label: "Source", name: "source", options: SOURCES, value: q.source }),
          status: choice({ label: "Status", name: "status", options: STATUSES, value: q.status }),
        }),
        runs: dataTable({
          id: "run-rows",
          rows: runs.alerts,
          empty: "None.",
          columns: {
            At: (r) => when(r.at),
            Alert: (r) => alertLink({ key: `${r.source}:${r.name}`, page: pageOfKey.get(`${r.source}:${r.name}`) ?? null }),
            Status: (r) => levelBadge(r.status, r.details),
            Value: (r) => r.value ?? "",
            Summary: (r) => summaryOf(r.details) ?? "",
            Run: (r) => code(r.run_id),
          },
          pages: {
            id: "runs-pages",
            offset: q.runs,
            pageSize: RUNS_PAGE,
            total: runs.total,
            hasMore: runs.pagination.has_more,
            href: (o) => hrefOf(q, { runs: o }, "runs"),
          },
        }),
        runsJson: `${BASE}/export.json?${windowQuery}&limit=${RUNS_PAGE}&offset=${q.runs}`,
        active: silenceTable("silence-rows", active.items, csrf),
        activeMore: active.pagination.has_more,
        ended: silenceTable("ended-rows", ended.items, null),
        endedNewest: q.ended !== null ? hrefOf(q, { ended: null }, "silences") : null,
        endedOlder: ended.pagination.next_cursor !== null ? hrefOf(q, { ended: ended.pagination.next_cursor }, "silences") : null,
        form: { ...form, minUntil: localMinute(now), maxUntil: localMinute(now + MAX_SILENCE_DAYS * 86_400_000) },
        csrf,
      });
    },
    exports: ({ q, windowQuery }) => ({
      links: [
        ["Firing now (JSON)", `${BASE}/firing.json`],
        ["Active silences (JSON)", `${BASE}/silences?state=active`],
        ["Every silence, newest first (JSON, paged)", `${BASE}/silences`],
        [`Evaluations, last ${q.days} days (JSON, paged)`, `${BASE}/export.json?${windowQuery}`],
        [`Alert runs, last ${q.days} days (CSV)`, `${BASE}/runs/export?${windowQuery}`],
        [`Everything of the last ${q.days} days (ZIP: alerts.json, alerts.csv, runs.csv, manifest.json)`, `${BASE}/export.zip?${windowQuery}`],
        ["Export downloads per day (JSON)", `${BASE}/export-usage.json`],
        ["Export downloads per day (CSV)", `${BASE}/export-usage.csv`],
        ["Export downloads per day (PNG chart)", `${BASE}/export-usage.png`],
        ["Export downloads per day (SVG chart)", `${BASE}/export-usage.svg`],
        ["Link-inbox targets: who notices reach (JSON)", "/admin/ops/link-inbox/targets.json"],
      ],
    }),
    forms: [
      form({
        path: "/silences",
        body: {
          matcher: t.String({ maxLength: 200, description: "an alert key <source>:<name>, or a pattern with *" }),
          reason: t.String({ maxLength: 500, description: "why: shown to everyone on call" }),
          hours: str(4, `for this many hours, 1 to ${MAX_HOURS}`),
          until: str(
            40,
            `or until this time (UTC; 2026-04-02T09:00 as a datetime-local input sends it), at most ${MAX_SILENCE_DAYS} days ahead; wins over hours`,
          ),
        },
        summary: "Silence alerts from the alerts page (audited, as POST /admin/ops/alerts-monitor/silences)",
        refusals: { 400: "a bad matcher, no reason, hours out of range, until not in the next 30 days" },
        keep: (b) => ({ matcher: b.matcher, reason: b.reason, hours: b.hours ?? "", until: b.until ?? "" }),
        run: async ({ operator, body: b }) => {
          const matcher = b.matcher.trim();
          if (!/^[\x21-\x7e]+$/.test(matcher))
            throw refusal(
              400,
              "Nothing was changed: the alert key or pattern must be visible characters without spaces, such as digest:403_spike or webhooks:*.",
            );
          const reason = b.reason.trim();
          if (reason === "") throw refusal(400, "Nothing was changed: say why (the reason is shown to everyone on call).");
          const silence = await createSilence(ctx, operator, { matcher, reason, ends_at: endsAtOf(ctx, (b.hours ?? "").trim(), (b.until ?? "").trim()) });
          return { done: "silenced", silence: String(silence.id) };
        },
      }),
      form({
        path: "/silences/:silence_id/end",
        params: { silence_id: intPath() },
        summary: "End a silence now from the alerts page (audited, as …/silences/{id}/expire)",
        refusals: { 404: "no such silence", 409: "it already ended" },
        run: async ({ operator, params }) => ({ done: "ended", silence: String((await expireSilence(ctx, operator, params.silence_id)).id) }),
      }),
    ],
  });
}
