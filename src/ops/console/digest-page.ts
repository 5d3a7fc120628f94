import { Elysia, t } from "elysia";
import { backTo, consolePage, csrfField, formAction, formDoc, refusal, type Notice, NO_NOTICE, notice, pageDoc, when } from "../../auth/console-kit";
import type { Guards } from "../../auth/guards";
import type { OperatorRequest } from "../../auth/session-plugin";
import type { AppContext } from "../../context";
import { compileHtml } from "../../http/html";
import { intPath, intQuery } from "../../http/params";
import { buildDigest, DIGEST_DEFAULTS } from "../digest/service";
import type { BaselineMode } from "../digest/findings";
import { paramsOf } from "../digest/routes";
import { createSuppression, listSuppressions, revokeSuppression, type SuppressionRule } from "../digest/suppressions";

// GET /admin/console/403-digest: the 403 digest for a person — the trend chart (the digest's own PNG), the
// findings with why each was raised, what the suppression rules hid, and the rules themselves with forms to
// add one and to end one (the same verbs and audit as POST /admin/ops/403-digest/suppressions…).

const PATH = "/admin/console/403-digest";
const BASE = "/admin/ops/403-digest";
const MODES: BaselineMode[] = ["rolling_24h", "same_hour_yesterday", "same_weekday_hour_4w"];
const RULES_SHOWN = 50;

const PageQuery = t.Object({
  hours: intQuery({ minimum: 1, maximum: 168, defaultValue: DIGEST_DEFAULTS.hours, description: "the window: this many UTC hours ending now" }),
  baseline_mode: t.Optional(
    t.Union([t.Literal("rolling_24h"), t.Literal("same_hour_yesterday"), t.Literal("same_weekday_hour_4w")], {
      description: "how the baseline of an hour is taken",
    }),
  ),
  done: t.Optional(t.String({ maxLength: 16, description: "set by a form's redirect: added or ended" })),
  rule: t.Optional(t.String({ maxLength: 12, description: "set by a form's redirect: the rule's id" })),
});

const AddForm = t.Object(
  {
    ...csrfField,
    path_pattern: t.Optional(t.String({ maxLength: 200, description: "route template glob, * = any run (e.g. /api/partner/users/*)" })),
    partner_key_id: t.Optional(t.String({ maxLength: 64 })),
    client_prefix: t.Optional(t.String({ maxLength: 64, description: "IPv4 /24 or IPv6 /48" })),
    reason: t.String({ maxLength: 500 }),
    owner: t.Optional(t.String({ maxLength: 120 })),
    expires_in_days: t.String({ maxLength: 3, description: "1 to 90" }),
  },
  { additionalProperties: false },
);
const EndForm = t.Object({ ...csrfField }, { additionalProperties: false });

interface PageData {
  generatedAt: string;
  hours: number;
  mode: string;
  modes: string[];
  chart: string;
  totals: { requests: number; forbidden: number; suppressed: number };
  coverage: string | null;
  findingsTotal: number;
  findings: Array<{
    kind: string;
    badge: string;
    dimension: string;
    value: string;
    span: string;
    observed: number;
    baseline: string;
    ratio: string;
    why: string;
  }>;
  suppressedTotal: number;
  suppressed: Array<{ kind: string; value: string; rules: string; why: string }>;
  rules: Array<SuppressionRule & { badge: string; expires: string; match: string }>;
  rulesMore: boolean;
  csrf: string | null;
  exports: Array<readonly [string, string]>;
  notice: ReturnType<typeof notice>;
}

