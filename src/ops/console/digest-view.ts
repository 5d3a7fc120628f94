import { type Notice, notice, when } from "../../auth/console-kit";
import { compileHtml, type SafeHtml } from "../../http/html";
import type { SuppressionRule } from "../digest/suppressions";
import type { Digest } from "../digest/service";

// The 403 digest page's markup (src/ops/console/digest-page.ts has the routes and the forms): a finding table
// used twice — the findings shown, then those an active rule hid — whose rows share one shape, so each finding
// carries its suppression state in the same column; then the rules with their forms, and the exports.

export const PAGE_PATH = "/admin/console/403-digest";
export const DIGEST_BASE = "/admin/ops/403-digest";

export interface FindingRow {
  kind: string;
  badge: string;
  dimension: string;
  value: string;
  span: string;
  observed: number;
  baseline: string;
  ratio: string;
  why: string;
  /** The rule that hid it (an anchor on this page), or null when it is shown. */
  ruleId: number | null;
  /** What the suppression column says after the rule's link: the rule's state, end and reason. */
  suppression: string;
}

const findingTable = compileHtml<{ id: string; rows: FindingRow[] }>(
  "console-digest-findings",
  `<table class="data" id="<%= it.id %>"><thead><tr><th>Kind</th><th>Dimension</th><th>Value</th><th>Hours</th><th>403s</th><th>Baseline</th><th>Ratio</th><th>Suppression</th><th>Why</th></tr></thead><tbody>
<% for (const f of it.rows) { %><tr><td data-label="Kind"><span class="badge <%= f.badge %>"><%= f.kind %></span></td><td data-label="Dimension"><%= f.dimension %></td><td data-label="Value"><code><%= f.value || "(none)" %></code></td><td data-label="Hours"><%= f.span %></td><td data-label="403s"><%= f.observed %></td><td data-label="Baseline"><%= f.baseline %></td><td data-label="Ratio"><%= f.ratio %></td><td data-label="Suppression"><% if (f.ruleId === null) { %><span class="muted"><%= f.suppression %></span><% } else { %><a href="#rule-<%= f.ruleId %>">hidden by rule #<%= f.ruleId %></a> <%= f.suppression %><% } %></td><td data-label="Why"><%= f.why %></td></tr>
<% } %></tbody></table>`,
);

export interface RuleRow extends SuppressionRule {
  badge: string;
  expires: string;
  match: string;
}

export interface PageData {
  generatedAt: string;
  hours: number;
  mode: string;
  modes: readonly string[];
  chart: string;
  /** The same chart drawn for a phone (narrower, taller): picked by the browser through <picture>, no script. */
  chartNarrow: string;
  totals: { requests: number; forbidden: number; suppressed: number };
  coverage: string | null;
  findingsTotal: number;
  findingsShown: number;
  findings: SafeHtml | null;
  suppressedTotal: number;
  suppressed: SafeHtml | null;
  rules: RuleRow[];
  rulesMore: boolean;
  rulesShown: number;
  csrf: string | null;
  exports: Array<readonly [string, string]>;
  notice: SafeHtml;
}

const body = compileHtml<PageData>(
  "console-digest",
  `<h1>403 digest</h1>
<p class="lead">As of <%= it.generatedAt %>; all times UTC. The last <%= it.hours %> hours of 403 answers against a <code><%= it.mode %></code> baseline.</p>
<%= it.notice %>
<form method="get" action="${PAGE_PATH}" id="window" class="filters"><p><label>Hours (1–168) <input type="number" name="hours" min="1" max="168" step="1" value="<%= it.hours %>" required></label>
<label>Baseline <select name="baseline_mode"><% for (const m of it.modes) { %><option<%= m === it.mode ? " selected" : "" %>><%= m %></option><% } %></select></label> <button type="submit" id="apply">Show</button></p></form>
<section id="overview" class="summary <%= it.findingsTotal ? "attention" : "ready" %>"><p><strong id="findings-total"><%= it.findingsTotal %></strong> <%= it.findingsTotal === 1 ? "finding" : "findings" %> · <span id="totals"><%= it.totals.forbidden %> 403s of <%= it.totals.requests %> requests, <%= it.totals.suppressed %> suppressed by rules</span></p>
<% if (it.coverage) { %><p class="muted" id="coverage"><%= it.coverage %></p><% } %></section>
<section id="trend"><h2>Trend</h2><p><picture><source media="(max-width: 600px)" srcset="<%= it.chartNarrow %>" width="360" height="320"><img id="trend-chart" src="<%= it.chart %>" alt="403s per hour against the baseline over the last <%= it.hours %> hours" style="max-width:100%;height:auto" width="960" height="420"></picture></p></section>
<section id="findings"><h2>Findings</h2>
<% if (it.findings === null) { %><p class="muted" id="findings-none">None: no spike, new path or new client above the thresholds.</p><% } else { %><%= it.findings %><% if (it.findingsShown < it.findingsTotal) { %><p class="muted">The first <%= it.findingsShown %> of <%= it.findingsTotal %> shown; every one is in the exports.</p><% } %><% } %>
<h3 id="suppressed">Hidden by suppression rules (<%= it.suppressedTotal %>)</h3>
<% if (it.suppressed === null) { %><p class="muted" id="suppressed-none">None.</p><% } else { %><%= it.suppressed %><% } %></section>
<section id="rules"><h2>Suppression rules</h2>
<p class="muted">Known 403 noise kept out of the findings: a route glob and/or a partner key and/or a client prefix, with a reason, an owner and an expiry (at most 90 days). Every change is audited.</p>
<% if (it.rules.length === 0) { %><p class="muted" id="rules-none">None.</p><% } else { %><table class="data" id="rule-rows"><thead><tr><th>Rule</th><th>State</th><th>Matches</th><th>Reason</th><th>Owner</th><th>Expires</th><th>Action</th></tr></thead><tbody>
<% for (const r of it.rules) { %><tr id="rule-<%= r.id %>"><td data-label="Rule">#<%= r.id %></td><td data-label="State"><span class="badge <%= r.badge %>"><%= r.state %></span></td><td data-label="Matches"><code><%= r.match %></code></td><td data-label="Reason"><%= r.reason %></td><td data-label="Owner"><%= r.owner %></td><td data-label="Expires"><%= r.expires %></td><td data-label="Action"><% if (r.state === "active") { %><form class="inline" method="post" action="${PAGE_PATH}/rules/<%= r.id %>/end"><% if (it.csrf !== null) { %><input type="hidden" name="csrf_token" value="<%= it.csrf %>"><% } %><button type="submit" id="end-<%= r.id %>">End now</button></form><% } else { %><span class="muted">–</span><% } %></td></tr>
<% } %></tbody></table><% if (it.rulesMore) { %><p class="muted">Newest <%= it.rulesShown %> shown; every rule is in the export below.</p><% } %><% } %>
<h3>Add a rule</h3>
<form method="post" action="${PAGE_PATH}/rules" id="add-rule" class="stack">
<% if (it.csrf !== null) { %><input type="hidden" name="csrf_token" value="<%= it.csrf %>"><% } %>
<p><label>Route glob <input name="path_pattern" maxlength="200" placeholder="/api/partner/users/*"></label></p>
<p><label>Partner key id <input name="partner_key_id" maxlength="64"></label></p>
<p><label>Client prefix <input name="client_prefix" maxlength="64" placeholder="203.0.113.0/24"></label></p>
<p><label>Reason <input name="reason" maxlength="500" required></label></p>
<p><label>Owner <input name="owner" maxlength="120" placeholder="you, by default"></label></p>
<p><label>Ends in days (1–90) <input type="number" name="expires_in_days" min="1" max="90" step="1" value="7" required></label></p>
<p class="muted">At least one of route glob, partner key id and client prefix; a rule matches a 403 when every field it sets matches.</p>
<p><button type="submit" class="primary" id="add">Add rule</button></p></form></section>
<section id="exports"><h2>Exports</h2><ul class="exports"><% for (const [label, href] of it.exports) { %><li><a href="<%= href %>"><%= label %></a></li><% } %></ul></section>`,
);

