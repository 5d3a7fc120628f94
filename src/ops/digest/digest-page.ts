import { t } from "elysia";
import { consoleRoute, form, refusal } from "../../console/kit";
import type { Guards } from "../../auth/guards";
import { badge, type Cell, cells, choice, code, dataTable, endNowForm, link, muted, when } from "../../console/frame";
import type { AppContext } from "../../context";
import { compileHtml, type SafeHtml } from "../../http/formats/html";
import { intPath, intQuery } from "../../http/params";
import { BASELINE_MODES, DIGEST_DEFAULTS, digestParamsOf } from "./findings";
import { buildDigest, type Digest } from "./service";
import { createSuppression, listSuppressions, revokeSuppression, type SuppressionRule } from "./suppressions";

// GET /admin/console/403-digest: the trend chart, the findings and what the rules hid (one table shape, the
// suppression state in one column), and the rules with forms calling the same audited verbs as the API.

const PATH = "/admin/console/403-digest";
const BASE = "/admin/ops/403-digest";
const RULES_SHOWN = 50;
/** Active rules read to describe the rule behind each hidden finding (a rule past these is named by its id only). */
const ACTIVE_RULES_READ = 200;
const KIND_BADGE: Record<string, string> = { sustained_spike: "bad", spike: "warn", new_path: "warn", new_client: "warn" };
const STATE_BADGE: Record<string, string> = { active: "ok", expired: "", revoked: "" };
type Finding = Digest["findings"][number] & { rule: Cell };

const findingTable = (id: string, rows: Finding[], empty: string) =>
  dataTable({
    id,
    rows,
    empty,
    columns: {
      Kind: (f) => badge(KIND_BADGE[f.kind] ?? "warn", f.kind),
      Dimension: (f) => f.dimension,
      Value: (f) => code(f.value || "(none)"),
      Hours: (f) => (f.first_hour === f.last_hour ? `${f.first_hour}` : `${f.first_hour} – ${f.last_hour} (${f.hours})`),
      "403s": (f) => f.observed,
      Baseline: (f) => String(f.baseline),
      Ratio: (f) => String(f.ratio),
      Suppression: (f) => f.rule,
      Why: (f) => f.why,
    },
  });

const body = compileHtml<{
  d: Digest;
  hours: number;
  baseline: SafeHtml;
  q: string;
  coverage: string | null;
  findings: SafeHtml;
  suppressed: SafeHtml;
  rules: SafeHtml;
  rulesMore: boolean;
  csrf: SafeHtml;
}>(
  "console-digest",
  `<form method="get" action="${PATH}" id="window" class="filters"><label>Hours (1–168) <input type="number" name="hours" min="1" max="168" step="1" value="<%= it.hours %>" required></label>
<%= it.baseline %> <button type="submit" id="apply">Show</button></form>
<section id="overview" class="summary <%= it.d.findings_total ? "attention" : "ready" %>"><p><strong id="findings-total"><%= it.d.findings_total %></strong> <%= it.d.findings_total === 1 ? "finding" : "findings" %> · <span id="totals"><%= it.d.totals.forbidden %> 403s of <%= it.d.totals.requests %> requests, <%= it.d.totals.suppressed %> suppressed by rules</span></p>
<% if (it.coverage) { %><p class="muted" id="coverage"><%= it.coverage %></p><% } %></section>
<section id="trend"><h2>Trend</h2><p><picture><source media="(max-width: 600px)" srcset="${BASE}/probe-trend.png?<%= it.q %>&w=360&h=320" width="360" height="320"><img id="trend-chart" src="${BASE}/probe-trend.png?<%= it.q %>" alt="403s per hour against the baseline over the last <%= it.hours %> hours" style="max-width:100%;height:auto" width="960" height="420"></picture></p></section>
<section id="findings"><h2>Findings</h2>
<%= it.findings %><% if (it.d.findings.length < it.d.findings_total) { %><p class="muted">The first <%= it.d.findings.length %> of <%= it.d.findings_total %> shown; every one is in the exports.</p><% } %>
<h3 id="suppressed">Hidden by suppression rules (<%= it.d.suppressed_total %>)</h3>
<%= it.suppressed %></section>
<section id="rules"><h2>Suppression rules</h2>
<p class="muted">Known 403 noise kept out of the findings: a route glob and/or a partner key and/or a client prefix, with a reason, an owner and an expiry (at most 90 days). Every change is audited.</p>
<%= it.rules %><% if (it.rulesMore) { %><p class="muted">Newest ${RULES_SHOWN} shown; every rule is in the export below.</p><% } %>
<h3>Add a rule</h3>
<form method="post" action="${PATH}/rules" id="add-rule" class="stack"><%= it.csrf %>
<p><label>Route glob <input name="path_pattern" maxlength="200" placeholder="/api/partner/users/*"></label></p>
<p><label>Partner key id <input name="partner_key_id" maxlength="64"></label></p>
<p><label>Client prefix <input name="client_prefix" maxlength="64" placeholder="203.0.113.0/24"></label></p>
<p><label>Reason <input name="reason" maxlength="500" required></label></p>
<p><label>Owner <input name="owner" maxlength="120" placeholder="you, by default"></label></p>
<p><label>Ends in days (1–90) <input type="number" name="expires_in_days" min="1" max="90" step="1" value="7" required></label></p>
<p class="muted">At least one of route glob, partner key id and client prefix; a rule matches a 403 when every field it sets matches.</p>
<p><button type="submit" class="primary" id="add">Add rule</button></p></form></section>`,
);

