import type { Database, Statement } from "bun:sqlite";
import type { Owner } from "../auth/actors";
import type { AppContext } from "../context";
import { AppError } from "../http/errors";
import { emitEventSync } from "../webhooks/service";
import { MAX_EXACT_MINOR, minorToNumber } from "./amounts";

/**
 * The ledger's hot statements, prepared once per database connection (a credit is the busiest write partners
 * make; re-preparing per request would cost more than the inserts).
 */
export interface LedgerStatements {
  balance: Statement<{ balance_minor: number }, [number]>;
  insertEntry: Statement<{ id: number }, [number, string, string, number, number, string, string, string | null, string | null, string]>;
  upsertBalance: Statement<unknown, [number, string, string, number, string]>;
}

const cache = new WeakMap<Database, LedgerStatements>();

export function ledgerStatements(sqlite: Database): LedgerStatements {
  let s = cache.get(sqlite);
  if (!s) {
    s = {
      balance: sqlite.prepare("SELECT balance_minor FROM salutes_balances WHERE user_id = ?"),
      insertEntry: sqlite.prepare(
        `INSERT INTO salutes_ledger (user_id, partner, mode, delta_minor, balance_after_minor, reason, source, key_id, idempotency_key, created_at)
         VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?) RETURNING id`,
      ),
      upsertBalance: sqlite.prepare(
        `INSERT INTO salutes_balances (user_id, partner, mode, balance_minor, updated_at) VALUES (?1, ?2, ?3, ?4, ?5)
         ON CONFLICT (user_id) DO UPDATE SET balance_minor = ?4, updated_at = ?5`,
      ),
    };
    cache.set(sqlite, s);
  }
  return s;
}

/** A user's balance in minor units; a user never credited has no row and a balance of 0. */
export function balanceMinorOf(sqlite: Database, userId: number): number {
  return ledgerStatements(sqlite).balance.get(userId)?.balance_minor ?? 0;
}

export interface EntryInput {
  userId: number;
  /** Signed minor units: positive credits, negative debits. */
  deltaMinor: number;
  reason: string;
  source: string;
  keyId: string | null;
  idempotencyKey: string | null;
}

export interface AppendedEntry {
  id: number;
  balanceAfterMinor: number;
  createdAt: string;
}

/**
 * Appends one ledger row and moves the balance with it. Call INSIDE a transaction: the read of the balance,
 * the entry and the new balance commit together, which is what keeps balance = sum(delta) under concurrency.
 * The ledger is append-only — nothing here (or anywhere) updates or deletes an entry.
 */
export function appendEntry(ctx: AppContext, owner: Owner, input: EntryInput): AppendedEntry {
  const s = ledgerStatements(ctx.db.sqlite);
  const before = s.balance.get(input.userId)?.balance_minor ?? 0;
  const after = before + input.deltaMinor;
  if (after < 0) {
    const d = ctx.config.salutes.decimals;
    const balance = minorToNumber(before, d);
    const requested = minorToNumber(-input.deltaMinor, d);
    throw new AppError("insufficient_balance", `Balance is ${balance}; debiting ${requested} would take it below zero`, { details: { balance, requested } });
  }
  if (after > MAX_EXACT_MINOR) {
    throw new AppError("conflict", "This credit would take the balance past the largest amount Herald keeps exactly; debit first or split across users");
  }
  const createdAt = ctx.clock.now().toISOString();
  const { id } = s.insertEntry.get(
    input.userId,
    owner.partner,
    owner.mode,
    input.deltaMinor,
    after,
    input.reason,
    input.source,
    input.keyId,
    input.idempotencyKey,
    createdAt,
  )!;
  s.upsertBalance.run(input.userId, owner.partner, owner.mode, after, createdAt);
  return { id, balanceAfterMinor: after, createdAt };
}

/**
 * `salutes.credit` / `salutes.debit` in the entry's transaction (the outbox row exists exactly when the entry
 * does). Returns how many deliveries it queued: with no subscribed webhook there is nothing to nudge the
 * dispatcher for, and skipping that pass is a fifth of a credit's cost.
 */
export function emitLedgerEvent(
  ctx: AppContext,
  owner: Owner,
  entry: AppendedEntry,
  data: { user_id: string; delta: number; balance: number; reason: string; source: string },
): number {
  return emitEventSync({ sqlite: ctx.db.sqlite, clock: ctx.clock, rng: ctx.rng }, owner, data.delta < 0 ? "salutes.debit" : "salutes.credit", {
    user_id: data.user_id,
    delta: data.delta,
    balance: data.balance,
    ledger_entry_id: entry.id,
    reason: data.reason,
    source: data.source,
  }).deliveryIds.length;
}
