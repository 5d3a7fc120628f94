import { Elysia } from "elysia";
import type { Guards } from "../../auth/guards";
import { consoleRoute } from "../../auth/console-kit";
import { cells, when } from "../../auth/operator-page";
import type { AppContext } from "../../context";
import { compileHtml, type SafeHtml } from "../../http/html";
import { intPath } from "../../http/params";
import { getIncidentOrThrow } from "../../status/service";
import { alertIssueId } from "../alerts/state";
import { type AlertNoticeRow, alertDetailOrThrow, noticesOf } from "../alerts/views";

// The pages every notice links to: one alert (/admin/ops/alerts-monitor/alerts/<id>) and one incident
// (/admin/ops/incidents/<id>). A person follows the link from a chat on a phone, so they open with the operator
// session cookie as well as the bearer token (without either: a browser is sent 303 to the sign-in form, which comes back here; a script gets 403),
// render on the server (Eta, every value escaped), send no JavaScript and read from 390 px up.

const STYLE = `<style>dl.facts { display:grid; grid-template-columns:max-content minmax(0,1fr); gap:4px 16px; margin:12px 0; } dl.facts dt { color:var(--muted); font-size:13px; } dl.facts dd { margin:0; overflow-wrap:anywhere; } pre.details { white-space:pre-wrap; overflow-wrap:anywhere; font:13px/1.4 ui-monospace,SFMono-Regular,Menlo,monospace; background:var(--bg); border:1px solid var(--line); border-radius:6px; padding:8px 10px; margin:0; }</style>`;

interface Fact {
  label: string;
  value: string | null;
  id: string;
}

const factsHtml = compileHtml<{ facts: Fact[] }>(
  "ops-facts",
  `<dl class="facts"><% for (const f of it.facts) { %><dt><%= f.label %></dt><dd id="<%= f.id %>"><%= f.value ?? "–" %></dd><% } %></dl>`,
);

const noticesHtml = compileHtml<{ rows: Array<AlertNoticeRow & { outcome: string; badge: string; at: string }>; issue: string }>(
  "ops-notices",
  `<section id="notices"><h2>Notices</h2>
<p class="muted">What the link inbox sent about this to the chat targets, newest first (<a id="notices-all" href="/admin/ops/link-inbox?issue_id=<%= encodeURIComponent(it.issue) %>">all of them</a>).</p>
<% if (it.rows.length === 0) { %><p class="muted" id="notices-none">None.</p><% } else { %><table class="data" id="notice-rows"><thead><tr><th>At</th><th>Event</th><th>Target</th><th>Attempt</th><th>Outcome</th><th>Error</th></tr></thead><tbody>
<% for (const r of it.rows) { %><tr><td data-label="At"><%= r.at %></td><td data-label="Event"><code><%= r.event %></code></td><td data-label="Target"><%= r.target || "–" %></td><td data-label="Attempt"><%= r.attempt %></td><td data-label="Outcome"><span class="badge <%= r.badge %>"><%= r.outcome %></span></td><td data-label="Error" class="err"><%= r.error ?? "" %></td></tr>
<% } %></tbody></table><% } %></section>`,
);

function notices(rows: AlertNoticeRow[], issue: string): SafeHtml {
  return noticesHtml({
    issue,
    rows: rows.map((r) => ({
      ...r,
      at: when(r.at)!,
      outcome: r.skip_reason ? `skipped: ${r.skip_reason}` : `${r.status_code_family ?? "?"}${r.status_code ? ` ${r.status_code}` : ""}`,
      badge: r.status_code_family === "2xx" ? "ok" : r.skip_reason ? "warn" : "bad",
    })),
  });
}

interface AlertPageData {
  key: string;
  state: string;
  badge: string;
  firing: boolean;
  headline: string;
  facts: SafeHtml;
  details: string;
  history: Array<{ at: string; status: string; badge: string; value: string | null; summary: string | null; run: string }>;
  notices: SafeHtml;
  links: Array<readonly [string, string]>;
}

