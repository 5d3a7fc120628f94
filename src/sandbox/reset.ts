import type { Owner } from "../auth/actors";
import type { AppContext } from "../context";
import type { Queryable } from "../db/port";
import { clearSandboxDonations } from "../donations/sandbox-service";
import { clearSandboxUsers } from "../partner/sandbox-service";
import { clearSandboxSalutes } from "../salutes/sandbox-service";
import { clearSandboxWebhooks } from "../webhooks/sandbox-service";
import { fixtureSummary, seedFixtures } from "./fixtures";
import { deleteFixtureRow, fixtureRecordOf, lockFixtureRow } from "./store";

/**
 * POST /api/partner/sandbox/reset: deletes the partner's whole sandbox practice state and seeds the fixtures
 * again from the calling key's id. Runs with the request's (idempotency) transaction handle `t`, one
 * ctx.store.tx, so the wipe and the reseed commit together — a crash never leaves a half-empty sandbox. Nonces
 * and idempotency records are kept: they guard the key, not the practice data.
 */
export async function resetSandbox(t: Queryable, ctx: AppContext, owner: Owner, keyId: string) {
  if (owner.mode !== "sandbox") throw new Error("resetSandbox called with a live owner");
  // Two resets of one partner at once (on PostgreSQL: several instances) take turns: the first statement locks
  // the fixture row, so a second waits here until the first commits and then sees — and deletes — what the first
  // seeded. Having waited, it finds the row replaced and locks the new one (the route seeded it before this
  // transaction, so it exists).
  if (!(await lockFixtureRow(t, owner.partner))) await lockFixtureRow(t, owner.partner);
  const previous = await fixtureRecordOf(t, owner.partner);
  // Each owner clears its own rows, children before parents: webhooks, salutes and donations reference users.
  const deleted = {
    ...(await clearSandboxWebhooks(t, owner.partner)),
    ...(await clearSandboxSalutes(t, owner.partner)),
    ...(await clearSandboxDonations(t, owner.partner)),
    ...(await clearSandboxUsers(t, owner.partner)),
  };
  // Deleted and claimed again in this transaction: a concurrent first call's claim waits for it and then finds
  // the new row (src/sandbox/fixtures.ts), so no state in between is ever committed.
  await deleteFixtureRow(t, owner.partner);
  const rec = await seedFixtures(t, ctx, owner, keyId, (previous?.reset_count ?? 0) + 1);
  if (!rec) throw new Error(`sandbox fixtures of ${owner.partner}: the row deleted in this transaction could not be claimed again`);
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
