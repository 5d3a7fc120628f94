import type { Owner } from "../auth/actors";
import type { AppContext } from "../context";
import { fixtureRecord, fixtureSummary, seedFixtures } from "./fixtures";

/**
 * Children before parents (foreign keys are on). Every statement names mode = 'sandbox' as a LITERAL, never a
 * bound parameter: whatever owner this is handed, it cannot delete a live row. The live ledger is append-only;
 * the sandbox practice ledger is the one place rows are deleted, and only by this reset.
 */
const DELETES: Array<[name: string, sql: string]> = [
  ["webhook_attempts", "DELETE FROM webhook_attempts WHERE delivery_id IN (SELECT id FROM webhook_deliveries WHERE partner = ?1 AND mode = 'sandbox')"],
  ["webhook_deliveries", "DELETE FROM webhook_deliveries WHERE partner = ?1 AND mode = 'sandbox'"],
  ["events", "DELETE FROM events WHERE partner = ?1 AND mode = 'sandbox'"],
  ["webhooks", "DELETE FROM webhooks WHERE partner = ?1 AND mode = 'sandbox'"],
  ["salutes_conversions", "DELETE FROM salutes_conversions WHERE partner = ?1 AND mode = 'sandbox'"],
  ["salutes_ledger", "DELETE FROM salutes_ledger WHERE partner = ?1 AND mode = 'sandbox'"],
  ["salutes_balances", "DELETE FROM salutes_balances WHERE partner = ?1 AND mode = 'sandbox'"],
  ["donation_claims", "DELETE FROM donation_claims WHERE partner = ?1 AND mode = 'sandbox'"],
  ["wallet_links", "DELETE FROM wallet_links WHERE partner = ?1 AND mode = 'sandbox'"],
  ["partner_users", "DELETE FROM partner_users WHERE partner = ?1 AND mode = 'sandbox'"],
];

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
  const deleted: Record<string, number> = {};
  for (const [name, sql] of DELETES) deleted[name] = db.query(sql).run(owner.partner).changes;
  db.query("DELETE FROM sandbox_fixtures WHERE partner = ?").run(owner.partner);
  const rec = seedFixtures(ctx, owner, keyId, (previous?.reset_count ?? 0) + 1);
  return {
    reset: true as const,
    deleted: {
      users: deleted.partner_users!,
      wallets: deleted.wallet_links!,
      ledger_entries: deleted.salutes_ledger!,
      balances: deleted.salutes_balances!,
      conversions: deleted.salutes_conversions!,
      donation_claims: deleted.donation_claims!,
      webhooks: deleted.webhooks!,
      deliveries: deleted.webhook_deliveries!,
      delivery_attempts: deleted.webhook_attempts!,
      events: deleted.events!,
    },
    fixtures: fixtureSummary(ctx, rec),
  };
}
