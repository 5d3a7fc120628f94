import { type Notice, notice, when } from "../../auth/console-kit";
import { compileHtml, type SafeHtml } from "../../http/html";
import type { AnomalyLine, RunLine } from "./data";
import { TRIAGE_STATUSES } from "../triage";

// The audit-runs page's HTML: the "run audit now" form, the runs (newest first, paged), the selected run's
// anomalies with their triage and a triage form each, and every audit export. Values are escaped by the template.

export const PATH = "/admin/console/audit-runs";
export const PUBLIC = "/transparency/audit-anomalies";

const VERDICT_BADGE: Record<string, string> = { ok: "ok", warn: "warn", bad: "bad", failed: "bad", running: "", incomplete: "warn" };
const SEVERITY_BADGE: Record<string, string> = { low: "", medium: "warn", high: "bad", critical: "bad" };

interface RunView extends RunLine {
  href: string;
  selected: boolean;
  badge: string;
  startedText: string;
  finishedText: string;
}

interface AnomalyView extends AnomalyLine {
  badge: string;
  triageText: string;
  etaValue: string;
}

interface PageData {
  generatedAt: string;
  canRun: boolean;
  runs: RunView[];
  runsTotal: number;
  runsNewer: string | null;
  runsOlder: string | null;
  selected: { id: number; label: string; verdict: string; complete: boolean; error: string | null } | null;
  anomalies: AnomalyView[];
  anomaliesTotal: number;
  anomaliesFrom: number;
  anomaliesNewer: string | null;
  anomaliesOlder: string | null;
  statuses: readonly string[];
  back: { run: string; runs_offset: string; offset: string };
  csrf: string | null;
  exports: Array<readonly [string, string]>;
  notice: SafeHtml;
}

const csrf = `<% if (it.csrf !== null) { %><input type="hidden" name="csrf_token" value="<%= it.csrf %>"><% } %>`;
const back = `<input type="hidden" name="run" value="<%= it.back.run %>"><input type="hidden" name="runs_offset" value="<%= it.back.runs_offset %>"><input type="hidden" name="offset" value="<%= it.back.offset %>">`;

