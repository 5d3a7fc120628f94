import { compileHtml } from "../../http/html";

// The incidents page's markup (GET /admin/console/incidents; data from incidents-page.ts). Every value is escaped
// by the template; every href is built by our code. The draft sits in a read-only <textarea>: a person selects
// all of it and copies it, with no JavaScript; its download link fetches the same text as draft.md.

export const INCIDENTS_PATH = "/admin/console/incidents";

export interface IncidentRowView {
  id: number;
  title: string;
  badge: string;
  state: string;
  started: string;
  ended: string;
  source: string;
  components: string;
}

export interface DraftFormView {
  hours: string;
  since: string;
  until: string;
  index: string;
  severity: string;
  context: string;
  template: string;
  source: string;
  maxHours: number;
  maxIndex: number;
  choices: { severity: string[]; context: string[]; template: string[]; source: string[] };
}

export interface IncidentsPageData {
  generatedAt: string;
  open: IncidentRowView[];
  openMore: boolean;
  recent: IncidentRowView[];
  /** "1–20 of 35 resolved." */
  range: string;
  newer: string | null;
  older: string | null;
  form: DraftFormView;
  /** The draft in Markdown, or null when its parameters were refused (draftError says why). */
  draft: string | null;
  draftError: string | null;
  draftQuery: string;
  exports: Array<readonly [string, string]>;
}

const table = `<table class="data"><thead><tr><th>Incident</th><th>State</th><th>Started</th><th>Ended</th><th>Source</th><th>Components</th></tr></thead><tbody>
<% for (const i of rows) { %><tr id="incident-<%= i.id %>"><td data-label="Incident"><a href="/admin/ops/incidents/<%= i.id %>">#<%= i.id %> <%= i.title %></a></td><td data-label="State"><span class="badge <%= i.badge %>"><%= i.state %></span></td><td data-label="Started"><%= i.started %></td><td data-label="Ended"><%= i.ended %></td><td data-label="Source" class="short"><%= i.source %></td><td data-label="Components"><%= i.components %></td></tr>
<% } %></tbody></table>`;

const select = (name: string, label: string) =>
  `<label>${label} <select name="${name}"><% for (const v of it.form.choices.${name}) { %><option<% if (v === it.form.${name}) { %> selected<% } %>><%= v %></option><% } %></select></label>`;

export const incidentsBody = compileHtml<IncidentsPageData>(
  "console-incidents",
  `<style>table.data td.short { overflow-wrap:normal; } textarea.draft { display:block; width:100%; min-height:22em; font:13px/1.4 ui-monospace,SFMono-Regular,Menlo,monospace; border:1px solid var(--line); border-radius:6px; padding:8px 10px; background:var(--bg); white-space:pre-wrap; overflow-wrap:anywhere; } form.filters { display:flex; flex-wrap:wrap; gap:8px 14px; align-items:flex-end; margin:8px 0; } form.filters label { display:flex; flex-direction:column; font-size:13px; color:var(--muted); } form.filters input, form.filters select { font:inherit; padding:4px 8px; border:1px solid var(--line); border-radius:6px; color:var(--fg); }</style>
<h1>Incidents</h1>
<p class="lead">As of <%= it.generatedAt %>; all times UTC. The status page's incidents, automatic and operator-made; open ones first.</p>
<section id="open" class="summary <%= it.open.length ? "attention" : "ready" %>"><p><strong id="open-count"><%= it.open.length %></strong> open.</p></section>
<% if (it.open.length) { const rows = it.open; %><div id="open-rows">${table}</div><% } %>
<% if (it.openMore) { %><p class="muted">More are open than shown: <a href="/admin/ops/incidents?status=open">all of them (JSON)</a>.</p><% } %>
<section id="recent"><h2>Recently resolved</h2>
<% if (it.recent.length === 0) { %><p class="muted" id="recent-none">None.</p><% } else { const rows = it.recent; %><div id="recent-rows">${table}</div><% } %>
<p class="muted" id="recent-pager"><%= it.range %><% if (it.newer !== null) { %> <a id="newer" href="<%= it.newer %>">Newer</a><% } %><% if (it.older !== null) { %> <a id="older" href="<%= it.older %>">Older</a><% } %></p></section>
<section id="draft-section"><h2>Draft</h2>
<p class="muted">A first draft of the incident report in Markdown, from the incidents, errors and failed jobs of the window: select all in the box and copy it into the postmortem or the chat.</p>
<form method="get" action="${INCIDENTS_PATH}#draft-section" class="filters" id="draft-form">
<label>Last hours <input type="number" name="hours" min="1" max="<%= it.form.maxHours %>" value="<%= it.form.hours %>" required></label>
<label>Or since (UTC) <input type="datetime-local" name="since" value="<%= it.form.since %>"></label>
<label>Until (UTC; empty = now) <input type="datetime-local" name="until" value="<%= it.form.until %>"></label>
<label>Incident (0 = newest) <input type="number" name="index" min="0" max="<%= it.form.maxIndex %>" value="<%= it.form.index %>" required></label>
${select("severity", "Severity")}
${select("context", "Timeline")}
${select("template", "Template")}
${select("source", "Reads")}
<button type="submit" id="draft-apply">Draft</button></form>
<% if (it.draftError !== null) { %><p class="error" id="draft-error" role="alert"><%= it.draftError %></p><% } %>
<% if (it.draft !== null) { %><p><textarea class="draft" id="draft" readonly rows="22" aria-label="The incident draft in Markdown"><%= it.draft %></textarea></p>
<p><a id="draft-md" href="/admin/ops/incidents/draft.md?<%= it.draftQuery %>" download="incident-draft.md">Download draft.md</a> · <a id="draft-txt" href="/admin/ops/incidents/draft.txt?<%= it.draftQuery %>">as plain text</a> · <a id="draft-json" href="/admin/ops/incidents/draft.json?<%= it.draftQuery %>">as JSON</a></p><% } %></section>
<section id="exports"><h2>Exports</h2><ul class="exports"><% for (const [label, href] of it.exports) { %><li><a href="<%= href %>"><%= label %></a></li><% } %></ul></section>`,
);
