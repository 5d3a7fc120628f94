import { expect } from "bun:test";
import type { TestApp } from "../support/app";
import { createKey, signedJson, type SignOptions, type TestKey } from "../support/partner";

/**
 * A partner user straight in the table: these tests are about the ledger, and going through the users routes
 * would make every salutes test depend on another domain's validation.
 */
export async function createUser(
  h: TestApp,
  opts: { partner?: string; mode?: "live" | "sandbox"; status?: "active" | "suspended"; externalId?: string } = {},
): Promise<string> {
  const now = h.clock.now().toISOString();
  // In a transaction: outside one, get() reads on SQLite's reader connection, which takes no writes.
  const row = await h.ctx.store.tx((t) =>
    t.get<{ id: number }>(
      "INSERT INTO partner_users (partner, mode, external_id, status, is_verified, created_at, updated_at) VALUES (?, ?, ?, ?, 0, ?, ?) RETURNING id",
      [opts.partner ?? "Acme", opts.mode ?? "live", opts.externalId ?? `ext-${crypto.randomUUID()}`, opts.status ?? "active", now, now],
    ),
  );
  return String(row!.id);
}

export interface Fixture {
  key: TestKey;
  user: string;
}

/** A live key of partner Acme with every scope, and one active user. */
export async function fixture(h: TestApp): Promise<Fixture> {
  return { key: await createKey(h, { partner: "Acme" }), user: await createUser(h) };
}

export const body = (user_id: string, amount: unknown, extra: Record<string, unknown> = {}) => ({
  user_id,
  amount,
  reason: "quest_reward",
  source: "game.arena",
  ...extra,
});

export const credit = (h: TestApp, key: TestKey, b: unknown, opts: SignOptions = {}) => signedJson(h, key, "POST", "/api/salutes/credit", { body: b, ...opts });
export const debit = (h: TestApp, key: TestKey, b: unknown, opts: SignOptions = {}) => signedJson(h, key, "POST", "/api/salutes/debit", { body: b, ...opts });

export interface LedgerRowDb {
  id: number;
  user_id: number;
  partner: string;
  mode: string;
  delta_minor: number;
  balance_after_minor: number;
  reason: string;
  source: string;
  key_id: string | null;
  idempotency_key: string | null;
}

export const ledgerRows = (h: TestApp, userId?: string): Promise<LedgerRowDb[]> =>
  userId === undefined
    ? h.ctx.store.all<LedgerRowDb>("SELECT * FROM salutes_ledger ORDER BY id")
    : h.ctx.store.all<LedgerRowDb>("SELECT * FROM salutes_ledger WHERE user_id = ? ORDER BY id", [Number(userId)]);

export const eventRows = async (h: TestApp) =>
  (
    await h.ctx.store.all<{ id: number; partner: string; mode: string; event_type: string; data: string }>(
      "SELECT id, partner, mode, event_type, data FROM events WHERE event_type LIKE 'salutes.%' ORDER BY id",
    )
  ).map((e) => ({ ...e, data: JSON.parse(e.data) as Record<string, unknown> }));

/** The invariant: every balance row equals the sum of its user's entries, and no entry left a negative balance. */
export async function expectLedgerConsistent(h: TestApp): Promise<void> {
  // SUM of a bigint column is numeric on PostgreSQL: compared in SQL, never read into JavaScript.
  const mismatched = await h.ctx.store.all(
    `SELECT b.user_id, b.balance_minor FROM salutes_balances b
     WHERE b.balance_minor != COALESCE((SELECT SUM(l.delta_minor) FROM salutes_ledger l WHERE l.user_id = b.user_id), 0)`,
  );
  expect(mismatched).toEqual([]);
  const orphans = await h.ctx.store.all("SELECT DISTINCT user_id FROM salutes_ledger WHERE user_id NOT IN (SELECT user_id FROM salutes_balances)");
  expect(orphans).toEqual([]);
  expect(await h.ctx.store.get("SELECT count(*) AS n FROM salutes_ledger WHERE balance_after_minor < 0")).toEqual({ n: 0 });
  // Each entry's balance_after is the running sum of its user's entries up to it.
  const broken = await h.ctx.store.all(
    "SELECT id FROM salutes_ledger l WHERE balance_after_minor != (SELECT SUM(p.delta_minor) FROM salutes_ledger p WHERE p.user_id = l.user_id AND p.id <= l.id)",
  );
  expect(broken).toEqual([]);
}