const body = compileHtml<PageData>(
  "console-audit-runs",
  `<style>details.act form p { margin:4px 0; } details.act textarea { width:100%; }
#run-rows td[data-label=Trigger], #run-rows td[data-label=Run] { white-space:nowrap; }
#anomaly-rows td[data-label=Anomaly] { min-width:11em; } #anomaly-rows td[data-label=Triage] { min-width:12em; }</style>
<h1>Audit runs</h1>
<p class="lead">As of <%= it.generatedAt %>; all times UTC. Each run checks the token's synced transactions and chain snapshots against the published rules (glossary.json); an anomaly is triaged here, and the public sees its triage under ${PUBLIC}.</p>
<%= it.notice %>
<section id="run-now"><% if (it.canRun) { %><form method="post" action="${PATH}/run" class="inline">${csrf}<button type="submit" class="primary" id="run-audit">Run audit now</button></form> <span class="muted">The audit-anomalies job, as <code>POST /admin/jobs/audit-anomalies/run</code>; it also runs every 15 minutes.</span><% } else { %><p class="muted" id="run-disabled">TOKEN_MINT is not set: there is nothing to audit, so no run can be started.</p><% } %></section>
<section id="runs"><h2>Runs</h2>
<% if (it.runs.length === 0) { %><p class="muted" id="runs-none"><%= it.runsTotal ? "None on this page." : "None. The audit runs after the first chain snapshot of TOKEN_MINT." %></p><% } else { %><p class="muted" id="runs-count"><%= it.runsTotal %> <%= it.runsTotal === 1 ? "run" : "runs" %>, newest first; pick one to see its anomalies.</p>
<table class="data" id="run-rows"><thead><tr><th>Run</th><th>Started</th><th>Trigger</th><th>Verdict</th><th>Anomalies by severity</th><th>Rows examined</th><th>Finished</th></tr></thead><tbody>
<% for (const r of it.runs) { %><tr id="run-<%= r.id %>"><td data-label="Run"><a href="<%= r.href %>"<% if (r.selected) { %> aria-current="true"<% } %>>#<%= r.id %></a><% if (r.selected) { %> <span class="muted">(shown)</span><% } %></td><td data-label="Started"><%= r.startedText %></td><td data-label="Trigger"><%= r.trigger %></td><td data-label="Verdict"><span class="badge <%= r.badge %>"><%= r.verdict %></span><% if (r.error) { %> <span class="muted"><%= r.error %></span><% } %></td><td data-label="Anomalies by severity"><% if (r.anomalous === 0) { %>none<% } else { %><%= r.anomalous %>: <% for (const s of ["critical", "high", "medium", "low"]) { %><% if (r.severities[s] > 0) { %><span class="badge <%= s === "medium" ? "warn" : s === "low" ? "" : "bad" %>"><%= s %> <%= r.severities[s] %></span> <% } %><% } %><% } %></td><td data-label="Rows examined"><%= r.rows %> (<%= r.transactions %> transactions)</td><td data-label="Finished"><%= r.finishedText %></td></tr>
<% } %></tbody></table><% } %>
<% if (it.runsNewer !== null || it.runsOlder !== null) { %><p id="runs-pages"><% if (it.runsNewer !== null) { %><a id="runs-newer" href="<%= it.runsNewer %>">← Newer runs</a> <% } %><% if (it.runsOlder !== null) { %><a id="runs-older" href="<%= it.runsOlder %>">Older runs →</a><% } %></p><% } %></section>
<section id="anomalies"><h2>Anomalies<% if (it.selected) { %> of run #<%= it.selected.id %> (<%= it.selected.label %>)<% } %></h2>
<% if (it.selected && !it.selected.complete) { %><p class="muted" id="run-incomplete">This run is <%= it.selected.verdict %><%= it.selected.error ? ": " + it.selected.error : "" %>. Its rows are not published as a verdict; the next complete run examines everything again.</p><% } %>
<% if (it.anomalies.length === 0) { %><p class="muted" id="anomalies-none">None<%= it.selected ? (it.anomaliesTotal ? " on this page" : "") : ": no complete run yet" %>.</p><% } else { %><p class="muted" id="anomalies-count"><%= it.anomaliesTotal %> anomalous <%= it.anomaliesTotal === 1 ? "row" : "rows" %>, most severe first<% if (it.anomaliesTotal > it.anomalies.length) { %>; <%= it.anomaliesFrom %>–<%= it.anomaliesFrom + it.anomalies.length - 1 %> shown<% } %>.</p>
<table class="data" id="anomaly-rows"><thead><tr><th>Anomaly</th><th>Subject</th><th>Found</th><th>Expected</th><th>Severity</th><th>Triage</th></tr></thead><tbody>
<% for (const a of it.anomalies) { %><tr id="sig-<%= a.signature %>"><td data-label="Anomaly"><% for (const t of a.types) { %><code><%= t %></code> <% } %></td><td data-label="Subject"><%= a.subject %></td><td data-label="Found"><%= a.found %></td><td data-label="Expected"><%= a.expected %></td><td data-label="Severity"><span class="badge <%= a.badge %>"><%= a.severity %></span></td>
<td data-label="Triage"><span class="triage"><%= a.triageText %></span><details class="act"><summary>Triage…</summary><form method="post" action="${PATH}/triage/<%= encodeURIComponent(a.signature) %>">${csrf}${back}
<p><label>Status <select name="status"><% for (const s of it.statuses) { %><option<%= s === (a.triage ? a.triage.status : "investigating") ? " selected" : "" %>><%= s %></option><% } %></select></label></p><p><label>Owner <input name="owner" maxlength="100" required value="<%= a.triage ? a.triage.owner : "" %>"></label></p><p><label>ETA (UTC) <input name="eta_utc" maxlength="30" placeholder="2026-05-01 or 2026-05-01T12:00:00Z" value="<%= a.etaValue %>"></label></p><p><label>Note <textarea name="note" maxlength="2000" rows="2"><%= a.triage && a.triage.note ? a.triage.note : "" %></textarea></label></p><p><button type="submit" id="triage-<%= a.signature %>">Save triage</button></p></form></details></td></tr>
<% } %></tbody></table><% } %>
<% if (it.anomaliesNewer !== null || it.anomaliesOlder !== null) { %><p id="anomaly-pages"><% if (it.anomaliesNewer !== null) { %><a id="anomalies-prev" href="<%= it.anomaliesNewer %>">← More severe</a> <% } %><% if (it.anomaliesOlder !== null) { %><a id="anomalies-next" href="<%= it.anomaliesOlder %>">Less severe →</a><% } %></p><% } %></section>
<section id="exports"><h2>Exports</h2><ul class="exports"><% for (const [label, href] of it.exports) { %><li><a href="<%= href %>"><%= label %></a></li><% } %></ul></section>`,
);

export interface ViewInput {
  now: string;
  canRun: boolean;
  runs: RunLine[];
  runsTotal: number;
  runsOffset: number;
  runsPage: number;
  runsHasMore: boolean;
  selected: { id: number; label: string; verdict: string; complete: boolean; error: string | null } | null;
  /** The run the URL named (?run=), kept in links; null when the page shows the default (newest complete) run. */
  runParam: string | null;
  anomalies: AnomalyLine[];
  anomaliesTotal: number;
  offset: number;
  anomaliesPage: number;
  anomaliesHasMore: boolean;
  csrf: string | null;
  notice: Notice;
}

