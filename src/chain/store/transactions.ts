import { apartTask } from "../../db/apart";
import { changed, countOf, type Queryable } from "../../db/port";
import type { RowOf } from "../../db/rows";
import type { chainSyncCursors, chainTransactions } from "../tables";

// chain_transactions and chain_sync_cursors: what transaction-sync stores and where it resumes (tx-sync.ts says how
// overlapping runs stay safe: insertTransaction and moveCursor below).

export type TransactionRow = RowOf<typeof chainTransactions>;
export type CursorRow = RowOf<typeof chainSyncCursors>;
export type TransactionView = Pick<TransactionRow, "signature" | "slot" | "block_time" | "status" | "token_delta_raw" | "amount_moved_raw" | "found_via">;

export async function cursorOf(q: Queryable, mint: string, address: string): Promise<string | null> {
  const row = await q.get<Pick<CursorRow, "last_signature">>("SELECT last_signature FROM chain_sync_cursors WHERE mint = ? AND address = ?", [mint, address]);
  return row?.last_signature ?? null;
}

export function cursorsOf(q: Queryable, mint: string) {
  return q.all<Pick<CursorRow, "address" | "last_signature" | "last_slot" | "updated_at">>(
    "SELECT address, last_signature, last_slot, updated_at FROM chain_sync_cursors WHERE mint = ? ORDER BY address",
    [mint],
  );
}

export async function isStored(q: Queryable, signature: string): Promise<boolean> {
  return (await q.get("SELECT 1 AS one FROM chain_transactions WHERE signature = ?", [signature])) !== null;
}

/** Stores a transaction unless its signature is stored already; true when this call stored it. */
export async function insertTransaction(q: Queryable, r: TransactionRow): Promise<boolean> {
  return changed(
    q,
    `INSERT INTO chain_transactions (signature, mint, slot, block_time, status, token_delta_raw, lp_delta_raw, amount_moved_raw, found_via, sync_run_id, synced_at)
     VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?) ON CONFLICT (signature) DO NOTHING`,
    [r.signature, r.mint, r.slot, r.block_time, r.status, r.token_delta_raw, r.lp_delta_raw, r.amount_moved_raw, r.found_via, r.sync_run_id, r.synced_at],
  );
}

/**
 * Moves an address's cursor to a signature, forward only: a cursor at a later slot is left where it is, so a run
 * that overlaps a faster one (a manual run beside the scheduled one) cannot take it back. Within one slot it may
 * move either way; the next run then finds the other signatures of that slot stored already.
 */
export async function moveCursor(q: Queryable, c: CursorRow): Promise<void> {
  await q.run(
    `INSERT INTO chain_sync_cursors (mint, address, last_signature, last_slot, updated_at) VALUES (?, ?, ?, ?, ?)
     ON CONFLICT (mint, address) DO UPDATE SET last_signature = excluded.last_signature, last_slot = excluded.last_slot, updated_at = excluded.updated_at
     WHERE chain_sync_cursors.last_slot <= excluded.last_slot`,
    [c.mint, c.address, c.last_signature, c.last_slot, c.updated_at],
  );
}

export const countTransactions = (q: Queryable, mint: string) => countOf(q, "SELECT count(*) AS n FROM chain_transactions WHERE mint = ?", [mint]);

/**
 * The mint's stored transactions, counted apart from the event loop (src/db/apart.ts): every one is an index entry
 * (the public transaction-sync proof held /healthz 140–173 ms at 2,000,000 on SQLite before).
 */
export const transactionCountTask = apartTask("chain-transaction-count", (q, a: { mint: string }) => countTransactions(q, a.mint));

/** The newest `limit` transactions of the mint by slot (signature breaks ties, so pages are stable). */
export function latestTransactionRows(q: Queryable, mint: string, limit: number): Promise<TransactionView[]> {
  return q.all<TransactionView>(
    `SELECT signature, slot, block_time, status, token_delta_raw, amount_moved_raw, found_via FROM chain_transactions
     WHERE mint = ? ORDER BY slot DESC, signature LIMIT ?`,
    [mint, limit],
  );
}

/** The amounts moved by successful transactions since `sinceIso` (decimal text: summed exactly by the caller). */
export async function amountsMovedSince(q: Queryable, mint: string, sinceIso: string): Promise<string[]> {
  const rows = await q.all<Pick<TransactionRow, "amount_moved_raw">>(
    "SELECT amount_moved_raw FROM chain_transactions WHERE mint = ? AND block_time >= ? AND status = 'ok'",
    [mint, sinceIso],
  );
  return rows.map((r) => r.amount_moved_raw);
}