const body = compileHtml<PageData>(
  "console-digest",
  `<h1>403 digest</h1>
<p class="lead">As of <%= it.generatedAt %>; all times UTC. The last <%= it.hours %> hours of 403 answers against a <code><%= it.mode %></code> baseline.</p>
<%= it.notice %>
<form method="get" action="${PATH}" id="window" class="filters"><label>Hours <input type="number" name="hours" min="1" max="168" value="<%= it.hours %>"></label>
<label>Baseline <select name="baseline_mode"><% for (const m of it.modes) { %><option<%= m === it.mode ? " selected" : "" %>><%= m %></option><% } %></select></label> <button type="submit" id="apply">Show</button></form>
<section id="overview" class="summary <%= it.findingsTotal ? "attention" : "ready" %>"><p><strong id="findings-total"><%= it.findingsTotal %></strong> <%= it.findingsTotal === 1 ? "finding" : "findings" %> · <span id="totals"><%= it.totals.forbidden %> 403s of <%= it.totals.requests %> requests, <%= it.totals.suppressed %> suppressed by rules</span></p>
<% if (it.coverage) { %><p class="muted" id="coverage"><%= it.coverage %></p><% } %></section>
<section id="trend"><h2>Trend</h2><p><img id="trend-chart" src="<%= it.chart %>" alt="403s per hour against the baseline over the last <%= it.hours %> hours" style="max-width:100%;height:auto" width="960" height="420"></p></section>
<section id="findings"><h2>Findings</h2>
<% if (it.findings.length === 0) { %><p class="muted" id="findings-none">None: no spike, new path or new client above the thresholds.</p><% } else { %><table class="data" id="finding-rows"><thead><tr><th>Kind</th><th>Dimension</th><th>Value</th><th>Hours</th><th>403s</th><th>Baseline</th><th>Ratio</th><th>Why</th></tr></thead><tbody>
<% for (const f of it.findings) { %><tr><td data-label="Kind"><span class="badge <%= f.badge %>"><%= f.kind %></span></td><td data-label="Dimension"><%= f.dimension %></td><td data-label="Value"><code><%= f.value || "(none)" %></code></td><td data-label="Hours"><%= f.span %></td><td data-label="403s"><%= f.observed %></td><td data-label="Baseline"><%= f.baseline %></td><td data-label="Ratio"><%= f.ratio %></td><td data-label="Why"><%= f.why %></td></tr>
<% } %></tbody></table><% } %>
<% if (it.suppressedTotal) { %><h3>Hidden by suppression rules (<%= it.suppressedTotal %>)</h3><table class="data" id="suppressed-rows"><thead><tr><th>Kind</th><th>Value</th><th>Rules</th><th>Why</th></tr></thead><tbody>
<% for (const f of it.suppressed) { %><tr><td data-label="Kind"><%= f.kind %></td><td data-label="Value"><code><%= f.value %></code></td><td data-label="Rules"><%= f.rules %></td><td data-label="Why"><%= f.why %></td></tr>
<% } %></tbody></table><% } %></section>
<section id="rules"><h2>Suppression rules</h2>
<p class="muted">Known 403 noise kept out of the findings: a route glob and/or a partner key and/or a client prefix, with a reason, an owner and an expiry (at most 90 days). Every change is audited.</p>
<% if (it.rules.length === 0) { %><p class="muted" id="rules-none">None.</p><% } else { %><table class="data" id="rule-rows"><thead><tr><th>Rule</th><th>State</th><th>Matches</th><th>Reason</th><th>Owner</th><th>Expires</th><th></th></tr></thead><tbody>
<% for (const r of it.rules) { %><tr id="rule-<%= r.id %>"><td data-label="Rule">#<%= r.id %></td><td data-label="State"><span class="badge <%= r.badge %>"><%= r.state %></span></td><td data-label="Matches"><code><%= r.match %></code></td><td data-label="Reason"><%= r.reason %></td><td data-label="Owner"><%= r.owner %></td><td data-label="Expires"><%= r.expires %></td><td data-label="Action"><% if (r.state === "active") { %><form class="inline" method="post" action="${PATH}/rules/<%= r.id %>/end"><% if (it.csrf !== null) { %><input type="hidden" name="csrf_token" value="<%= it.csrf %>"><% } %><button type="submit" id="end-<%= r.id %>">End now</button></form><% } %></td></tr>
<% } %></tbody></table><% if (it.rulesMore) { %><p class="muted">Newest ${RULES_SHOWN} shown; every rule is in the export below.</p><% } %><% } %>
<h3>Add a rule</h3>
<form method="post" action="${PATH}/rules" id="add-rule" class="stack">
<% if (it.csrf !== null) { %><input type="hidden" name="csrf_token" value="<%= it.csrf %>"><% } %>
<p><label>Route glob <input name="path_pattern" maxlength="200" placeholder="/api/partner/users/*"></label></p>
<p><label>Partner key id <input name="partner_key_id" maxlength="64"></label> <label>Client prefix <input name="client_prefix" maxlength="64" placeholder="203.0.113.0/24"></label></p>
<p><label>Reason <input name="reason" maxlength="500" required></label> <label>Owner <input name="owner" maxlength="120" placeholder="you, by default"></label> <label>Days <input type="number" name="expires_in_days" min="1" max="90" value="7" required></label></p>
<p><button type="submit" class="primary" id="add">Add rule</button></p></form></section>
<section id="exports"><h2>Exports</h2><ul class="exports"><% for (const [label, href] of it.exports) { %><li><a href="<%= href %>"><%= label %></a></li><% } %></ul></section>`,
);

const KIND_BADGE: Record<string, string> = { sustained_spike: "bad", spike: "warn", new_path: "warn", new_client: "warn" };
const STATE_BADGE: Record<string, string> = { active: "ok", expired: "", revoked: "" };
const DONE: Record<string, string> = { added: "added", ended: "ended now" };

