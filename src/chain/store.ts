import type { Database } from "bun:sqlite";
import type { AppContext } from "../context";

// Reads and inserts of the chain tables (raw prepared SQL; bun:sqlite caches `query` statements). Snapshot
// rows are only ever inserted; every read is "the latest rows of this mint".

export interface TokenSnapshotRow {
  id: number;
  taken_at: string;
  job_run_id: number | null;
  mint: string;
  decimals: number;
  slot: number | null;
  supply_raw: string;
  treasury_raw: string;
  reserve_raw: string;
  tracked_treasury_raw: string;
  circulating_raw: string;
  wallets_json: string;
  rpc_host: string;
  method: string;
}

export interface HolderSnapshotRow {
  id: number;
  taken_at: string;
  job_run_id: number | null;
  mint: string;
  accounts_scanned: number;
  holders: number;
  total_raw: string;
  top1_raw: string;
  top5_raw: string;
  top10_raw: string;
  top_accounts_json: string;
  duration_ms: number;
  rpc_host: string;
  method: string;
}

export interface MintAuthorityRow {
  id: number;
  taken_at: string;
  job_run_id: number | null;
  mint: string;
  decimals: number;
  supply_raw: string;
  slot: number | null;
  mint_authority: string | null;
  freeze_authority: string | null;
  expected_mint_authority: string | null;
  expected_freeze_authority: string | null;
  expectation_configured: number;
  review_status: string;
  expected_review_status: string | null;
  mismatch: number;
  mismatch_fields: string;
  rpc_host: string;
  method: string;
}

export interface HolderGrowthRow {
  id: number;
  taken_at: string;
  job_run_id: number | null;
  mint: string;
  holder_snapshot_id: number;
  snapshot_taken_at: string;
  holders: number;
  previous_holders: number | null;
  delta: number | null;
}

export interface SyncRunRow {
  id: number;
  taken_at: string;
  job_run_id: number | null;
  mint: string;
  addresses: number;
  new_signatures: number;
  stored: number;
  already_stored: number;
  gap_detected: number;
  newest_signature: string | null;
  newest_slot: number | null;
  duration_ms: number;
  rpc_host: string;
  method: string;
}

export interface TransactionRow {
  signature: string;
  slot: number;
  block_time: string | null;
  status: "ok" | "failed";
  token_delta_raw: string;
  amount_moved_raw: string;
  found_via: string;
}

export interface JobRunRow {
  id: number;
  name: string;
  started_at: string;
  finished_at: string | null;
  ok: number | null;
  error: string | null;
}

const LATEST = {
  token: "SELECT * FROM chain_token_snapshots WHERE mint = ? ORDER BY id DESC LIMIT 1",
  holders: "SELECT * FROM chain_holder_snapshots WHERE mint = ? ORDER BY id DESC LIMIT 1",
  authority: "SELECT * FROM chain_mint_authority_snapshots WHERE mint = ? ORDER BY id DESC LIMIT 1",
  growth: "SELECT * FROM chain_holder_growth WHERE mint = ? ORDER BY id DESC LIMIT 1",
  sync: "SELECT * FROM chain_sync_runs WHERE mint = ? ORDER BY id DESC LIMIT 1",
} as const;

export const latestToken = (db: Database, mint: string) => db.query(LATEST.token).get(mint) as TokenSnapshotRow | null;
export const latestHolders = (db: Database, mint: string) => db.query(LATEST.holders).get(mint) as HolderSnapshotRow | null;
export const latestAuthority = (db: Database, mint: string) => db.query(LATEST.authority).get(mint) as MintAuthorityRow | null;
export const latestGrowth = (db: Database, mint: string) => db.query(LATEST.growth).get(mint) as HolderGrowthRow | null;
export const latestSync = (db: Database, mint: string) => db.query(LATEST.sync).get(mint) as SyncRunRow | null;

export function holderTrend(db: Database, mint: string, limit: number): HolderSnapshotRow[] {
  return (db.query("SELECT * FROM chain_holder_snapshots WHERE mint = ? ORDER BY id DESC LIMIT ?").all(mint, limit) as HolderSnapshotRow[]).reverse();
}

export function growthTrend(db: Database, mint: string, limit: number): HolderGrowthRow[] {
  return (db.query("SELECT * FROM chain_holder_growth WHERE mint = ? ORDER BY id DESC LIMIT ?").all(mint, limit) as HolderGrowthRow[]).reverse();
}

export function lastRun(db: Database, job: string): JobRunRow | null {
  return db
    .query(
      "SELECT id, name, started_at, finished_at, ok, error FROM job_runs WHERE name = ? AND finished_at IS NOT NULL ORDER BY started_at DESC, id DESC LIMIT 1",
    )
    .get(job) as JobRunRow | null;
}

export function runStats(db: Database, job: string, since: string) {
  const agg = db
    .query("SELECT COUNT(*) AS runs, COALESCE(SUM(ok = 0), 0) AS failures FROM job_runs WHERE name = ? AND started_at >= ? AND finished_at IS NOT NULL")
    .get(job, since) as {
    runs: number;
    failures: number;
  };
  // Consecutive failures: finished runs after the last success.
  const streak = db
    .query("SELECT COUNT(*) AS n FROM job_runs WHERE name = ?1 AND ok = 0 AND id > COALESCE((SELECT MAX(id) FROM job_runs WHERE name = ?1 AND ok = 1), 0)")
    .get(job) as { n: number };
  const lastOk = db.query("SELECT started_at FROM job_runs WHERE name = ? AND ok = 1 ORDER BY id DESC LIMIT 1").get(job) as { started_at: string } | null;
  return { runs: agg.runs, failures: agg.failures, consecutive_failures: streak.n, last_success_at: lastOk?.started_at ?? null };
}

type ChainTable = "chain_token_snapshots" | "chain_holder_snapshots" | "chain_mint_authority_snapshots" | "chain_holder_growth" | "chain_sync_runs";

export function insertRow(ctx: AppContext, table: ChainTable, row: Record<string, unknown>): number {
  const cols = Object.keys(row);
  const sql = `INSERT INTO ${table} (${cols.join(", ")}) VALUES (${cols.map(() => "?").join(", ")}) RETURNING id`;
  const values = cols.map((c) => {
    const v = row[c];
    return typeof v === "boolean" ? (v ? 1 : 0) : (v as string | number | null);
  });
  return (ctx.db.sqlite.query(sql).get(...values) as { id: number }).id;
}
