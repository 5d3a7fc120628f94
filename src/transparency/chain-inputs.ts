import type { AppContext } from "../context";

// The audit's reads of the chain domain's tables (read-only). They are here, in one file, because the audit
// needs shapes no chain verb offers (keyset pages of unexamined transactions, slot-range sums); each statement
// names the chain index it rides on.

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
 * amount sorts before it (duplicate_signature); both probes use chain_transactions_mint_slot_idx.
 */
export function unexaminedTransactions(ctx: AppContext, mint: string, after: { slot: number; signature: string } | null, limit: number): ChainTxRow[] {
  return ctx.db.sqlite
    .query(
      `SELECT c.signature, c.slot, c.block_time, c.status, c.token_delta_raw, c.lp_delta_raw, c.amount_moved_raw,
         EXISTS (SELECT 1 FROM chain_transactions d WHERE d.mint = c.mint AND d.slot = c.slot AND d.signature < c.signature
           AND d.status = c.status AND d.token_delta_raw = c.token_delta_raw AND d.lp_delta_raw = c.lp_delta_raw AND d.amount_moved_raw = c.amount_moved_raw
           AND (d.block_time = c.block_time OR (d.block_time IS NULL AND c.block_time IS NULL))) AS twin
       FROM chain_transactions c
       WHERE c.mint = ?1 AND (c.slot > ?2 OR (c.slot = ?2 AND c.signature > ?3))
         AND NOT EXISTS (SELECT 1 FROM audit_examined e WHERE e.signature = c.signature)
       ORDER BY c.slot, c.signature
       LIMIT ?4`,
    )
    .all(mint, after?.slot ?? -1, after?.signature ?? "", limit) as ChainTxRow[];
}

/** Σ token_delta and Σ lp_delta of synced ok transactions with from < slot ≤ to (balance_mismatch), exactly. */
export function syncedDeltaBetween(ctx: AppContext, mint: string, fromSlot: number, toSlot: number): { tracked: bigint; lp: bigint } {
  const rows = ctx.db.sqlite
    .query("SELECT token_delta_raw, lp_delta_raw FROM chain_transactions WHERE mint = ? AND status = 'ok' AND slot > ? AND slot <= ?")
    .values(mint, fromSlot, toSlot) as Array<[string, string]>;
  let tracked = 0n;
  let lp = 0n;
  for (const [d, l] of rows) {
    tracked += BigInt(d);
    lp += BigInt(l);
  }
  return { tracked, lp };
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

const TOKEN_COLUMNS = "id, taken_at, slot, decimals, treasury_raw, reserve_raw, wallets_json";

export function tokenSnapshotsAfter(ctx: AppContext, mint: string, afterId: number): TokenSnapshotFacts[] {
  return ctx.db.sqlite
    .query(`SELECT ${TOKEN_COLUMNS} FROM chain_token_snapshots WHERE mint = ? AND id > ? ORDER BY id`)
    .all(mint, afterId) as TokenSnapshotFacts[];
}

export function tokenSnapshotBefore(ctx: AppContext, mint: string, id: number): TokenSnapshotFacts | null {
  return ctx.db.sqlite
    .query(`SELECT ${TOKEN_COLUMNS} FROM chain_token_snapshots WHERE mint = ? AND id < ? ORDER BY id DESC LIMIT 1`)
    .get(mint, id) as TokenSnapshotFacts | null;
}

/** Whether a transaction sync finished after `takenAt` (only then are the transactions up to a snapshot stored). */
export function syncFinishedAfter(ctx: AppContext, mint: string, takenAt: string): boolean {
  return ctx.db.sqlite.query("SELECT 1 FROM chain_sync_runs WHERE mint = ? AND taken_at > ? LIMIT 1").get(mint, takenAt) !== null;
}

/** The decimals of the latest token snapshot of the mint (the audit converts thresholds with them). */
export function latestDecimals(ctx: AppContext, mint: string): number | null {
  const row = ctx.db.sqlite.query("SELECT decimals FROM chain_token_snapshots WHERE mint = ? ORDER BY id DESC LIMIT 1").get(mint) as {
    decimals: number;
  } | null;
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

const AUTHORITY_COLUMNS = "id, taken_at, slot, mint_authority, freeze_authority, mismatch, mismatch_fields";

export function authoritySnapshotsAfter(ctx: AppContext, mint: string, afterId: number): AuthoritySnapshotFacts[] {
  return ctx.db.sqlite
    .query(`SELECT ${AUTHORITY_COLUMNS} FROM chain_mint_authority_snapshots WHERE mint = ? AND id > ? ORDER BY id`)
    .all(mint, afterId) as AuthoritySnapshotFacts[];
}

export function authoritySnapshotBefore(ctx: AppContext, mint: string, id: number): AuthoritySnapshotFacts | null {
  return ctx.db.sqlite
    .query(`SELECT ${AUTHORITY_COLUMNS} FROM chain_mint_authority_snapshots WHERE mint = ? AND id < ? ORDER BY id DESC LIMIT 1`)
    .get(mint, id) as AuthoritySnapshotFacts | null;
}

export interface SyncRunFacts {
  id: number;
  taken_at: string;
  gap_detected: number;
  new_signatures: number;
  stored: number;
  newest_slot: number | null;
}

export function syncRunsAfter(ctx: AppContext, mint: string, afterId: number): SyncRunFacts[] {
  return ctx.db.sqlite
    .query("SELECT id, taken_at, gap_detected, new_signatures, stored, newest_slot FROM chain_sync_runs WHERE mint = ? AND id > ? ORDER BY id")
    .all(mint, afterId) as SyncRunFacts[];
}
