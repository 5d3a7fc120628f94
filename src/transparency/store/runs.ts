import { changed, countOf, insertedId, type Param, type Queryable } from "../../db/port";
import type { RowOf } from "../../db/rows";
import type { auditRuns } from "../tables";

// audit_runs: the runs' lifecycle (start, complete, fail — each in the caller's transaction) and every read of
// the runs the reports make. The reports read the aggregates on the run row, never its rows.

/** A run as the reports read it: every column but the chain watermarks, which only the next run reads. */
export type RunRow = Omit<RowOf<typeof auditRuns>, "last_token_snapshot_id" | "last_authority_snapshot_id" | "last_sync_run_id">;

const COLUMNS =
  "id, label, day, started_at, finished_at, job_run_id, mint, decimals, is_complete, error, rows_total, signatures_with_anomalies, overall, severity_counts, type_counts, max_abs_delta_raw, thresholds, transactions_examined";

/** Past every id, for "before no run" (bigint on PostgreSQL, integer on SQLite). */
const NO_ID = Number.MAX_SAFE_INTEGER;

export function getRun(q: Queryable, id: number): Promise<RunRow | null> {
  return q.get<RunRow>(`SELECT ${COLUMNS} FROM audit_runs WHERE id = ?`, [id]);
}

/** The newest complete run with an id below `beforeId` (all when null): audit_runs_complete_idx. */
export function completeRunBefore(q: Queryable, beforeId: number | null): Promise<RunRow | null> {
  return q.get<RunRow>(`SELECT ${COLUMNS} FROM audit_runs WHERE is_complete = 1 AND id < ? ORDER BY id DESC LIMIT 1`, [beforeId ?? NO_ID]);
}

/** Up to `limit` complete runs with id ≤ upTo, newest first. */
export function completeRunsUpTo(q: Queryable, upTo: number, limit: number): Promise<RunRow[]> {
  return q.all<RunRow>(`SELECT ${COLUMNS} FROM audit_runs WHERE is_complete = 1 AND id <= ? ORDER BY id DESC LIMIT ?`, [upTo, limit]);
}

export const countCompleteUpTo = (q: Queryable, upTo: number) => countOf(q, "SELECT count(*) AS n FROM audit_runs WHERE is_complete = 1 AND id <= ?", [upTo]);

/** Overall of the runs with from ≤ id ≤ to; incomplete runs count as other. */
export async function statusCountsBetween(q: Queryable, from: number, to: number) {
  const rows = await q.all<{ is_complete: number; overall: string | null; n: number }>(
    "SELECT is_complete, overall, count(*) AS n FROM audit_runs WHERE id >= ? AND id <= ? GROUP BY is_complete, overall",
    [from, to],
  );
  const out = { ok: 0, warn: 0, bad: 0, other: 0 };
  for (const r of rows) {
    const k = r.is_complete === 1 && r.overall !== null && r.overall in out ? (r.overall as keyof typeof out) : "other";
    out[k] += r.n;
  }
  return out;
}

export function listRunsPage(q: Queryable, limit: number, offset: number, beforeId: number | null): Promise<RunRow[]> {
  return q.all<RunRow>(`SELECT ${COLUMNS} FROM audit_runs WHERE id < ? ORDER BY id DESC LIMIT ? OFFSET ?`, [beforeId ?? NO_ID, limit, offset]);
}

/**
 * All runs, and those not complete (running, failed or abandoned). The total is kept in audit_state by insertRun
 * (audit_runs grows by a run every 15 minutes and is never pruned: counting it would read all of it); the
 * incomplete ones are few, counted down audit_runs_complete_idx.
 */
export async function runCounts(q: Queryable): Promise<{ total: number; incomplete: number }> {
  const row = await q.get<{ total: number | null; incomplete: number }>(
    "SELECT (SELECT runs_total FROM audit_state WHERE id = 1) AS total, (SELECT count(*) FROM audit_runs WHERE is_complete = 0) AS incomplete",
  );
  return { total: Number(row?.total ?? 0), incomplete: Number(row?.incomplete ?? 0) };
}

/** Complete runs whose label falls in [from, to] (ISO text), oldest first. */
export function completeRunsBetween(q: Queryable, from: string, to: string): Promise<RunRow[]> {
  return q.all<RunRow>(`SELECT ${COLUMNS} FROM audit_runs WHERE is_complete = 1 AND label >= ? AND label <= ? ORDER BY id`, [from, to]);
}

/** The last complete run of a UTC day (audit_runs_day_idx). */
export function completeRunOfDay(q: Queryable, day: string): Promise<RunRow | null> {
  return q.get<RunRow>(`SELECT ${COLUMNS} FROM audit_runs WHERE day = ? AND is_complete = 1 ORDER BY id DESC LIMIT 1`, [day]);
}

