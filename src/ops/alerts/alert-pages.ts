import { Elysia } from "elysia";
import type { Guards } from "../../auth/guards";
import { consoleRoute } from "../../console/kit";
import { badge, cells, code, dataTable, facts, when } from "../../console/frame";
import type { AppContext } from "../../context";
import { compileHtml, joinHtml, type SafeHtml } from "../../http/formats/html";
import { intPath } from "../../http/params";
import { getIncidentOrThrow } from "../../status/service";
import { alertIssueId, notConfigured } from "./state";
import { type AlertNoticeRow, alertDetailOrThrow, noticesOf } from "./views";
import { outcomeCell } from "../link-inbox/link-page";

// The pages every notice links to: one alert and one incident. A person follows the link from a chat on a phone, so
// they open with the operator session as well as the token, escape every value, send no JavaScript, read from 390 px up.

/** The page's first lines: its state as a badge and a sentence; attention while it fires or is open. */
const stateHtml = compileHtml<{ kind: string; attention: boolean; badge: string; state: string; headline: string }>(
  "ops-state",
  `<section id="state" class="summary <%= it.attention ? "attention" : "ready" %>"><p><span class="badge <%= it.badge %>" id="<%= it.kind %>-state"><%= it.state %></span> <span id="<%= it.kind %>-headline"><%= it.headline %></span></p></section>`,
);

const noticesHtml = compileHtml<{ issue: string; table: SafeHtml }>(
  "ops-notices",
  `<section id="notices"><h2>Notices</h2>
<p class="muted">What the link inbox sent about this to the chat targets, newest first (<a id="notices-all" href="/admin/ops/link-inbox?issue_id=<%= encodeURIComponent(it.issue) %>">all of them</a>).</p>
<%= it.table %></section>`,
);

const notices = (rows: AlertNoticeRow[], issue: string): SafeHtml =>
  noticesHtml({
    issue,
    table: dataTable({
      id: "notice-rows",
      rows,
      empty: "None.",
      columns: {
        At: (r) => when(r.at),
        Event: (r) => code(r.event),
        Target: (r) => r.target || "–",
        Attempt: (r) => r.attempt,
        Outcome: outcomeCell,
        Error: { cell: (r) => r.error, class: "err" },
      },
    }),
  });

const alertBody = compileHtml<{ head: SafeHtml; details: string; history: SafeHtml; notices: SafeHtml; links: Array<readonly [string, string]> }>(
  "ops-alert-page",
  `<%= it.head %>
<section id="details-section"><h2>Latest evaluation</h2><pre class="block" id="details"><%= it.details %></pre></section>
<section id="history"><h2>Evaluations</h2>
<%= it.history %></section>
<%= it.notices %>
<section id="links"><h2>More</h2><ul class="exports"><% for (const [label, href] of it.links) { %><li><a href="<%= href %>"><%= label %></a></li><% } %></ul></section>`,
);

const BADGE: Record<string, string> = { ok: "ok", warn: "warn", fail: "bad" };

/**
 * An evaluation's level as a badge (here and on the alerts page). A check with nothing to judge in this deployment (a
 * status check that is not configured, e.g. the chain's without TOKEN_MINT) is ok only in that it cannot fire: it
 * reads "not configured", in grey, never a green ok.
 */
export const levelBadge = (level: string, details: string | Record<string, unknown> | null): SafeHtml =>
  level === "ok" && notConfigured(details) ? badge("", "not configured") : badge(BADGE[level] ?? "", level);

type AlertDetail = Awaited<ReturnType<typeof alertDetailOrThrow>>;

function alertPageBody({ alert: a, history, notices: rows }: AlertDetail): SafeHtml {
  const firing = a.level !== "ok";
  const unconfigured = !firing && notConfigured(a.details);
  const headline = unconfigured
    ? "Not configured in this deployment: the check has nothing to judge, so it cannot fire."
    : firing
      ? `Firing at ${a.level} since ${when(a.fired_at ?? a.since)}${a.silenced_by ? ` — silenced until ${when(a.silenced_by.ends_at)}` : ""}.`
      : a.resolved_at
        ? `Resolved at ${when(a.resolved_at)}${a.fired_at ? `; it had fired at ${when(a.fired_at)}` : ""}.`
        : `Not firing (ok since ${when(a.since)}).`;
  const silence = a.silenced_by
    ? `#${a.silenced_by.id} ${a.silenced_by.matcher} by ${a.silenced_by.created_by} until ${when(a.silenced_by.ends_at)}: ${a.silenced_by.reason}`
    : "no";
  return alertBody({
    head: joinHtml([
      stateHtml({
        kind: "alert",
        attention: firing,
        badge: unconfigured ? "" : BADGE[a.level]!,
        state: firing ? `firing: ${a.level}` : unconfigured ? "not configured" : a.resolved_at ? "resolved" : "ok",
        headline,
      }),
      facts({
        facts: [
          ["Alert", a.key, "alert-key"],
          ["Source", a.source, "fact-source"],
          ["Name", a.name, "fact-name"],
          ["Level", a.level, "fact-level"],
          ["Level since", when(a.since), "fact-since"],
          ["Fired at", when(a.fired_at) ?? "never", "fact-fired"],
          ["Resolved at", when(a.resolved_at), "fact-resolved"],
          ["Last evaluated", when(a.last_evaluated_at), "fact-evaluated"],
          ["Value", a.value, "fact-value"],
          ["Summary", a.summary, "fact-summary"],
          ["Silenced", silence, "fact-silenced"],
          ["Last notice", a.notified_level ? `${a.notified_level} at ${when(a.notified_at)}` : "none", "fact-notified"],
        ],
      }),
    ]),
    details: a.details ? JSON.stringify(a.details, null, 2) : "(none)",
    history: dataTable({
      id: "history-rows",
      rows: history,
      columns: {
        At: (h) => when(h.at),
        Status: (h) => levelBadge(h.status, h.details),
        Value: (h) => h.value,
        Summary: (h) => h.summary,
        Run: (h) => code(h.run_id),
      },
    }),
    notices: notices(rows, alertIssueId(a.source, a.name)),
    links: [
      ["Everything firing now (JSON)", "/admin/ops/alerts-monitor/firing.json"],
      ["Silences (JSON)", "/admin/ops/alerts-monitor/silences?state=active"],
      [`Alert runs of ${a.source}, last 7 days (JSON)`, `/admin/ops/alerts-monitor/export.json?source=${encodeURIComponent(a.source)}`],
    ],
  });
}

