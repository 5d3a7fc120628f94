import type { Queryable, Store } from "../../db/port";

// The audit's reads of the chain domain's tables (read-only; test/conventions/layering.test.ts allows them). They
// are here, in one file, because the audit needs shapes no chain verb offers (keyset pages of unexamined
// transactions, slot-range sums, rows after a watermark); each statement names the chain index it rides on. The
// row shapes are the columns selected: a domain does not import another's tables.

export interface ChainTxRow {
  signature: string;
  slot: number;
  block_time: string | null;
  status: "ok" | "failed";
  token_delta_raw: string;
  lp_delta_raw: string;
  amount_moved_raw: string;
  twin: number;
}

/**
 * The next page of synced transactions of the mint that no complete run examined, in (slot, signature) order
 * after the given position. `twin` says whether another row of the same slot, block time, status, deltas and
 * amount sorts before it (duplicate_signature); both probes use chain_transactions_mint_slot_idx. "Examined" is
 * a set (audit_examined), not an id watermark: a transaction stored late is still examined.
 */
export function unexaminedTransactions(q: Queryable, mint: string, after: { slot: number; signature: string } | null, limit: number): Promise<ChainTxRow[]> {
  const slot = after?.slot ?? -1;
  return q.all<ChainTxRow>(
    `SELECT c.signature, c.slot, c.block_time, c.status, c.token_delta_raw, c.lp_delta_raw, c.amount_moved_raw,
       CASE WHEN EXISTS (SELECT 1 FROM chain_transactions d WHERE d.mint = c.mint AND d.slot = c.slot AND d.signature < c.signature
         AND d.status = c.status AND d.token_delta_raw = c.token_delta_raw AND d.lp_delta_raw = c.lp_delta_raw AND d.amount_moved_raw = c.amount_moved_raw
         AND (d.block_time = c.block_time OR (d.block_time IS NULL AND c.block_time IS NULL))) THEN 1 ELSE 0 END AS twin
     FROM chain_transactions c
     WHERE c.mint = ? AND (c.slot > ? OR (c.slot = ? AND c.signature > ?))
       AND NOT EXISTS (SELECT 1 FROM audit_examined e WHERE e.signature = c.signature)
     ORDER BY c.slot, c.signature
     LIMIT ?`,
    [mint, slot, slot, after?.signature ?? "", limit],
  );
}

/** Σ token_delta and Σ lp_delta of synced ok transactions with from < slot ≤ to (balance_mismatch), exactly. */
export async function syncedDeltaBetween(q: Queryable, mint: string, fromSlot: number, toSlot: number): Promise<{ tracked: bigint; lp: bigint }> {
  const rows = await q.all<{ token_delta_raw: string; lp_delta_raw: string }>(
    "SELECT token_delta_raw, lp_delta_raw FROM chain_transactions WHERE mint = ? AND status = 'ok' AND slot > ? AND slot <= ?",
    [mint, fromSlot, toSlot],
  );
  let tracked = 0n;
  let lp = 0n;
  for (const r of rows) {
    tracked += BigInt(r.token_delta_raw);
    lp += BigInt(r.lp_delta_raw);
  }
  return { tracked, lp };
}

type WatermarkTable = "chain_token_snapshots" | "chain_mint_authority_snapshots" | "chain_sync_runs";

/**
 * PostgreSQL only: waits until every transaction that is inserting into `table` has ended, so that the rows read
 * next in the same transaction have no gaps below their largest id. PostgreSQL hands out ids when a row is
 * inserted, not when it commits: a reader could see id 11 while id 10 is still uncommitted, move its watermark
 * past 10 and never read it. SHARE mode conflicts only with writers, is held until the read's transaction ends
 * (milliseconds: the reads below), and this transaction holds no other lock while it waits, so it cannot deadlock.
 * SQLite needs nothing: its one writer commits each insert before the next begins, so ids commit in order.
 */
const settledInsertsPostgres = (table: WatermarkTable) => `LOCK TABLE ${table} IN SHARE MODE`;

/**
 * The reads of one of those tables by id: the rows after the id watermark, read so that no row below the largest
 * one read is still on its way, and the row before an id (the previous snapshot of a run's first one). `select`
 * names its table in full, so that each read stays visible to test/conventions/layering.test.ts.
 */
function byId<T>(table: WatermarkTable, select: string) {
  return {
    after(store: Store, mint: string, afterId: number): Promise<T[]> {
      const sql = `${select} WHERE mint = ? AND id > ? ORDER BY id`;
      if (store.dialect !== "postgres") return store.all<T>(sql, [mint, afterId]);
      return store.tx(async (t) => {
        await t.run(settledInsertsPostgres(table));
        return t.all<T>(sql, [mint, afterId]);
      });
    },
    before: (q: Queryable, mint: string, id: number): Promise<T | null> => q.get<T>(`${select} WHERE mint = ? AND id < ? ORDER BY id DESC LIMIT 1`, [mint, id]),
  };
}

export interface TokenSnapshotFacts {
  id: number;
  taken_at: string;
  slot: number | null;
  decimals: number;
  treasury_raw: string;
  reserve_raw: string;
  wallets_json: string;
}

export const { after: tokenSnapshotsAfter, before: tokenSnapshotBefore } = byId<TokenSnapshotFacts>(
  "chain_token_snapshots",
  "SELECT id, taken_at, slot, decimals, treasury_raw, reserve_raw, wallets_json FROM chain_token_snapshots",
);

/** Whether a transaction sync finished after `takenAt` (only then are the transactions up to a snapshot stored). */
export async function syncFinishedAfter(q: Queryable, mint: string, takenAt: string): Promise<boolean> {
  return (await q.get("SELECT 1 AS found FROM chain_sync_runs WHERE mint = ? AND taken_at > ? LIMIT 1", [mint, takenAt])) !== null;
}

/** The decimals of the latest token snapshot of the mint (the audit converts thresholds with them). */
export async function latestDecimals(q: Queryable, mint: string): Promise<number | null> {
  const row = await q.get<{ decimals: number }>("SELECT decimals FROM chain_token_snapshots WHERE mint = ? ORDER BY id DESC LIMIT 1", [mint]);
  return row?.decimals ?? null;
}

export interface AuthoritySnapshotFacts {
  id: number;
  taken_at: string;
  slot: number | null;
  mint_authority: string | null;
  freeze_authority: string | null;
  mismatch: number;
  mismatch_fields: string;
}

export const { after: authoritySnapshotsAfter, before: authoritySnapshotBefore } = byId<AuthoritySnapshotFacts>(
  "chain_mint_authority_snapshots",
  "SELECT id, taken_at, slot, mint_authority, freeze_authority, mismatch, mismatch_fields FROM chain_mint_authority_snapshots",
);

export interface SyncRunFacts {
  id: number;
  taken_at: string;
  gap_detected: number;
  new_signatures: number;
  stored: number;
  newest_slot: number | null;
}

export const { after: syncRunsAfter } = byId<SyncRunFacts>(
  "chain_sync_runs",
  "SELECT id, taken_at, gap_detected, new_signatures, stored, newest_slot FROM chain_sync_runs",
);