/**
 * Ids of the complete runs after `afterId`, oldest first. Safe to page by id: a run completes only while no newer
 * run exists (completeRun below refuses otherwise), so complete runs commit in id order on every engine.
 */
export async function completeRunIdsAfter(q: Queryable, afterId: number, limit: number): Promise<number[]> {
  const rows = await q.all<{ id: number }>("SELECT id FROM audit_runs WHERE is_complete = 1 AND id > ? ORDER BY id LIMIT ?", [afterId, limit]);
  return rows.map((r) => r.id);
}

/** The audit run a job run made, or null when the job found nothing to do. */
export function runOfJob(q: Queryable, jobRunId: number) {
  return q.get<{ id: number; overall: string | null; anomalous: number; error: string | null }>(
    "SELECT id, overall, signatures_with_anomalies AS anomalous, error FROM audit_runs WHERE job_run_id = ? ORDER BY id DESC LIMIT 1",
    [jobRunId],
  );
}

// ---- the run's lifecycle (src/transparency/audit/audit-run.ts), each statement in the caller's transaction

export interface Watermarks {
  token: number;
  authority: number;
  sync: number;
}

/** The newest run started after `since` that neither completed nor failed: taken to be still running. */
export function runningSince(t: Queryable, since: string) {
  return t.get<{ id: number; started_at: string }>(
    "SELECT id, started_at FROM audit_runs WHERE is_complete = 0 AND error IS NULL AND started_at > ? ORDER BY id DESC LIMIT 1",
    [since],
  );
}

/** The chain watermarks of the mint's last complete run (where the next run starts). */
export function lastWatermarks(t: Queryable, mint: string): Promise<Watermarks | null> {
  return t.get<Watermarks>(
    "SELECT last_token_snapshot_id AS token, last_authority_snapshot_id AS authority, last_sync_run_id AS sync FROM audit_runs WHERE is_complete = 1 AND mint = ? ORDER BY id DESC LIMIT 1",
    [mint],
  );
}

export interface NewRun {
  label: string;
  day: string;
  startedAt: string;
  jobRunId: number | null;
  mint: string;
  decimals: number;
  thresholds: string;
}

/** Starts a run, in the transaction `t` that bumped audit_state first (bumpState): its kept total counts the run. */
export async function insertRun(t: Queryable, r: NewRun): Promise<number> {
  const id = await insertedId(
    t,
    "INSERT INTO audit_runs (label, day, started_at, job_run_id, mint, decimals, thresholds) VALUES (?, ?, ?, ?, ?, ?, ?) RETURNING id",
    [r.label, r.day, r.startedAt, r.jobRunId, r.mint, r.decimals, r.thresholds],
  );
  await t.run("UPDATE audit_state SET runs_total = runs_total + 1 WHERE id = 1");
  return id;
}

/** The newest run after `id`, if any: a run that has one may no longer complete. */
export function newerRun(t: Queryable, id: number) {
  return t.get<{ id: number }>("SELECT id FROM audit_runs WHERE id > ? ORDER BY id DESC LIMIT 1", [id]);
}

export interface Completion {
  finishedAt: string;
  rows: number;
  sigs: number;
  overall: "ok" | "warn" | "bad";
  severityCounts: string;
  typeCounts: string;
  maxAbsDeltaRaw: string;
  transactions: number;
  marks: Watermarks;
}

/**
 * Marks the run's transaction signatures examined (a second run that examined one too changes nothing: ON
 * CONFLICT) and completes the run; false when the run is no longer open (completed or failed already).
 */
export async function completeRun(t: Queryable, runId: number, c: Completion): Promise<boolean> {
  await t.run(
    "INSERT INTO audit_examined (signature, run_id) SELECT signature, run_id FROM audit_rows WHERE run_id = ? AND kind = 'transaction' ON CONFLICT (signature) DO NOTHING",
    [runId],
  );
  const marks = [c.marks.token, c.marks.authority, c.marks.sync];
  const params: Param[] = [c.finishedAt, c.rows, c.sigs, c.overall, c.severityCounts, c.typeCounts, c.maxAbsDeltaRaw, c.transactions, ...marks, runId];
  return changed(
    t,
    `UPDATE audit_runs SET is_complete = 1, finished_at = ?, rows_total = ?, signatures_with_anomalies = ?, overall = ?, severity_counts = ?, type_counts = ?,
       max_abs_delta_raw = ?, transactions_examined = ?, last_token_snapshot_id = ?, last_authority_snapshot_id = ?, last_sync_run_id = ?
     WHERE id = ? AND is_complete = 0 AND error IS NULL`,
    params,
  );
}

export async function failRun(t: Queryable, runId: number, error: string, finishedAt: string, rows: number): Promise<void> {
  await t.run("UPDATE audit_runs SET error = ?, finished_at = ?, rows_total = ? WHERE id = ? AND is_complete = 0", [error, finishedAt, rows, runId]);
}