const incidentBody = compileHtml<{ head: SafeHtml; checks: SafeHtml | null; updates: SafeHtml; notices: SafeHtml }>(
  "ops-incident-page",
  `<%= it.head %>
<% if (it.checks) { %><section id="checks"><h2>Checks</h2><%= it.checks %></section><% } %>
<section id="updates"><h2>Updates</h2>
<%= it.updates %></section>
<%= it.notices %>`,
);

const SEVERITY_BADGE: Record<string, string> = { warn: "warn", bad: "bad", ok: "ok" };

type IncidentDetail = Awaited<ReturnType<typeof getIncidentOrThrow>>;

function incidentPageBody(i: IncidentDetail, noticeRows: AlertNoticeRow[]): SafeHtml {
  const open = i.status === "open";
  const checks = Object.entries(i.checks);
  return incidentBody({
    head: joinHtml([
      stateHtml({
        kind: "incident",
        attention: open,
        badge: open ? (SEVERITY_BADGE[i.current_severity ?? i.severity] ?? "warn") : "ok",
        state: open ? `open: ${i.current_severity ?? i.severity}` : "resolved",
        headline: open
          ? `Started ${when(i.started_at)}, open for ${i.duration_minutes} minutes.`
          : `From ${when(i.started_at)} to ${when(i.ended_at)} (${i.duration_minutes} minutes).`,
      }),
      facts({
        facts: [
          ["Source", i.source, "fact-source"],
          ["Peak severity", i.severity, "fact-severity"],
          ["Current severity", i.current_severity, "fact-current"],
          ["State", i.state, "fact-state"],
          ["Started", when(i.started_at), "fact-started"],
          ["Ended", when(i.ended_at), "fact-ended"],
          ["Components", i.components.join(", ") || null, "fact-components"],
          ["Last change", when(i.updated_at), "fact-updated"],
        ],
      }),
    ]),
    checks: checks.length
      ? dataTable({
          rows: checks,
          columns: {
            Check: ([name]) => code(name),
            Level: ([, level]) => badge(SEVERITY_BADGE[level] ?? "", level),
            Summary: ([name]) => i.summary[name] ?? null,
          },
        })
      : null,
    updates: dataTable({
      id: "update-rows",
      rows: i.updates,
      empty: "No update (the status checks open and close automatic incidents).",
      columns: { At: (u) => when(u.created_at), State: (u) => u.state, Severity: (u) => u.severity ?? "–", Message: (u) => u.message },
    }),
    notices: notices(noticeRows, `incident:${i.id}`),
  });
}

const back = compileHtml<{ href: string; text: string }>("ops-back", `<p class="muted"><a id="back" href="<%= it.href %>"><%= it.text %></a></p>`);

export function alertPagesRoutes(ctx: AppContext, guards: Guards) {
  // An id that is not a number, or names nothing: for a browser, the page with the message and the way back.
  return new Elysia({ name: "herald:ops-alert-pages" })
    .use(
      consoleRoute(ctx, guards, {
        path: "/admin/ops/alerts-monitor/alerts/:alert_id",
        title: "Alert",
        nav: "/admin/console/alerts",
        summary: "One alert (HTML page): its state, latest evaluation, history and the notices sent; where every alert notice links",
        refusals: { 404: "not_found: no such alert" },
        params: { alert_id: intPath() },
        load: async (q) => (q.alert_id === undefined ? null : await alertDetailOrThrow(ctx, q.alert_id)),
        view: (d) => cells(back({ href: "/admin/console/alerts", text: "← Alerts: everything firing, silences" }), d ? alertPageBody(d) : null),
        heading: (d) => (d ? `Alert ${d.alert.key}` : "Alert"),
      }),
    )
    .use(
      consoleRoute(ctx, guards, {
        path: "/admin/ops/incidents/:incident_id",
        title: "Incident",
        nav: "/admin/console/incidents",
        summary: "One status incident (HTML page): state, severity, checks, updates and the notices sent; where every incident notice links",
        refusals: { 404: "not_found: no such incident" },
        params: { incident_id: intPath() },
        async load(q) {
          if (q.incident_id === undefined) return null;
          const i = await getIncidentOrThrow(ctx, q.incident_id);
          return { i, notices: await noticesOf(ctx, `incident:${i.id}`) };
        },
        view: (d) =>
          cells(back({ href: "/admin/console/incidents", text: "← Incidents: all of them, the draft" }), d ? incidentPageBody(d.i, d.notices) : null),
        heading: (d) => (d ? `Incident #${d.i.id}: ${d.i.title}` : "Incident"),
      }),
    );
}
