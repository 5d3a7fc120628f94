import type { Owner } from "../../auth/actors";
import { type BatchedDelete, IN_KEY_LIST } from "../../db/batched-delete";
import { type Dialect, insertedId, type Queryable, Where } from "../../db/port";
import type { RowOf } from "../../db/rows";
import type { salutesLedger } from "../tables";

// salutes_ledger and salutes_balances: the only SQL that touches them. The balance moves by a CONDITIONAL
// statement that holds its own check — never a read, a check in TypeScript and a write — so two instances (or
// two transactions on PostgreSQL) debiting one user at once can never take the balance below zero: the second
// waits for the first's row lock, then re-evaluates the condition on the new balance. The ledger row records the
// balance that statement returned, so balance = Σ ledger always.

export type LedgerRow = Pick<RowOf<typeof salutesLedger>, "id" | "user_id" | "delta_minor" | "balance_after_minor" | "reason" | "source" | "created_at">;

const BALANCE = "SELECT balance_minor FROM salutes_balances WHERE user_id = ?";

/** A credit: the row is made on the first credit; refused (no row back) if it would pass `maxMinor`. */
const CREDIT = `INSERT INTO salutes_balances (user_id, partner, mode, balance_minor, updated_at) VALUES (?, ?, ?, ?, ?)
  ON CONFLICT (user_id) DO UPDATE SET balance_minor = salutes_balances.balance_minor + excluded.balance_minor, updated_at = excluded.updated_at
  WHERE salutes_balances.balance_minor + excluded.balance_minor <= ?
  RETURNING balance_minor`;

/** A debit: only an existing balance that stays at or above zero moves (no row back otherwise). */
const DEBIT = `UPDATE salutes_balances SET balance_minor = balance_minor + ?, updated_at = ?
  WHERE user_id = ? AND balance_minor + ? >= 0
  RETURNING balance_minor`;

const INSERT_ENTRY = `INSERT INTO salutes_ledger (user_id, partner, mode, delta_minor, balance_after_minor, reason, source, key_id, idempotency_key, created_at)
  VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?) RETURNING id`;

export interface EntryRow {
  userId: number;
  /** Signed minor units: positive credits, negative debits. */
  deltaMinor: number;
  reason: string;
  source: string;
  keyId: string | null;
  idempotencyKey: string | null;
  at: string;
}

/** The statement that moves the balance by `deltaMinor` (conditional), and its parameters. */
function balanceMove(owner: Owner, e: EntryRow, maxMinor: number): [string, Array<string | number>] {
  return e.deltaMinor >= 0
    ? [CREDIT, [e.userId, owner.partner, owner.mode, e.deltaMinor, e.at, maxMinor]]
    : [DEBIT, [e.deltaMinor, e.at, e.userId, e.deltaMinor]];
}

const entryParams = (owner: Owner, e: EntryRow, after: number) => [
  e.userId,
  owner.partner,
  owner.mode,
  e.deltaMinor,
  after,
  e.reason,
  e.source,
  e.keyId,
  e.idempotencyKey,
  e.at,
];

export async function balanceOf(q: Queryable, userId: number): Promise<number> {
  return (await q.get<{ balance_minor: number }>(BALANCE, [userId]))?.balance_minor ?? 0;
}

/**
 * PostgreSQL: the move and the entry in one statement (one round trip instead of two), the entry written only if
 * the move returned its row. SQLite has no data-modifying CTEs; there the two statements run in turn, in process.
 */
const MOVED = "moved AS (%MOVE%)";
const ENTRY_AFTER_MOVE = `INSERT INTO salutes_ledger (user_id, partner, mode, delta_minor, balance_after_minor, reason, source, key_id, idempotency_key, created_at)
  SELECT CAST(? AS bigint), CAST(? AS text), CAST(? AS text), CAST(? AS bigint), moved.balance_minor, CAST(? AS text), CAST(? AS text), CAST(? AS text), CAST(? AS text), CAST(? AS text)
  FROM moved RETURNING id, balance_after_minor`;
const POSTGRES_CREDIT_ENTRY = `WITH ${MOVED.replace("%MOVE%", CREDIT)} ${ENTRY_AFTER_MOVE}`;
const POSTGRES_DEBIT_ENTRY = `WITH ${MOVED.replace("%MOVE%", DEBIT)} ${ENTRY_AFTER_MOVE}`;

/**
 * Moves the balance and appends the entry, in the caller's transaction `t`; null when the condition refused the
 * move (a debit past zero, a credit past `maxMinor`): nothing was written.
 */
export async function appendLedgerEntry(t: Queryable, owner: Owner, e: EntryRow, maxMinor: number): Promise<{ id: number; balanceAfterMinor: number } | null> {
  const [sql, params] = balanceMove(owner, e, maxMinor);
  if (t.dialect === "postgres") {
    const entry = e.deltaMinor >= 0 ? POSTGRES_CREDIT_ENTRY : POSTGRES_DEBIT_ENTRY;
    // The entry's parameters but balance_after_minor, which the move returns.
    const entryOwn = entryParams(owner, e, 0).filter((_, i) => i !== 4);
    const row = await t.get<{ id: number; balance_after_minor: number }>(entry, [...params, ...entryOwn]);
    return row ? { id: row.id, balanceAfterMinor: row.balance_after_minor } : null;
  }
  const moved = await t.get<{ balance_minor: number }>(sql, params);
  if (!moved) return null;
  const id = await insertedId(t, INSERT_ENTRY, entryParams(owner, e, moved.balance_minor));
  return { id, balanceAfterMinor: moved.balance_minor };
}