const alertBody = compileHtml<AlertPageData>(
  "ops-alert-page",
  `${STYLE}<section id="state" class="summary <%= it.firing ? "attention" : "ready" %>"><p><span class="badge <%= it.badge %>" id="alert-state"><%= it.state %></span> <span id="alert-headline"><%= it.headline %></span></p></section>
<%= it.facts %>
<section id="details-section"><h2>Latest evaluation</h2><pre class="details" id="details"><%= it.details %></pre></section>
<section id="history"><h2>Evaluations</h2>
<table class="data" id="history-rows"><thead><tr><th>At</th><th>Status</th><th>Value</th><th>Summary</th><th>Run</th></tr></thead><tbody>
<% for (const h of it.history) { %><tr><td data-label="At"><%= h.at %></td><td data-label="Status"><span class="badge <%= h.badge %>"><%= h.status %></span></td><td data-label="Value"><%= h.value ?? "" %></td><td data-label="Summary"><%= h.summary ?? "" %></td><td data-label="Run"><code><%= h.run %></code></td></tr>
<% } %></tbody></table></section>
<%= it.notices %>
<section id="links"><h2>More</h2><ul class="exports"><% for (const [label, href] of it.links) { %><li><a href="<%= href %>"><%= label %></a></li><% } %></ul></section>`,
);

const BADGE: Record<string, string> = { ok: "ok", warn: "warn", fail: "bad" };

type AlertDetail = Awaited<ReturnType<typeof alertDetailOrThrow>>;
const back = compileHtml<{ href: string; text: string }>("ops-back", `<p class="muted"><a id="back" href="<%= it.href %>"><%= it.text %></a></p>`);

function alertPageBody({ alert: a, history, notices: rows }: AlertDetail): SafeHtml {
  const firing = a.level !== "ok";
  const headline = firing
    ? `Firing at ${a.level} since ${when(a.fired_at ?? a.since)}${a.silenced_by ? ` — silenced until ${when(a.silenced_by.ends_at)}` : ""}.`
    : a.resolved_at
      ? `Resolved at ${when(a.resolved_at)}${a.fired_at ? `; it had fired at ${when(a.fired_at)}` : ""}.`
      : `Not firing (ok since ${when(a.since)}).`;
  const silence = a.silenced_by
    ? `#${a.silenced_by.id} ${a.silenced_by.matcher} by ${a.silenced_by.created_by} until ${when(a.silenced_by.ends_at)}: ${a.silenced_by.reason}`
    : "no";
  return alertBody({
    key: a.key,
    state: firing ? `firing: ${a.level}` : a.resolved_at ? "resolved" : "ok",
    badge: BADGE[a.level]!,
    firing,
    headline,
    facts: factsHtml({
      facts: [
        { id: "alert-key", label: "Alert", value: a.key },
        { id: "fact-source", label: "Source", value: a.source },
        { id: "fact-name", label: "Name", value: a.name },
        { id: "fact-level", label: "Level", value: a.level },
        { id: "fact-since", label: "Level since", value: when(a.since) },
        { id: "fact-fired", label: "Fired at", value: when(a.fired_at) ?? "never" },
        { id: "fact-resolved", label: "Resolved at", value: when(a.resolved_at) },
        { id: "fact-evaluated", label: "Last evaluated", value: when(a.last_evaluated_at) },
        { id: "fact-value", label: "Value", value: a.value },
        { id: "fact-summary", label: "Summary", value: a.summary },
        { id: "fact-silenced", label: "Silenced", value: silence },
        { id: "fact-notified", label: "Last notice", value: a.notified_level ? `${a.notified_level} at ${when(a.notified_at)}` : "none" },
      ],
    }),
    details: a.details ? JSON.stringify(a.details, null, 2) : "(none)",
    history: history.map((h) => ({ at: when(h.at)!, status: h.status, badge: BADGE[h.status] ?? "", value: h.value, summary: h.summary, run: h.run_id })),
    notices: notices(rows, alertIssueId(a.source, a.name)),
    links: [
      ["Everything firing now (JSON)", "/admin/ops/alerts-monitor/firing.json"],
      ["Silences (JSON)", "/admin/ops/alerts-monitor/silences?state=active"],
      [`Alert runs of ${a.source}, last 7 days (JSON)`, `/admin/ops/alerts-monitor/export.json?source=${encodeURIComponent(a.source)}`],
    ],
  });
}

