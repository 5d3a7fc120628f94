import { countOf, type Queryable } from "../../db/port";

// An incident draft's reads of request_log and job_runs (other domains' tables; layering.test.ts allows it). Every
// read is bounded twice: by time (the `at` / `started_at` indexes) and by a row count. Written once for both engines.

export interface ErrorRow {
  at: string;
  method: string;
  route: string;
  status: number;
  error_code: string | null;
  request_id: string;
}

/**
 * The newest `rowsLimit` rows of [since, until) (the inner LIMIT bounds what is read), keeping the failed ones, oldest
 * first. Rows of the same instant are in id order, so every read (the JSON, Markdown and text drafts each read) names
 * the same first and last request: PostgreSQL returns ties in any order.
 */
export const failedOfNewest = (q: Queryable, since: string, until: string, rowsLimit: number) =>
  q.all<ErrorRow>(
    `SELECT at, method, route, status, error_code, request_id FROM (
       SELECT id, at, method, route, status, error_code, request_id FROM request_log WHERE at >= ? AND at < ? ORDER BY at DESC, id DESC LIMIT ?
     ) newest WHERE status >= 400 ORDER BY at, id`,
    [since, until, rowsLimit],
  );

/** Whether [since, until) holds more than `rowsLimit` rows: one row past the bound, read from the index. */
export async function holdsMoreThan(q: Queryable, since: string, until: string, rowsLimit: number): Promise<boolean> {
  return (await q.get("SELECT 1 AS x FROM request_log WHERE at >= ? AND at < ? ORDER BY at DESC LIMIT 1 OFFSET ?", [since, until, rowsLimit])) !== null;
}

export const rowsUpTo = (q: Queryable, since: string, until: string, rowsLimit: number) =>
  countOf(q, "SELECT count(*) AS n FROM (SELECT 1 AS one FROM request_log WHERE at >= ? AND at < ? LIMIT ?) bounded", [since, until, rowsLimit]);

export interface JobFailure {
  job: string;
  run_id: number;
  started_at: string;
  finished_at: string | null;
  error: string | null;
  trigger: string;
}

/** Failed job runs that started in [since, until), newest first (job_runs_started_idx). */
export const failedJobRuns = (q: Queryable, since: string, until: string, limit: number) =>
  q.all<JobFailure>(
    `SELECT name AS job, id AS run_id, started_at, finished_at, error, trigger FROM job_runs
     WHERE started_at >= ? AND started_at < ? AND ok = 0 ORDER BY started_at DESC, id DESC LIMIT ?`,
    [since, until, limit],
  );