export function digestPageRoutes(ctx: AppContext, guards: Guards) {
  return consoleRoute(ctx, guards, {
    path: PATH,
    title: "403 digest",
    summary:
      "403 digest (HTML page): trend chart, findings with their reasons and suppression state, what suppression rules hid, the rules with add/end forms, exports",
    query: {
      hours: intQuery({ minimum: 1, maximum: 168, defaultValue: DIGEST_DEFAULTS.hours, description: "the window: this many UTC hours ending now" }),
      baseline_mode: t.Optional(
        t.Union(
          BASELINE_MODES.map((m) => t.Literal(m)),
          {
            description: "how the baseline of an hour is taken",
          },
        ),
      ),
    },
    done: { field: "rule", pattern: /^\d{1,12}$/, says: { added: (id) => `Rule #${id} added.`, ended: (id) => `Rule #${id} ended now.` } },
    async load(raw) {
      const d = await buildDigest(ctx, digestParamsOf({ hours: raw.hours, baseline_mode: raw.baseline_mode }));
      const { hours, baseline_mode: mode } = d.params;
      const rules = await listSuppressions(ctx, { limit: RULES_SHOWN, offset: 0, after: null, cursor: null });
      const active = d.suppressed.length
        ? (await listSuppressions(ctx, { limit: ACTIVE_RULES_READ, offset: 0, after: null, cursor: null }, "active")).items
        : [];
      const q = new URLSearchParams({ hours: String(hours), baseline_mode: mode }).toString();
      return { d, hours, mode, q, rules, rulesById: new Map(active.map((r) => [r.id, r])) };
    },
    lead: (v) => `The last ${v.hours} hours of 403 answers against a ${v.mode} baseline.`,
    view: ({ d, hours, mode, q, rules, rulesById }, { csrf }) => {
      const hiddenBy = (r: SuppressionRule | undefined) => (r ? `(${r.state} until ${when(r.expires_at)}: ${r.reason})` : "");
      return body({
        d,
        hours,
        baseline: choice({ label: "Baseline", name: "baseline_mode", options: BASELINE_MODES, value: mode }),
        q,
        coverage: d.coverage.lookback_complete
          ? null
          : `Herald holds request data since ${d.coverage.data_since ?? "now"} only: the baseline${d.coverage.baseline_complete ? " is whole, but" : " and"} the new-path lookback cover less than their span.`,
        findings: findingTable(
          "finding-rows",
          d.findings.map((f) => ({ ...f, rule: muted("not suppressed") })),
          "None: no spike, new path or new client above the thresholds.",
        ),
        suppressed: findingTable(
          "suppressed-rows",
          d.suppressed.map((f) => ({ ...f, rule: cells(link(`#rule-${f.rule_id}`, `hidden by rule #${f.rule_id}`), hiddenBy(rulesById.get(f.rule_id))) })),
          "None.",
        ),
        rules: dataTable({
          id: "rule-rows",
          rows: rules.items,
          empty: "None.",
          rowId: (r) => `rule-${r.id}`,
          columns: {
            Rule: (r) => `#${r.id}`,
            State: (r) => badge(STATE_BADGE[r.state] ?? "", r.state),
            Matches: (r) => code([r.path_pattern, r.partner_key_id && `key ${r.partner_key_id}`, r.client_prefix].filter(Boolean).join(" · ") || "*"),
            Reason: (r) => r.reason,
            Owner: (r) => r.owner,
            Expires: (r) => when(r.expires_at),
            Action: (r) => (r.state === "active" ? endNowForm({ action: `${PATH}/rules/${r.id}/end`, id: r.id, csrf }) : muted("–")),
          },
        }),
        rulesMore: rules.pagination.has_more,
        csrf,
      });
    },
    exports: ({ q }) => ({
      links: [
        ["Digest (JSON)", `${BASE}?${q}`],
        ["Digest table (CSV)", `${BASE}/export.csv?${q}`],
        ["Digest table (JSON)", `${BASE}/export.json?${q}`],
        ["Trend chart (PNG)", `${BASE}/probe-trend.png?${q}`],
        ["Suppression rules (JSON, newest first, paged)", `${BASE}/suppressions`],
        ["Active suppression rules (JSON)", `${BASE}/suppressions?state=active`],
        ["Suppression rules file (JSON, every rule)", `${BASE}/suppressions/export.json`],
        ["Digest alerts: runs of source digest (JSON)", "/admin/ops/alerts-monitor/export.json?source=digest"],
      ],
    }),
    forms: [
      form({
        path: "/rules",
        body: {
          path_pattern: t.Optional(t.String({ maxLength: 200, description: "route template glob, * = any run (e.g. /api/partner/users/*)" })),
          partner_key_id: t.Optional(t.String({ maxLength: 64 })),
          client_prefix: t.Optional(t.String({ maxLength: 64, description: "IPv4 /24 or IPv6 /48" })),
          reason: t.String({ maxLength: 500 }),
          owner: t.Optional(t.String({ maxLength: 120 })),
          expires_in_days: t.String({ maxLength: 3, description: "1 to 90" }),
        },
        summary: "Add a 403 suppression rule from the digest page (audited, as POST /admin/ops/403-digest/suppressions)",
        refusals: { 400: "a field refused: no matcher, a bad prefix, days out of 1–90" },
        run: async ({ operator, body: b }) => {
          const days = Number(b.expires_in_days);
          if (!Number.isInteger(days) || days < 1 || days > 90) throw refusal(400, "Nothing was changed: Days must be a whole number from 1 to 90.");
          const rule = await createSuppression(ctx, operator, {
            path_pattern: b.path_pattern?.trim() || undefined,
            partner_key_id: b.partner_key_id?.trim() || undefined,
            client_prefix: b.client_prefix?.trim() || undefined,
            reason: b.reason.trim(),
            owner: b.owner?.trim() || `${operator.actor.kind}:${operator.actor.name}`,
            expires_at: new Date(ctx.clock.now().getTime() + days * 86_400_000).toISOString(),
          });
          return { done: "added", rule: String(rule.id) };
        },
      }),
      form({
        path: "/rules/:rule_id/end",
        params: { rule_id: intPath() },
        summary: "End a 403 suppression rule now from the digest page (audited, as …/suppressions/{id}/revoke)",
        refusals: { 404: "no such rule", 409: "the rule was already ended" },
        run: async ({ operator, params }) => ({ done: "ended", rule: String((await revokeSuppression(ctx, operator, params.rule_id)).id) }),
      }),
    ],
  });
}
