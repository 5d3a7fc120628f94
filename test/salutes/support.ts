import { expect } from "bun:test";
import type { TestApp } from "../support/app";
import { createKey, signedJson, type SignOptions, type TestKey } from "../support/partner";

/**
 * A partner user straight in the table: these tests are about the ledger, and going through the users routes
 * would make every salutes test depend on another domain's validation.
 */
export function createUser(
  h: TestApp,
  opts: { partner?: string; mode?: "live" | "sandbox"; status?: "active" | "suspended"; externalId?: string } = {},
): string {
  const now = h.clock.now().toISOString();
  const { id } = h.ctx.db.sqlite
    .query("INSERT INTO partner_users (partner, mode, external_id, status, is_verified, created_at, updated_at) VALUES (?, ?, ?, ?, 0, ?, ?) RETURNING id")
    .get(opts.partner ?? "Acme", opts.mode ?? "live", opts.externalId ?? `ext-${crypto.randomUUID()}`, opts.status ?? "active", now, now) as { id: number };
  return String(id);
}

export interface Fixture {
  key: TestKey;
  user: string;
}

/** A live key of partner Acme with every scope, and one active user. */
export function fixture(h: TestApp): Fixture {
  return { key: createKey(h, { partner: "Acme" }), user: createUser(h) };
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

export const ledgerRows = (h: TestApp, userId?: string) =>
  (userId === undefined
    ? h.ctx.db.sqlite.query("SELECT * FROM salutes_ledger ORDER BY id").all()
    : h.ctx.db.sqlite.query("SELECT * FROM salutes_ledger WHERE user_id = ? ORDER BY id").all(Number(userId))) as LedgerRowDb[];

export const eventRows = (h: TestApp) =>
  (
    h.ctx.db.sqlite.query("SELECT id, partner, mode, event_type, data FROM events WHERE event_type LIKE 'salutes.%' ORDER BY id").all() as Array<{
      id: number;
      partner: string;
      mode: string;
      event_type: string;
      data: string;
    }>
  ).map((e) => ({ ...e, data: JSON.parse(e.data) as Record<string, unknown> }));

/** The invariant: every balance row equals the sum of its user's entries, and no entry left a negative balance. */
export function expectLedgerConsistent(h: TestApp): void {
  const mismatched = h.ctx.db.sqlite
    .query(
      `SELECT b.user_id, b.balance_minor, COALESCE((SELECT SUM(delta_minor) FROM salutes_ledger l WHERE l.user_id = b.user_id), 0) AS total
       FROM salutes_balances b WHERE b.balance_minor != total`,
    )
    .all();
  expect(mismatched).toEqual([]);
  const orphans = h.ctx.db.sqlite.query("SELECT DISTINCT user_id FROM salutes_ledger WHERE user_id NOT IN (SELECT user_id FROM salutes_balances)").all();
  expect(orphans).toEqual([]);
  const { n } = h.ctx.db.sqlite.query("SELECT count(*) AS n FROM salutes_ledger WHERE balance_after_minor < 0").get() as { n: number };
  expect(n).toBe(0);
  // Each entry's balance_after is the running sum of its user's entries up to it.
  const broken = h.ctx.db.sqlite
    .query(
      "SELECT id FROM salutes_ledger l WHERE balance_after_minor != (SELECT SUM(delta_minor) FROM salutes_ledger p WHERE p.user_id = l.user_id AND p.id <= l.id)",
    )
    .all();
  expect(broken).toEqual([]);
}
