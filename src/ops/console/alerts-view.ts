import type { SafeHtml } from "../../http/html";
import { compileHtml } from "../../http/html";

// The alerts page's markup (GET /admin/console/alerts; the data comes from alerts-data.ts): every value is
// escaped by the template, every href is built by our code. The ids are what the tests and a person's bookmarks
// hold on to: #firing, #history, #runs, #silences, #silence-form, #exports.

export const ALERTS_PATH = "/admin/console/alerts";

export interface AlertRowView {
  key: string;
  page: string;
  level: string;
  badge: string;
  since: string;
  summary: string;
  /** "#3 by admin:ops#1 until … UTC: why", or null when no silence holds it. */
  silenced: string | null;
}

export interface ChangeRowView extends AlertRowView {
  change: string;
}

export interface RunRowView {
  at: string;
  key: string;
  /** The alert's page, or null for a key the state machine has not seen (a row written by hand). */
  page: string | null;
  status: string;
  badge: string;
  value: string;
  summary: string;
  run: string;
}

export interface SilenceRowView {
  id: number;
  matcher: string;
  reason: string;
  by: string;
  at: string;
  until: string;
  state: string;
  badge: string;
}

export interface Pager {
  /** "1–25 of 80": what this page shows. */
  range: string;
  newer: string | null;
  older: string | null;
}

export interface AlertsPageData {
  generatedAt: string;
  notice: SafeHtml;
  firing: AlertRowView[];
  changes: ChangeRowView[];
  changesPager: Pager;
  runs: RunRowView[];
  runsPager: Pager;
  runsJson: string;
  runsFilter: { days: number; maxDays: number; source: string; status: string; sources: string[]; statuses: string[] };
  active: SilenceRowView[];
  activeMore: boolean;
  ended: SilenceRowView[];
  endedNewest: string | null;
  endedOlder: string | null;
  form: { matcher: string; reason: string; hours: string; until: string; maxHours: number; minUntil: string; maxUntil: string };
  csrf: string | null;
  exports: Array<readonly [string, string]>;
}

const csrf = `<% if (it.csrf !== null) { %><input type="hidden" name="csrf_token" value="<%= it.csrf %>"><% } %>`;

const pager = (id: string, p: string) =>
  `<p class="muted" id="${id}-pager"><%= ${p}.range %><% if (${p}.newer !== null) { %> · <a id="${id}-newer" href="<%= ${p}.newer %>">Newer</a><% } %><% if (${p}.older !== null) { %> · <a id="${id}-older" href="<%= ${p}.older %>">Older</a><% } %></p>`;

const silenceTable = (id: string, rows: string, withEnd: boolean) =>
  `<table class="data" id="${id}"><thead><tr><th>Silence</th><th>State</th><th>Matches</th><th>Why</th><th>By</th><th>Until</th>${withEnd ? "<th></th>" : ""}</tr></thead><tbody>
<% for (const s of ${rows}) { %><tr id="silence-<%= s.id %>"><td data-label="Silence">#<%= s.id %></td><td data-label="State"><span class="badge <%= s.badge %>"><%= s.state %></span></td><td data-label="Matches"><code><%= s.matcher %></code></td><td data-label="Why"><%= s.reason %></td><td data-label="By"><%= s.by %> at <%= s.at %></td><td data-label="Until"><%= s.until %></td>${
    withEnd
      ? `<td data-label="Action" class="act"><form class="inline" method="post" action="${ALERTS_PATH}/silences/<%= s.id %>/end">${csrf}<button type="submit" id="end-<%= s.id %>">End now</button></form></td>`
      : ""
  }</tr>
<% } %></tbody></table>`;

