import { countOf, type Dialect, insertedId, type Param, type Queryable } from "../../db/port";
import type { RowOf } from "../../db/rows";
import type { chainHolderGrowth, chainHolderSnapshots, chainMintAuthoritySnapshots, chainSyncRuns, chainTokenSnapshots } from "../tables";

// The chain snapshot tables' SQL, the same on both engines. Rows are only inserted; every read is "the latest rows
// of this mint", the highest id (a job takes its time just before inserting). That is no watermark (nothing reads
// "rows after id N"): a row committed late with a lower id is simply not the latest one.

export type TokenSnapshotRow = RowOf<typeof chainTokenSnapshots>;
export type HolderSnapshotRow = RowOf<typeof chainHolderSnapshots>;

export type ChainSnapshotTable =
  | "chain_token_snapshots"
  | "chain_holder_snapshots"
  | "chain_mint_authority_snapshots"
  | "chain_holder_growth"
  | "chain_sync_runs";

const latestOf = (table: ChainSnapshotTable, columns = "*") => `SELECT ${columns} FROM ${table} WHERE mint = ? ORDER BY id DESC LIMIT 1`;

export const latestToken = (q: Queryable, mint: string) => q.get<TokenSnapshotRow>(latestOf("chain_token_snapshots"), [mint]);
export const latestHolders = (q: Queryable, mint: string) => q.get<HolderSnapshotRow>(latestOf("chain_holder_snapshots"), [mint]);
export const latestAuthority = (q: Queryable, mint: string) =>
  q.get<RowOf<typeof chainMintAuthoritySnapshots>>(latestOf("chain_mint_authority_snapshots"), [mint]);
export const latestGrowth = (q: Queryable, mint: string) => q.get<RowOf<typeof chainHolderGrowth>>(latestOf("chain_holder_growth"), [mint]);
export const latestSync = (q: Queryable, mint: string) => q.get<RowOf<typeof chainSyncRuns>>(latestOf("chain_sync_runs"), [mint]);

/** The latest row of any snapshot table, as the jobs rollup names it. */
export const latestRef = (q: Queryable, table: ChainSnapshotTable, mint: string) =>
  q.get<Pick<TokenSnapshotRow, "id" | "taken_at" | "job_run_id">>(latestOf(table, "id, taken_at, job_run_id"), [mint]);

/** The last holders snapshot of each UTC day (taken_at is ISO-8601 text: its first 10 characters are the day), newest 90. */
export function dailyHolderSnapshots(q: Queryable, mint: string): Promise<HolderSnapshotRow[]> {
  return q.all<HolderSnapshotRow>(
    `SELECT * FROM chain_holder_snapshots WHERE id IN (SELECT max(id) FROM chain_holder_snapshots WHERE mint = ? GROUP BY substr(taken_at, 1, 10))
     ORDER BY id DESC LIMIT 90`,
    [mint],
  );
}

export const countGrowthPoints = (q: Queryable, mint: string) => countOf(q, "SELECT count(*) AS n FROM chain_holder_growth WHERE mint = ?", [mint]);

/** The columns every snapshot row starts with: when it was taken, by which job run, of which mint. */
export const snapshotHead = (takenAt: Date, runId: number | null, mint: string) => ({ taken_at: takenAt.toISOString(), job_run_id: runId, mint });

/** Inserts one snapshot row (its columns as given; booleans as 0/1) and answers it with its id: a job's result. */
export async function insertSnapshot<R extends Record<string, string | number | boolean | null>>(q: Queryable, table: ChainSnapshotTable, row: R) {
  const cols = Object.keys(row);
  const values: Param[] = cols.map((c) => {
    const v = row[c]!;
    return typeof v === "boolean" ? (v ? 1 : 0) : v;
  });
  return { id: await insertedId(q, `INSERT INTO ${table} (${cols.join(", ")}) VALUES (${cols.map(() => "?").join(", ")}) RETURNING id`, values), ...row };
}

/**
 * PostgreSQL: locks the holders snapshot a growth point is computed from, for the rest of the transaction, so two
 * overlapping holder-growth runs take turns: the second reads the first's point as its previous one (delta 0)
 * instead of both computing from the same point. SQLite's transactions already hold the one write lock.
 */
const LOCK_HOLDERS_POSTGRES = "SELECT id FROM chain_holder_snapshots WHERE id = ? FOR UPDATE";

export async function lockHoldersSnapshot(t: Queryable, dialect: Dialect, id: number): Promise<void> {
  if (dialect === "postgres") await t.get(LOCK_HOLDERS_POSTGRES, [id]);
}
