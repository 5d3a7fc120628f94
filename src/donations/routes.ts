import { Elysia, t } from "elysia";
import { ownerOf } from "../auth/actors";
import type { Guards } from "../auth/guards";
import type { AppContext } from "../context";
import { includeMetaQuery, ok } from "../http/envelope";
import { partnerTag, readErrors, writeErrors } from "../http/routes/declare";
import { partnerMutation } from "../auth/partner-mutation";
import { outboxEmailSender } from "./email";
import { DonationsModel as M } from "./model";
import { getClaim, issueClaim, redeemClaim } from "./service";

/** Donation claims (scope `donation`, live keys): issue, read, redeem exactly once. */
export function donationRoutes(ctx: AppContext, guards: Guards) {
  const mutation = partnerMutation(ctx, guards.partner.idempotency);
  const email = outboxEmailSender(ctx);
  const read = { scope: "donation" as const };
  const write = { scope: "donation" as const, mutation: true };
  return new Elysia({ name: "herald:donations" })
    .use(guards.partner.plugin)
    .post(
      "/api/partner/donation-claim",
      ({ partner, body }) => mutation(partner, async (t) => ok(await issueClaim(t, ctx, ownerOf(partner.actor), partner.actor.keyId, body, email))),
      {
        partner: write,
        body: M.issueBody,
        response: { 200: M.issued, ...writeErrors },
        detail: partnerTag("Issue a donation claim with an unguessable claim code; emails are queued, not sent"),
      },
    )
    .get(
      "/api/partner/donation-claims/:claim_code",
      async ({ partner, params }) => ok({ claim: await getClaim(ctx.store, ctx, ownerOf(partner.actor), params.claim_code) }),
      {
        partner: read,
        params: M.codeParams,
        query: t.Object(includeMetaQuery),
        response: { 200: M.claimResponse, ...readErrors },
        detail: partnerTag("One of your donation claims; other partners' codes are 404"),
      },
    )
    .post(
      "/api/partner/donation-claims/:claim_code/redeem",
      ({ partner, params, body }) =>
        mutation(partner, async (t) => ok({ claim: await redeemClaim(t, ctx, ownerOf(partner.actor), params.claim_code, body?.redeemed_by ?? null) })),
      {
        partner: write,
        params: M.codeParams,
        body: M.redeemBody,
        response: { 200: M.claimResponse, ...writeErrors },
        detail: partnerTag("Redeem a claim: issued → redeemed exactly once; again → 409 claim_already_redeemed"),
      },
    );
}
