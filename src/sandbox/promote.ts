import type { Static } from "@sinclair/typebox";
import type { AdminRequest } from "../auth/admin-plugin";
import { auditOperator } from "../auth/audit";
import type { PartnerKeys } from "../auth/keys";
import { parseScopes, type Scope } from "../auth/scopes";
import type { AppContext } from "../context";
import { AppError, ValidationError } from "../http/errors/errors";
import type { SandboxModel } from "./model";
import { notReady, PROMOTION_POLICY, promotionReport } from "./promotion";

export type PromoteInput = NonNullable<Static<typeof SandboxModel.promoteBody>>;

/** The live key gets the scopes the partner practised with (its active sandbox keys'), unless the operator says. */
function defaultScopes(report: Awaited<ReturnType<typeof promotionReport>>): Scope[] {
  const all = report.sandbox_keys.filter((k) => k.status === "active").flatMap((k) => k.scopes);
  return parseScopes(all.join(",")).scopes;
}

/**
 * POST /admin/partners/{partner}/promote (policy sandbox_to_live_manual_approval): issues the partner's live key
 * when the promotion report passes, or when the operator forces it with a written reason. The key, its audit row
 * and the promotion's audit row commit together. A partner that already has an active live key is a 409: extra
 * live keys are made with POST /admin/partners/keys, so a double click cannot mint two.
 */
export async function promotePartner(ctx: AppContext, keys: PartnerKeys, partner: string, input: PromoteInput, admin: AdminRequest) {
  const reason = input.reason?.trim() ?? "";
  if (input.force && reason === "") {
    throw new ValidationError("force=true needs a reason: say why this partner goes live before the report passes", [
      { field: "reason", problem: "is required with force=true" },
    ]);
  }
  const report = await promotionReport(ctx, partner, { limit: 10 });
  if (report.active_live_keys > 0) {
    throw new AppError("conflict", `Partner ${partner} already has an active live key; create further keys with POST /admin/partners/keys`, {
      details: { active_live_keys: report.active_live_keys },
    });
  }
  if (!report.ready && !input.force) throw notReady(report);
  const forced = !report.ready;
  const scopes = input.scopes ?? defaultScopes(report);
  const created = await keys.create({ partner, mode: "live", scopes, allowedIps: input.allowed_ips ?? [] }, admin.actor, admin.requestId, (t, keyId) =>
    auditOperator(t, admin, ctx.clock.now().toISOString(), "partner.promote", partner, {
      key_id: keyId,
      policy: PROMOTION_POLICY,
      forced,
      reason: reason || null,
      ready: report.ready,
      score: report.score,
      failing: report.checklist.filter((c) => c.required && c.status === "fail").map((c) => c.id),
    }),
  );
  const { secret, ...key } = created;
  return {
    partner,
    promoted: true as const,
    promotion_policy: PROMOTION_POLICY,
    forced,
    reason: reason || null,
    key,
    secret,
    report: { ready: report.ready, score: report.score, checklist: report.checklist.map((c) => ({ id: c.id, required: c.required, status: c.status })) },
  };
}
