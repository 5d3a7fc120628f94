import type { Owner } from "../auth/actors";
import type { AppContext } from "../context";
import type { Queryable } from "../db/port";
import { clearSandboxDonations } from "../donations/sandbox-service";
import { clearSandboxUsers } from "../partner/sandbox-service";
import { clearSandboxSalutes } from "../salutes/sandbox-service";
import { clearSandboxWebhooks } from "../webhooks/sandbox-service";
import { fixtureSummary, reseedFixtures } from "./fixtures";

/**
 * POST /api/partner/sandbox/reset: deletes the partner's whole sandbox practice state and seeds the fixtures
 * again from the calling key's id. Runs with the request's (idempotency) transaction handle `t`, one
 * ctx.store.tx, so the wipe and the reseed commit together — a crash never leaves a half-empty sandbox. Nonces
 * and idempotency records are kept: they guard the key, not the practice data.
 */
export async function resetSandbox(t: Queryable, ctx: AppContext, owner: Owner, keyId: string) {
  if (owner.mode !== "sandbox") throw new Error("resetSandbox called with a live owner");
  // Two resets of one partner at once (on PostgreSQL: several instances) take turns on the partner's fixture row,
  // which the reset updates in place and never deletes: the second waits until the first commits, then deletes
  // what the first seeded. Sandbox writes hold the same row shared (holdingSandbox), so none lands in between.
  // Each owner clears its own rows, children before parents: webhooks, salutes and donations reference users.
  const { deleted, rec } = await reseedFixtures(t, ctx, owner, keyId, async () => ({
    ...(await clearSandboxWebhooks(t, owner.partner)),
    ...(await clearSandboxSalutes(t, owner.partner)),
    ...(await clearSandboxDonations(t, owner.partner)),
    ...(await clearSandboxUsers(t, owner.partner)),
  }));
  return {
    reset: true as const,
    deleted: {
      users: deleted.partner_users,
      wallets: deleted.wallet_links,
      ledger_entries: deleted.salutes_ledger,
      balances: deleted.salutes_balances,
      conversions: deleted.salutes_conversions,
      donation_claims: deleted.donation_claims,
      webhooks: deleted.webhooks,
      deliveries: deleted.webhook_deliveries,
      delivery_attempts: deleted.webhook_attempts,
      events: deleted.events,
    },
    fixtures: await fixtureSummary(t, rec),
  };
}
