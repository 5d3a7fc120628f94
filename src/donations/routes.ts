import { Elysia, t } from "elysia";
import { ownerOf } from "../auth/actors";
import type { Guards } from "../auth/guards";
import type { AppContext } from "../context";
import { ErrorBody, includeMetaQuery } from "../http/envelope";
import { outboxEmailSender } from "./email";
import { DonationsModel as M } from "./model";
import { getClaim, issueClaim, redeemClaim } from "./service";

const errs = { 400: ErrorBody, 401: ErrorBody, 403: ErrorBody, 404: ErrorBody, 409: ErrorBody, 422: ErrorBody, 429: ErrorBody };
const tag = (summary: string) => ({ tags: ["partner"], summary });

/** Donation claims (scope `donation`, live keys): issue, read, redeem exactly once. */
export function donationRoutes(ctx: AppContext, guards: Guards) {
  const idem = guards.partner.idempotency;
  const email = outboxEmailSender(ctx);
  const read = { scope: "donation" as const };
  const write = { scope: "donation" as const, mutation: true };
  return new Elysia({ name: "herald:donations" })
    .use(guards.partner.plugin)
    .post(
      "/api/partner/donation-claim",
      async ({ partner, body }) => {
        const owner = ownerOf(partner.actor);
        const out = await idem.run(partner.idempotency, async (t) => ({
          success: true as const,
          ...(await issueClaim(t, ctx, owner, partner.actor.keyId, body, email)),
        }));
        ctx.dispatcher.nudge();
        return out;
      },
      {
        partner: write,
        body: M.issueBody,
        response: { 200: M.issued, ...errs },
        detail: tag("Issue a donation claim with an unguessable claim code; emails are queued, not sent"),
      },
    )
    .get(
      "/api/partner/donation-claims/:claim_code",
      async ({ partner, params }) => ({
        success: true as const,
        claim: await getClaim(ctx.store, ctx, ownerOf(partner.actor), params.claim_code),
      }),
      {
        partner: read,
        params: M.codeParams,
        query: t.Object(includeMetaQuery),
        response: { 200: M.claimResponse, ...errs },
        detail: tag("One of your donation claims; other partners' codes are 404"),
      },
    )
    .post(
      "/api/partner/donation-claims/:claim_code/redeem",
      async ({ partner, params, body }) => {
        const owner = ownerOf(partner.actor);
        const out = await idem.run(partner.idempotency, async (t) => ({
          success: true as const,
          claim: await redeemClaim(t, ctx, owner, params.claim_code, body?.redeemed_by ?? null),
        }));
        ctx.dispatcher.nudge();
        return out;
      },
      {
        partner: write,
        params: M.codeParams,
        body: M.redeemBody,
        response: { 200: M.claimResponse, ...errs },
        detail: tag("Redeem a claim: issued → redeemed exactly once; again → 409 claim_already_redeemed"),
      },
    );
}