function render(ctx: AppContext, operator: OperatorRequest, hours: number, mode: BaselineMode, n: Notice, status = 200): Response {
  const d = buildDigest(ctx, paramsOf({ hours, baseline_mode: mode }));
  const rules = listSuppressions(ctx, { limit: RULES_SHOWN, offset: 0, after: null, cursor: null });
  const q = new URLSearchParams({ hours: String(hours), baseline_mode: mode }).toString();
  const coverage = d.coverage.lookback_complete
    ? null
    : `Herald holds request data since ${d.coverage.data_since ?? "now"} only: the baseline${d.coverage.baseline_complete ? " is whole, but" : " and"} the new-path lookback cover less than their span.`;
  return consolePage(
    operator,
    "403 digest",
    PATH,
    body({
      generatedAt: when(d.generated_at)!,
      hours,
      mode,
      modes: MODES,
      chart: `${BASE}/probe-trend.png?${q}`,
      totals: d.totals,
      coverage,
      findingsTotal: d.findings_total,
      findings: d.findings.map((f) => ({
        kind: f.kind,
        badge: KIND_BADGE[f.kind] ?? "warn",
        dimension: f.dimension,
        value: f.value,
        span: f.first_hour === f.last_hour ? `${f.first_hour}` : `${f.first_hour} – ${f.last_hour} (${f.hours})`,
        observed: f.observed,
        baseline: String(f.baseline),
        ratio: String(f.ratio),
        why: f.why,
      })),
      suppressedTotal: d.suppressed_total,
      suppressed: d.suppressed.map((f) => ({ kind: f.kind, value: f.value, rules: `#${f.rule_id}`, why: f.why })),
      rules: rules.items.map((r) => ({
        ...r,
        badge: STATE_BADGE[r.state] ?? "",
        expires: when(r.expires_at)!,
        match: [r.path_pattern, r.partner_key_id && `key ${r.partner_key_id}`, r.client_prefix].filter(Boolean).join(" · ") || "*",
      })),
      rulesMore: rules.pagination.has_more,
      csrf: operator.csrfToken,
      exports: [
        ["Digest (JSON)", `${BASE}?${q}`],
        ["Digest table (CSV)", `${BASE}/export.csv?${q}`],
        ["Digest table (JSON)", `${BASE}/export.json?${q}`],
        ["Trend chart (PNG)", `${BASE}/probe-trend.png?${q}`],
        ["Suppression rules (JSON, every rule)", `${BASE}/suppressions/export.json`],
        ["Digest alerts: runs of source digest (JSON)", "/admin/ops/alerts-monitor/export.json?source=digest"],
      ],
      notice: notice(n),
    }),
    status,
  );
}

const doneOf = (done: string | undefined, rule: string | undefined): string | null =>
  done && rule && Object.hasOwn(DONE, done) && /^\d{1,12}$/.test(rule) ? `Rule #${rule} ${DONE[done]}.` : null;

export function digestPageRoutes(ctx: AppContext, guards: Guards) {
  const refuseWith = (operator: OperatorRequest) => (status: number, error: string) =>
    render(ctx, operator, DIGEST_DEFAULTS.hours, DIGEST_DEFAULTS.baselineMode, { done: null, error }, status);
  return new Elysia({ name: "herald:console-digest" })
    .use(guards.operator.plugin)
    .get(
      PATH,
      ({ operator, query }) =>
        render(ctx, operator, query.hours ?? DIGEST_DEFAULTS.hours, query.baseline_mode ?? DIGEST_DEFAULTS.baselineMode, {
          ...NO_NOTICE,
          done: doneOf(query.done, query.rule),
        }),
      {
        operator: "page",
        query: PageQuery,
        detail: pageDoc(
          "403 digest (HTML page): trend chart, findings with their reasons, what suppression rules hid, the rules with add/end forms, exports",
          PATH,
        ),
      },
    )
    .post(
      `${PATH}/rules`,
      ({ operator, body, request }) =>
        formAction(
          request,
          () => {
            const days = Number(body.expires_in_days);
            if (!Number.isInteger(days) || days < 1 || days > 90) throw refusal(400, "Nothing was changed: Days must be a whole number from 1 to 90.");
            const blank = (v: string | undefined) => (v === undefined || v.trim() === "" ? undefined : v.trim());
            const rule = createSuppression(ctx, operator, {
              path_pattern: blank(body.path_pattern),
              partner_key_id: blank(body.partner_key_id),
              client_prefix: blank(body.client_prefix),
              reason: body.reason.trim(),
              owner: blank(body.owner) ?? `${operator.actor.kind}:${operator.actor.name}`,
              expires_at: new Date(ctx.clock.now().getTime() + days * 86_400_000).toISOString(),
            });
            return backTo(PATH, { done: "added", rule: String(rule.id) });
          },
          refuseWith(operator),
        ),
      {
        operator: "form",
        body: AddForm,
        detail: formDoc(
          "Add a 403 suppression rule from the digest page (audited, as POST /admin/ops/403-digest/suppressions)",
          "csrf_token, path_pattern, partner_key_id, client_prefix, reason, owner, expires_in_days",
          {
            400: "a field refused: no matcher, a bad prefix, days out of 1–90",
          },
        ),
      },
    )
    .post(
      `${PATH}/rules/:rule_id/end`,
      ({ operator, params, request }) =>
        formAction(
          request,
          () => {
            const rule = revokeSuppression(ctx, operator, params.rule_id);
            return backTo(PATH, { done: "ended", rule: String(rule.id) });
          },
          refuseWith(operator),
        ),
      {
        operator: "form",
        params: t.Object({ rule_id: intPath() }),
        body: EndForm,
        detail: formDoc("End a 403 suppression rule now from the digest page (audited, as …/suppressions/{id}/revoke)", "csrf_token", {
          404: "no such rule",
          409: "the rule was already ended",
        }),
      },
    );
}
