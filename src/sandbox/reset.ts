import type { Owner } from "../auth/actors";
import type { AppContext } from "../context";
import { clearSandboxDonations } from "../donations/sandbox-service";
import { clearSandboxUsers } from "../partner/sandbox-service";
import { clearSandboxSalutes } from "../salutes/sandbox-service";
import { clearSandboxWebhooks } from "../webhooks/sandbox-service";
import { fixtureRecord, fixtureSummary, seedFixtures } from "./fixtures";

/**
 * POST /api/partner/sandbox/reset: deletes the partner's whole sandbox practice state and seeds the fixtures
 * again from the calling key's id. Call inside the request's (idempotency) transaction, so the wipe and the
 * reseed commit together — a crash never leaves a half-empty sandbox. Nonces and idempotency records are kept:
 * they guard the key, not the practice data.
 */
export function resetSandbox(ctx: AppContext, owner: Owner, keyId: string) {
  if (owner.mode !== "sandbox") throw new Error("resetSandbox called with a live owner");
  const db = ctx.db.sqlite;
  const previous = fixtureRecord(ctx, owner);
  // Each owner clears its own rows, children before parents: webhooks, salutes and donations reference users.
  const deleted = {
    ...clearSandboxWebhooks(db, owner.partner),
    ...clearSandboxSalutes(db, owner.partner),
    ...clearSandboxDonations(db, owner.partner),
    ...clearSandboxUsers(db, owner.partner),
  };
  db.query("DELETE FROM sandbox_fixtures WHERE partner = ?").run(owner.partner);
  const rec = seedFixtures(ctx, owner, keyId, (previous?.reset_count ?? 0) + 1);
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
    fixtures: fixtureSummary(ctx, rec),
  };
}