interface IncidentPageData {
  id: number;
  title: string;
  open: boolean;
  badge: string;
  state: string;
  headline: string;
  facts: SafeHtml;
  checks: Array<{ name: string; level: string; badge: string; summary: string | null }>;
  updates: Array<{ at: string; state: string; severity: string | null; message: string }>;
  notices: SafeHtml;
  issue: string;
}

const incidentBody = compileHtml<IncidentPageData>(
  "ops-incident-page",
  `${STYLE}<section id="state" class="summary <%= it.open ? "attention" : "ready" %>"><p><span class="badge <%= it.badge %>" id="incident-state"><%= it.state %></span> <span id="incident-headline"><%= it.headline %></span></p></section>
<%= it.facts %>
<% if (it.checks.length) { %><section id="checks"><h2>Checks</h2><table class="data"><thead><tr><th>Check</th><th>Level</th><th>Summary</th></tr></thead><tbody>
<% for (const c of it.checks) { %><tr><td data-label="Check"><code><%= c.name %></code></td><td data-label="Level"><span class="badge <%= c.badge %>"><%= c.level %></span></td><td data-label="Summary"><%= c.summary ?? "" %></td></tr>
<% } %></tbody></table></section><% } %>
<section id="updates"><h2>Updates</h2>
<% if (it.updates.length === 0) { %><p class="muted" id="updates-none">No update (the status checks open and close automatic incidents).</p><% } else { %><table class="data" id="update-rows"><thead><tr><th>At</th><th>State</th><th>Severity</th><th>Message</th></tr></thead><tbody>
<% for (const u of it.updates) { %><tr><td data-label="At"><%= u.at %></td><td data-label="State"><%= u.state %></td><td data-label="Severity"><%= u.severity ?? "–" %></td><td data-label="Message"><%= u.message %></td></tr>
<% } %></tbody></table><% } %></section>
<%= it.notices %>`,
);

const SEVERITY_BADGE: Record<string, string> = { warn: "warn", bad: "bad", ok: "ok" };

type IncidentDetail = Awaited<ReturnType<typeof getIncidentOrThrow>>;

function incidentPageBody(i: IncidentDetail, noticeRows: AlertNoticeRow[]): SafeHtml {
  const open = i.status === "open";
  const issue = `incident:${i.id}`;
  return incidentBody({
    id: i.id,
    title: i.title,
    open,
    badge: open ? (SEVERITY_BADGE[i.current_severity ?? i.severity] ?? "warn") : "ok",
    state: open ? `open: ${i.current_severity ?? i.severity}` : "resolved",
    headline: open
      ? `Started ${when(i.started_at)}, open for ${i.duration_minutes} minutes.`
      : `From ${when(i.started_at)} to ${when(i.ended_at)} (${i.duration_minutes} minutes).`,
    facts: factsHtml({
      facts: [
        { id: "fact-source", label: "Source", value: i.source },
        { id: "fact-severity", label: "Peak severity", value: i.severity },
        { id: "fact-current", label: "Current severity", value: i.current_severity },
        { id: "fact-state", label: "State", value: i.state },
        { id: "fact-started", label: "Started", value: when(i.started_at) },
        { id: "fact-ended", label: "Ended", value: when(i.ended_at) },
        { id: "fact-components", label: "Components", value: i.components.join(", ") || null },
        { id: "fact-updated", label: "Last change", value: when(i.updated_at) },
      ],
    }),
    checks: Object.entries(i.checks).map(([name, level]) => ({ name, level, badge: SEVERITY_BADGE[level] ?? "", summary: i.summary[name] ?? null })),
    updates: i.updates.map((u) => ({ at: when(u.created_at)!, state: u.state, severity: u.severity, message: u.message })),
    notices: notices(noticeRows, issue),
    issue,
  });
}

/** The alert and incident pages, composed into operatorPagesRoutes (src/ops/console/config-page.ts). */
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