export const alertsBody = compileHtml<AlertsPageData>(
  "console-alerts",
  `<style>table.data td.act { white-space:nowrap; } form.filters, form.silence { display:flex; flex-wrap:wrap; gap:8px 14px; align-items:flex-end; margin:8px 0; } form.silence label { display:flex; flex-direction:column; font-size:13px; color:var(--muted); } form.silence label.wide { flex:1 1 16em; } form.silence input { font:inherit; padding:4px 8px; border:1px solid var(--line); border-radius:6px; color:var(--fg); }</style>
<h1>Alerts</h1>
<p class="lead">As of <%= it.generatedAt %>; all times UTC. An alert fires while its latest evaluation is warn or fail; a silence holds its notices back, never the alert itself.</p>
<%= it.notice %>
<section id="firing" class="summary <%= it.firing.length ? "attention" : "ready" %>"><p><strong id="firing-count"><%= it.firing.length %></strong> <%= it.firing.length === 1 ? "alert fires" : "alerts fire" %> now.</p></section>
<% if (it.firing.length) { %><table class="data" id="firing-rows"><thead><tr><th>Alert</th><th>Level</th><th>Since</th><th>Summary</th><th>Silenced</th><th></th></tr></thead><tbody>
<% for (const a of it.firing) { %><tr><td data-label="Alert"><a href="<%= a.page %>"><code><%= a.key %></code></a></td><td data-label="Level"><span class="badge <%= a.badge %>"><%= a.level %></span></td><td data-label="Since"><%= a.since %></td><td data-label="Summary"><%= a.summary %></td><td data-label="Silenced"><%= a.silenced ?? "no" %></td><td data-label="Action" class="act"><% if (a.silenced === null) { %><a href="${ALERTS_PATH}?matcher=<%= encodeURIComponent(a.key) %>#silence-form">Silence…</a><% } %></td></tr>
<% } %></tbody></table><% } %>
<section id="history"><h2>Recent changes</h2>
<p class="muted">Each alert once, the latest change (fired, escalated, resolved) first.</p>
<% if (it.changes.length === 0) { %><p class="muted" id="history-none">None: no alert has been evaluated yet.</p><% } else { %><table class="data" id="history-rows"><thead><tr><th>Alert</th><th>Now</th><th>Last change</th><th>Summary</th><th>Silenced</th></tr></thead><tbody>
<% for (const a of it.changes) { %><tr><td data-label="Alert"><a href="<%= a.page %>"><code><%= a.key %></code></a></td><td data-label="Now"><span class="badge <%= a.badge %>"><%= a.level %></span></td><td data-label="Last change"><%= a.change %></td><td data-label="Summary"><%= a.summary %></td><td data-label="Silenced"><%= a.silenced ?? "" %></td></tr>
<% } %></tbody></table>
${pager("history", "it.changesPager")}<% } %></section>
<section id="runs"><h2>Evaluations</h2>
<p class="muted">Every evaluation the monitors recorded, newest first (as export.json pages them).</p>
<form method="get" action="${ALERTS_PATH}#runs" class="filters" id="runs-form"><label>Last <input type="number" name="days" min="1" max="<%= it.runsFilter.maxDays %>" value="<%= it.runsFilter.days %>" required> days</label>
<label>Source <select name="source"><% for (const s of it.runsFilter.sources) { %><option<% if (s === it.runsFilter.source) { %> selected<% } %>><%= s %></option><% } %></select></label>
<label>Status <select name="status"><% for (const s of it.runsFilter.statuses) { %><option<% if (s === it.runsFilter.status) { %> selected<% } %>><%= s %></option><% } %></select></label>
<button type="submit" id="runs-apply">Show</button></form>
<% if (it.runs.length === 0) { %><p class="muted" id="runs-none">None.</p><% } else { %><table class="data" id="run-rows"><thead><tr><th>At</th><th>Alert</th><th>Status</th><th>Value</th><th>Summary</th><th>Run</th></tr></thead><tbody>
<% for (const r of it.runs) { %><tr><td data-label="At"><%= r.at %></td><td data-label="Alert"><% if (r.page !== null) { %><a href="<%= r.page %>"><code><%= r.key %></code></a><% } else { %><code><%= r.key %></code><% } %></td><td data-label="Status"><span class="badge <%= r.badge %>"><%= r.status %></span></td><td data-label="Value"><%= r.value %></td><td data-label="Summary"><%= r.summary %></td><td data-label="Run"><code><%= r.run %></code></td></tr>
<% } %></tbody></table><% } %>
${pager("runs", "it.runsPager")}<p class="muted"><a id="runs-json" href="<%= it.runsJson %>">These evaluations as JSON</a></p></section>
<section id="silences"><h2>Silences</h2>
<h3>Active</h3>
<% if (it.active.length === 0) { %><p class="muted" id="active-none">None.</p><% } else { %>${silenceTable("silence-rows", "it.active", true)}<% if (it.activeMore) { %><p class="muted">More are active than shown: <a href="/admin/ops/alerts-monitor/silences?state=active">all of them (JSON)</a>.</p><% } %><% } %>
<h3>Recently ended</h3>
<% if (it.ended.length === 0) { %><p class="muted" id="ended-none">None.</p><% } else { %>${silenceTable("ended-rows", "it.ended", false)}<% } %>
<% if (it.endedNewest !== null || it.endedOlder !== null) { %><p class="muted"><% if (it.endedNewest !== null) { %><a id="ended-newest" href="<%= it.endedNewest %>">Newest</a><% } %><% if (it.endedNewest !== null && it.endedOlder !== null) { %> · <% } %><% if (it.endedOlder !== null) { %><a id="ended-older" href="<%= it.endedOlder %>">Older</a><% } %></p><% } %>
<h3>Add a silence</h3>
<p class="muted">It holds back the notices of every alert whose key matches, until it ends (at most <%= it.form.maxHours %> hours ahead) or someone ends it here.</p>
<form method="post" action="${ALERTS_PATH}/silences" class="silence" id="silence-form">${csrf}
<label class="wide">Alert key or pattern <input name="matcher" maxlength="200" required value="<%= it.form.matcher %>" placeholder="digest:403_spike or webhooks:*"></label>
<label class="wide">Why (shown to everyone on call) <input name="reason" maxlength="500" required value="<%= it.form.reason %>"></label>
<label>For hours <input type="number" name="hours" min="1" max="<%= it.form.maxHours %>" value="<%= it.form.hours %>"></label>
<label>Or until (UTC; wins over hours) <input type="datetime-local" name="until" min="<%= it.form.minUntil %>" max="<%= it.form.maxUntil %>" value="<%= it.form.until %>"></label>
<button type="submit" class="primary" id="silence">Silence</button></form></section>
<section id="exports"><h2>Exports</h2><ul class="exports"><% for (const [label, href] of it.exports) { %><li><a href="<%= href %>"><%= label %></a></li><% } %></ul></section>`,
);
