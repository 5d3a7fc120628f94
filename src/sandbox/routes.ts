import { Elysia } from "elysia";
import type { Guards } from "../auth/guards";
import type { AppContext } from "../context";
import type { EmailSender } from "../donations/service";
import { getClaim, issueClaim } from "../donations/service";
import { ok } from "../http/envelope";
import { refuses } from "../http/routes/declare";
import { partnerMutation, partnerPreparedMutation } from "../auth/partner-mutation";
import { SANDBOX_CLAIM_DEFAULTS } from "./defaults";
import { fixtureSummary, holdingSandbox, openSandbox } from "./fixtures";
import { SandboxModel as M } from "./model";
import { sandboxHook as hook } from "./mount";
import { sandboxRead, sandboxWrite, tokenStatusFixture } from "./profile";
import { promotePartner } from "./promote";
import { promotionReport } from "./promotion";
import { resetSandbox } from "./reset";
import { sandboxWebhookRoutes } from "./webhooks-routes";

/**
 * Sandbox claims store their row (mode sandbox) and emit donation.claim to sandbox webhooks, but never email:
 * the live sender writes to email_outbox, a table without a mode that a mail worker would really send from.
 */
const noEmail: EmailSender = { send: async () => ({ sent: false, status: "queued", reference: null }) };

const NEXT_STEPS = [
  "GET /api/partner/sandbox/token-status",
  "GET /api/partner/sandbox/users?include_wallets=1 (the fixture users)",
  "POST /api/partner/sandbox/webhooks, then POST /api/partner/sandbox/webhooks/{id}/test",
  "GET /api/partner/sandbox/promotion-report",
];

/**
 * The sandbox's own routes under /api/partner/sandbox (sandbox keys only) and the operator's promotion route. Its
 * users, salutes and webhooks are the live routes on the sandbox mount (src/sandbox/mount.ts; src/app.ts).
 */
export function sandboxRoutes(ctx: AppContext, guards: Guards) {
  const mutation = partnerMutation(ctx, guards.partner.idempotency);
  const prepared = partnerPreparedMutation(guards.partner.idempotency);
  return new Elysia({ name: "herald:sandbox" })
    .use(guards.partner.plugin)
    .use(guards.admin.plugin)
    .get(
      "/api/partner/sandbox/verify",
      async ({ partner }) => {
        const { fixtures } = await openSandbox(ctx, partner.actor);
        const a = partner.actor;
        return ok({
          ...sandboxRead("sandbox_fixture"),
          verified: true as const,
          partner: a.partner,
          key_id: a.keyId,
          key_mode: "sandbox" as const,
          scopes: [...a.scopes],
          signature: { valid: true as const, timestamp_skew_seconds: ctx.config.signatureSkewSeconds },
          policy: {
            nonce_required_on_mutations: ctx.config.sandboxNonceRequired,
            idempotency_key_required: ctx.config.idempotencyRequired,
            rate_limit_per_minute: ctx.config.rateLimits.sandboxPerMin,
          },
          fixtures: await fixtureSummary(ctx.store, fixtures),
          next_steps: NEXT_STEPS,
        });
      },
      hook({}, M.verify, "a signed round trip; shows the key, the sandbox policy and the fixtures"),
    )
    .get(
      "/api/partner/sandbox/token-status",
      async ({ partner }) => {
        await openSandbox(ctx, partner.actor);
        return ok({ ...sandboxRead("sandbox_fixture"), ...tokenStatusFixture() });
      },
      hook({ scope: "read" }, M.tokenStatus, "fixed fixture token status; placeholder rpc_url"),
    )
    .get(
      "/api/partner/sandbox/promotion-report",
      async ({ partner, query }) => {
        await openSandbox(ctx, partner.actor);
        const limit = query.limit ?? 10;
        return ok({ ...sandboxRead("sandbox_state"), ...(await promotionReport(ctx, partner.actor.partner, { userId: query.user_id, limit })) });
      },
      { ...hook({}, M.report, "readiness for a live key (policy sandbox_to_live_manual_approval)"), query: M.reportQuery },
    )
    .post(
      "/api/partner/sandbox/donation-claim",
      async ({ partner, body }) => {
        const { owner } = await openSandbox(ctx, partner.actor);
        const keyId = partner.actor.keyId;
        // Fields left out come from the fixture (src/sandbox/defaults.ts): a first call needs only the headers.
        const claimInput = { ...SANDBOX_CLAIM_DEFAULTS, ...body, recipient: body?.recipient ?? SANDBOX_CLAIM_DEFAULTS.recipient };
        return mutation(
          partner,
          holdingSandbox(owner, async (t) => {
            const r = await issueClaim(t, ctx, owner, keyId, claimInput, noEmail);
            const claim = await getClaim(t, ctx, owner, r.claim_code);
            return ok({
              ...sandboxWrite(),
              status: "sandbox_preview" as const,
              claim_status: "sandbox_preview" as const,
              claim_code: r.claim_code,
              claim_id: r.claim_id,
              partner_key_id: keyId,
              claim_url: `${r.claim_url}?sandbox=1`,
              email_sent: false as const,
              email_status: "not_sent_sandbox" as const,
              claim_campaign_id: r.campaign_id,
              requested_claim: { campaign_id: r.campaign_id, amount: r.amount, recipient: claim.recipient, user_id: claim.user_id },
              created_at: r.created_at,
            });
          }),
        );
      },
      { body: M.claimBody, ...hook({ scope: "donation", mutation: true }, M.claim, "a donation claim preview: stored in the sandbox, never emailed") },
    )
    .post(
      "/api/partner/sandbox/reset",
      async ({ partner }) => {
        // Opened first like every sandbox route (a first call seeds, in its own transaction), so a reset is always
        // a reseed: its reset_count counts resets, never the first seed.
        // The bulk of the sandbox is deleted in batches before the request's transaction, once its Idempotency-Key is
        // claimed (src/sandbox/reset.ts): a replay answers the stored response and deletes nothing.
        const { owner } = await openSandbox(ctx, partner.actor);
        return resetSandbox(
          ctx,
          owner,
          partner.actor.keyId,
          (prepare, effect) => prepared(partner, prepare, effect),
          (r) => ok({ ...sandboxWrite("sandbox_fixture"), ...r }),
        );
      },
      { body: M.resetBody, ...hook({ mutation: true }, M.reset, "delete all sandbox state of your partner and seed the fixtures again") },
    )
    .post(
      "/admin/partners/:partner/promote",
      async ({ params, body, admin, set }) => {
        const out = await promotePartner(ctx, guards.partner.keys, params.partner, body ?? {}, admin);
        set.status = 201;
        return ok(out);
      },
      {
        admin: true,
        params: M.promoteParams,
        body: M.promoteBody,
        response: { 201: M.promoted, ...refuses(404, 409) },
        detail: { summary: "Promote a partner to live: issues the live key (secret shown once) when the promotion report passes, or with force and a reason" },
      },
    )
    .use(sandboxWebhookRoutes(ctx, guards));
}