/** `PATH?run=…&runs_offset=…&offset=…#anchor` with the empty and zero parts left out. */
export function pageHref(p: { run?: string | null; runs_offset?: number; offset?: number }, anchor = ""): string {
  const q = new URLSearchParams();
  if (p.run) q.set("run", p.run);
  if (p.runs_offset) q.set("runs_offset", String(p.runs_offset));
  if (p.offset) q.set("offset", String(p.offset));
  const s = q.toString();
  return `${PATH}${s ? `?${s}` : ""}${anchor}`;
}

export function auditRunsBody(v: ViewInput): SafeHtml {
  const sel = v.selected;
  const q = sel ? `?run=${sel.id}` : "";
  const runLink = (runs_offset: number) => pageHref({ run: v.runParam, runs_offset }, "#runs");
  const anomalyLink = (offset: number) => pageHref({ run: v.runParam, runs_offset: v.runsOffset, offset }, "#anomalies");
  return body({
    generatedAt: when(v.now)!,
    canRun: v.canRun,
    runs: v.runs.map((r) => ({
      ...r,
      href: pageHref({ run: String(r.id), runs_offset: v.runsOffset }, "#anomalies"),
      selected: sel?.id === r.id,
      badge: VERDICT_BADGE[r.verdict] ?? "",
      startedText: when(r.started)!,
      finishedText: when(r.finished) ?? "–",
    })),
    runsTotal: v.runsTotal,
    runsNewer: v.runsOffset > 0 ? runLink(Math.max(0, v.runsOffset - v.runsPage)) : null,
    runsOlder: v.runsHasMore ? runLink(v.runsOffset + v.runs.length) : null,
    selected: sel,
    anomalies: v.anomalies.map((a) => ({
      ...a,
      badge: SEVERITY_BADGE[a.severity] ?? "warn",
      triageText: a.triage
        ? `${a.triage.status}, owner ${a.triage.owner}${a.triage.eta ? `, ETA ${when(a.triage.eta)}` : ""}${a.triage.note ? ` — ${a.triage.note}` : ""} (by ${a.triage.by}, ${when(a.triage.at)})`
        : "untriaged",
      etaValue: a.triage?.eta ? `${a.triage.eta.slice(0, 19)}Z` : "",
    })),
    anomaliesTotal: v.anomaliesTotal,
    anomaliesFrom: v.offset + 1,
    anomaliesNewer: v.offset > 0 ? anomalyLink(Math.max(0, v.offset - v.anomaliesPage)) : null,
    anomaliesOlder: v.anomaliesHasMore ? anomalyLink(v.offset + v.anomalies.length) : null,
    statuses: TRIAGE_STATUSES,
    back: { run: v.runParam ?? "", runs_offset: String(v.runsOffset), offset: String(v.offset) },
    csrf: v.csrf,
    exports: [
      ["This run's summary and top anomalies (JSON)", `${PUBLIC}/summary.json${q}`],
      ["Runs with their aggregates (JSON)", `${PUBLIC}/runs.json${q}`],
      ["Trend up to this run (JSON)", `${PUBLIC}/trend.json${q}`],
      ["Whether this run alerts (JSON)", `${PUBLIC}/alerts.json${q}`],
      ["Whether this run alerts (CSV)", `${PUBLIC}/alerts.csv${q}`],
      ["This run against the complete run before it (JSON)", `${PUBLIC}/diff/export.json${q}`],
      ["This run against the complete run before it (CSV)", `${PUBLIC}/diff/export${q}`],
      ["The previous and latest complete runs side by side (JSON)", `${PUBLIC}/diff/compare.json`],
      ["The previous and latest complete runs side by side (CSV)", `${PUBLIC}/diff/compare.csv`],
      ["Every row of this run (JSON)", `${PUBLIC}/export.json${q}`],
      ["Every row of this run (CSV)", `${PUBLIC}/export${q}`],
      ["Triage of every anomaly (JSON)", `${PUBLIC}/triage.json`],
      ["Threshold history (JSON)", `${PUBLIC}/threshold-history.json`],
      ["Declared movements, public (JSON)", `${PUBLIC}/declared-movements.json`],
      ["Declared movements, operators' view (JSON)", "/admin/transparency/declared-movements"],
      ["Glossary: every anomaly type and its rule (JSON)", `${PUBLIC}/glossary.json`],
      ["Schema registry of these answers (JSON)", `${PUBLIC}/schema-registry.json`],
    ],
    notice: notice(v.notice),
  });
}
