import { Elysia, t } from "elysia";
import { backTo, consolePage, csrfField, formAction, formDoc, NO_NOTICE, type Notice, pageDoc, refusal, refusingPage, when } from "../../auth/console-kit";
import type { Guards } from "../../auth/guards";
import type { OperatorRequest } from "../../auth/session-plugin";
import type { AppContext } from "../../context";
import { intPath, intQuery } from "../../http/params";
import { buildDigest, DIGEST_DEFAULTS } from "../digest/service";
import { BASELINE_MODES, type BaselineMode } from "../digest/findings";
import { paramsOf } from "../digest/routes";
import { createSuppression, listSuppressions, revokeSuppression } from "../digest/suppressions";
import { DIGEST_BASE, digestBody, digestExports, findingTables, PAGE_PATH, ruleRows } from "./digest-view";
import { ignoredMetaQuery } from "../../http/envelope";

// GET /admin/console/403-digest: the 403 digest for a person — the trend chart (the digest's own PNG), the
// findings with why each was raised and its suppression state, what the suppression rules hid, and the rules
// themselves with forms to add one and to end one (the same verbs and audit as POST /admin/ops/403-digest/
// suppressions…). The markup is in digest-view.ts.

const PATH = PAGE_PATH;
const MODES: readonly BaselineMode[] = BASELINE_MODES;
const RULES_SHOWN = 50;
/** Active rules read to describe the rule behind each hidden finding (a rule past these is named by its id only). */
const ACTIVE_RULES_READ = 200;

const PageQuery = t.Object({
  ...ignoredMetaQuery,
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

const DONE: Record<string, string> = { added: "added", ended: "ended now" };

async function render(ctx: AppContext, operator: OperatorRequest, hours: number, mode: BaselineMode, n: Notice, status = 200): Promise<Response> {
  const d = await buildDigest(ctx, paramsOf({ hours, baseline_mode: mode }));
  const rules = await listSuppressions(ctx, { limit: RULES_SHOWN, offset: 0, after: null, cursor: null });
  const active = d.suppressed.length ? (await listSuppressions(ctx, { limit: ACTIVE_RULES_READ, offset: 0, after: null, cursor: null }, "active")).items : [];
  const q = new URLSearchParams({ hours: String(hours), baseline_mode: mode }).toString();
  const coverage = d.coverage.lookback_complete
    ? null
    : `Herald holds request data since ${d.coverage.data_since ?? "now"} only: the baseline${d.coverage.baseline_complete ? " is whole, but" : " and"} the new-path lookback cover less than their span.`;
  return consolePage(
    operator,
    "403 digest",
    PATH,
    digestBody({
      generatedAt: when(d.generated_at)!,
      hours,
      mode,
      modes: MODES,
      chart: `${DIGEST_BASE}/probe-trend.png?${q}`,
      chartNarrow: `${DIGEST_BASE}/probe-trend.png?${q}&w=360&h=320`,
      totals: d.totals,
      coverage,
      findingsTotal: d.findings_total,
      findingsShown: d.findings.length,
      suppressedTotal: d.suppressed_total,
      ...findingTables(d, new Map(active.map((r) => [r.id, r]))),
      rules: ruleRows(rules.items),
      rulesMore: rules.pagination.has_more,
      rulesShown: RULES_SHOWN,
      csrf: operator.csrfToken,
      exports: digestExports(q),
      notice: n,
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
        operator: refusingPage(refuseWith),
        query: PageQuery,
        detail: pageDoc(
          "403 digest (HTML page): trend chart, findings with their reasons and suppression state, what suppression rules hid, the rules with add/end forms, exports",
          PATH,
        ),
      },
    )
    .post(
      `${PATH}/rules`,
      ({ operator, body, request }) =>
        formAction(
          request,
          async () => {
            const days = Number(body.expires_in_days);
            if (!Number.isInteger(days) || days < 1 || days > 90) throw refusal(400, "Nothing was changed: Days must be a whole number from 1 to 90.");
            const blank = (v: string | undefined) => (v === undefined || v.trim() === "" ? undefined : v.trim());
            const rule = await createSuppression(ctx, operator, {
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
          async () => {
            const rule = await revokeSuppression(ctx, operator, params.rule_id);
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