const KIND_BADGE: Record<string, string> = { sustained_spike: "bad", spike: "warn", new_path: "warn", new_client: "warn" };
const STATE_BADGE: Record<string, string> = { active: "ok", expired: "", revoked: "" };

type DigestFinding = Digest["findings"][number];

function rowOf(f: DigestFinding, ruleId: number | null, suppression: string): FindingRow {
  return {
    kind: f.kind,
    badge: KIND_BADGE[f.kind] ?? "warn",
    dimension: f.dimension,
    value: f.value,
    span: f.first_hour === f.last_hour ? `${f.first_hour}` : `${f.first_hour} – ${f.last_hour} (${f.hours})`,
    observed: f.observed,
    baseline: String(f.baseline),
    ratio: String(f.ratio),
    why: f.why,
    ruleId,
    suppression,
  };
}

/** What the suppression column says of a hidden finding: its rule's state, end and reason (when that rule is at hand). */
function hiddenBy(rule: SuppressionRule | undefined): string {
  return rule ? `(${rule.state} until ${when(rule.expires_at)}: ${rule.reason})` : "";
}

/** The findings as two tables (null when empty): shown ones ("not suppressed"), then the ones a rule hid. */
export function findingTables(d: Digest, rulesById: ReadonlyMap<number, SuppressionRule>) {
  const shown = d.findings.map((f) => rowOf(f, null, "not suppressed"));
  const hidden = d.suppressed.map((f) => rowOf(f, f.rule_id, hiddenBy(rulesById.get(f.rule_id))));
  return {
    findings: shown.length ? findingTable({ id: "finding-rows", rows: shown }) : null,
    suppressed: hidden.length ? findingTable({ id: "suppressed-rows", rows: hidden }) : null,
  };
}

export function ruleRows(rules: SuppressionRule[]): RuleRow[] {
  return rules.map((r) => ({
    ...r,
    badge: STATE_BADGE[r.state] ?? "",
    expires: when(r.expires_at)!,
    match: [r.path_pattern, r.partner_key_id && `key ${r.partner_key_id}`, r.client_prefix].filter(Boolean).join(" · ") || "*",
  }));
}

/** Every GET export of the digest, for the window shown (`q`: hours and baseline_mode). */
export const digestExports = (q: string): Array<readonly [string, string]> => [
  ["Digest (JSON)", `${DIGEST_BASE}?${q}`],
  ["Digest table (CSV)", `${DIGEST_BASE}/export.csv?${q}`],
  ["Digest table (JSON)", `${DIGEST_BASE}/export.json?${q}`],
  ["Trend chart (PNG)", `${DIGEST_BASE}/probe-trend.png?${q}`],
  ["Suppression rules (JSON, newest first, paged)", `${DIGEST_BASE}/suppressions`],
  ["Active suppression rules (JSON)", `${DIGEST_BASE}/suppressions?state=active`],
  ["Suppression rules file (JSON, every rule)", `${DIGEST_BASE}/suppressions/export.json`],
  ["Digest alerts: runs of source digest (JSON)", "/admin/ops/alerts-monitor/export.json?source=digest"],
];

export const digestBody = (data: Omit<PageData, "notice"> & { notice: Notice }): SafeHtml => body({ ...data, notice: notice(data.notice) });
