import { type BatchBound, type BatchedDeleteResult, deleteInBatches } from "../db/batched-delete";
import { insertedId, placeholders, type Queryable, type Store } from "../db/port";
import type { RowOf } from "../db/rows";
import type { jobRuns } from "./tables";

// The job_runs SQL, on the storage port (the same statements on SQLite and PostgreSQL). The registry
// (src/jobs/registry.ts) is the only writer.

type RunRow = RowOf<typeof jobRuns>;
export type Trigger = "schedule" | "manual";
export type LastRun = Pick<RunRow, "name" | "started_at" | "finished_at" | "ok" | "error" | "duration_ms" | "instance_id">;

export interface RunStart {
  name: string;
  startedAt: string;
  trigger: Trigger;
  instanceId: string;
}

export interface RunEnd {
  finishedAt: string;
  ok: boolean;
  error: string | null;
  durationMs: number;
}

/** A run begins: its row, unfinished (ok NULL) until finishRun. */
export function insertRun(db: Queryable, r: RunStart): Promise<number> {
  const params = [r.name, r.startedAt, r.trigger, r.instanceId];
  return insertedId(db, "INSERT INTO job_runs (name, started_at, trigger, instance_id) VALUES (?, ?, ?, ?) RETURNING id", params);
}

export async function finishRun(db: Queryable, id: number, e: RunEnd): Promise<void> {
  await db.run("UPDATE job_runs SET finished_at = ?, ok = ?, error = ?, duration_ms = ? WHERE id = ?", [e.finishedAt, e.ok ? 1 : 0, e.error, e.durationMs, id]);
}

/**
 * Ends the scheduled runs of `name` that another instance began and never finished: it stopped (a crash, a kill)
 * and its lease expired, so `me` took the job over. They read as failed and interrupted, not as running forever.
 * Should that instance only have stalled, its own finishRun later writes the real outcome over this one.
 */
export async function closeAbandonedRuns(db: Queryable, name: string, me: string, at: string): Promise<number> {
  const r = await db.run(
    `UPDATE job_runs SET finished_at = ?, ok = 0,
       error = 'interrupted: instance ' || instance_id || ' stopped before the run ended; its lease expired and ' || ? || ' took the job over'
     WHERE name = ? AND finished_at IS NULL AND trigger = 'schedule' AND instance_id <> ?`,
    [at, me, name, me],
  );
  return r.changes;
}

/** A quiet job's run that did work (or failed), recorded whole once it is over: one statement. */
export function insertFinishedRun(db: Queryable, r: RunStart, e: RunEnd): Promise<number> {
  return insertedId(
    db,
    `INSERT INTO job_runs (name, started_at, trigger, instance_id, finished_at, ok, error, duration_ms)
     VALUES (?, ?, ?, ?, ?, ?, ?, ?) RETURNING id`,
    [r.name, r.startedAt, r.trigger, r.instanceId, e.finishedAt, e.ok ? 1 : 0, e.error, e.durationMs],
  );
}

/** Subqueries per statement: far below SQLite's compound-select limit (500). */
const NAMES_PER_QUERY = 100;

/**
 * Each job's latest run among `names` (any outcome, finished or not), or its latest successful one; jobs without
 * such a run are absent. One round trip per 100 names: a UNION ALL of one index-walk each (job_runs_name_started_idx,
 * newest first) — never a scan of the table, which holds 90 days of runs. Each member is a parenthesised subquery so
 * its ORDER BY … LIMIT is legal on both engines.
 */
export async function latestRuns(db: Queryable, names: readonly string[], which: "any" | "successful"): Promise<Map<string, LastRun>> {
  const filter = which === "successful" ? "AND ok = 1" : "";
  const out = new Map<string, LastRun>();
  for (let i = 0; i < names.length; i += NAMES_PER_QUERY) {
    const chunk = names.slice(i, i + NAMES_PER_QUERY);
    const sql = chunk
      .map(
        (_, k) =>
          `SELECT * FROM (SELECT name, started_at, finished_at, ok, error, duration_ms, instance_id FROM job_runs WHERE name = ? ${filter} ORDER BY started_at DESC, id DESC LIMIT 1) AS r${k}`,
      )
      .join(" UNION ALL ");
    for (const row of await db.all<LastRun>(sql, chunk)) out.set(row.name, row);
  }
  return out;
}

/** How each of these runs was started; ids without a row (pruned) are absent. */
export async function triggersOf(db: Queryable, ids: readonly number[]): Promise<Map<number, Trigger>> {
  if (ids.length === 0) return new Map();
  const rows = await db.all<Pick<RunRow, "id" | "trigger">>(`SELECT id, trigger FROM job_runs WHERE id IN (${placeholders(ids.length)})`, ids);
  return new Map(rows.map((r) => [r.id, r.trigger as Trigger]));
}

/** Failed runs per job that started at or after `since` (ISO time); jobs without failures are absent. */
export async function failuresSince(db: Queryable, since: string): Promise<Map<string, number>> {
  // job_runs_failed_idx (failed runs only) serves the range; the few failed rows are grouped by the engine.
  // MATERIALIZED keeps SQLite from grouping down job_runs_name_started_idx instead, which reads every run ever kept.
  const rows = await db.all<{ name: string; n: number }>(
    "WITH failed AS MATERIALIZED (SELECT name FROM job_runs WHERE started_at >= ? AND ok = 0) SELECT name, count(*) AS n FROM failed GROUP BY name",
    [since],
  );
  return new Map(rows.map((r) => [r.name, r.n]));
}

/** Retention: deletes the runs started before `before` (ISO time), in bounded batches down job_runs_started_idx. */
export function pruneRuns(store: Store, before: string, bound: BatchBound = {}): Promise<BatchedDeleteResult> {
  return deleteInBatches(store, { table: "job_runs", where: "started_at < ?", params: [before], ...bound });
}