/** One user's entries, newest first unless ascending; keyset on id (salutes_ledger_user_idx). */
export function ledgerPage(
  q: Queryable,
  owner: Owner,
  f: { userId: number; order: "asc" | "desc"; reason: string | null; source: string | null; afterId: number | null; limit: number; offset: number },
) {
  const w = new Where()
    .add("user_id = ? AND partner = ? AND mode = ?", f.userId, owner.partner, owner.mode)
    .when(f.reason, "reason = ?")
    .when(f.source, "source = ?")
    .when(f.afterId, f.order === "desc" ? "id < ?" : "id > ?");
  return q.all<LedgerRow>(
    `SELECT id, user_id, delta_minor, balance_after_minor, reason, source, created_at FROM salutes_ledger ${w.sql} ORDER BY id ${f.order === "desc" ? "DESC" : "ASC"} LIMIT ? OFFSET ?`,
    [...w.params, f.limit, f.offset],
  );
}

/** The user's completed conversions in [start, end), minor units (salutes_conversions_user_idx). */
export async function convertedBetween(q: Queryable, owner: Owner, userId: number, start: string, end: string): Promise<number> {
  const row = await q.get<{ used: number }>(
    "SELECT COALESCE(SUM(amount_minor), 0) AS used FROM salutes_conversions WHERE user_id = ? AND partner = ? AND mode = ? AND status = 'completed' AND created_at >= ? AND created_at < ?",
    [userId, owner.partner, owner.mode, start, end],
  );
  return row?.used ?? 0;
}

export async function insertConversion(
  t: Queryable,
  owner: Owner,
  c: { userId: number; amountMinor: number; rate: string; converted: string; target: string; ledgerEntryId: number; at: string },
): Promise<number> {
  return insertedId(
    t,
    `INSERT INTO salutes_conversions (user_id, partner, mode, amount_minor, rate, converted_amount, target, status, ledger_entry_id, created_at)
     VALUES (?, ?, ?, ?, ?, ?, ?, 'completed', ?, ?) RETURNING id`,
    [c.userId, owner.partner, owner.mode, c.amountMinor, c.rate, c.converted, c.target, c.ledgerEntryId, c.at],
  );
}

// ---- the sandbox reset (src/salutes/sandbox-service.ts), children before parents. The rows go by their users' ids,
// given as ONE parameter (IN_KEY_LIST): these tables have no index on (partner, mode) — a user id names one owner
// already, and each index more is one more B-tree insert per credit — so `partner = ? AND mode = 'sandbox'` alone
// read the whole ledger, live entries included, at every reset. The partner and the LITERAL mode stay in each
// condition: whatever ids this is handed, it cannot delete a live row.

export type SandboxSalutesTable = "salutes_conversions" | "salutes_ledger" | "salutes_balances";

/** `user_id` in the list, the one parameter (each statement adds the partner and the literal mode after it). */
const IN_USERS: Record<Dialect, string> = { sqlite: `user_id ${IN_KEY_LIST.sqlite.sql}`, postgres: `user_id ${IN_KEY_LIST.postgres.sql}` };
const usersParams = (dialect: Dialect, partner: string, userIds: readonly number[]) => [IN_KEY_LIST[dialect].encode(userIds), partner];

/** What remains of these users' rows, in a transaction of the reset: conversions before the entries they name. */
export const sandboxDeletesOf = (dialect: Dialect, partner: string, userIds: readonly number[]) => ({
  params: usersParams(dialect, partner, userIds),
  deletes: [
    ["salutes_conversions", `DELETE FROM salutes_conversions WHERE ${IN_USERS[dialect]} AND partner = ? AND mode = 'sandbox'`],
    ["salutes_ledger", `DELETE FROM salutes_ledger WHERE ${IN_USERS[dialect]} AND partner = ? AND mode = 'sandbox'`],
    ["salutes_balances", `DELETE FROM salutes_balances WHERE ${IN_USERS[dialect]} AND partner = ? AND mode = 'sandbox'`],
  ] as ReadonlyArray<readonly [SandboxSalutesTable, string]>,
});

/**
 * The bulk of these users' conversions and ledger entries, in batches before the reset's transaction, down the
 * user_id indexes (salutes_conversions_user_idx, salutes_ledger_user_idx). The sandbox has no conversion route, so
 * no conversion is written between the two: the entries' batches never fail on one naming them.
 */
export const sandboxBatchesOf = (
  dialect: Dialect,
  partner: string,
  userIds: readonly number[],
): ReadonlyArray<BatchedDelete & { table: SandboxSalutesTable }> => [
  { table: "salutes_conversions", where: `${IN_USERS[dialect]} AND partner = ? AND mode = 'sandbox'`, params: usersParams(dialect, partner, userIds) },
  { table: "salutes_ledger", where: `${IN_USERS[dialect]} AND partner = ? AND mode = 'sandbox'`, params: usersParams(dialect, partner, userIds) },
];
