import { countOf, type Queryable } from "../../db/port";
import type { RowOf } from "../../db/rows";
import type { jobRuns } from "../../jobs/tables";

// Reads of the jobs domain's job_runs: chain freshness is the age and the failures of its snapshot jobs (a read
// model, allow-listed in test/conventions/layering.test.ts). Runs are ordered by when they started, never by id:
// on PostgreSQL ids of runs on two instances are drawn in one order and committed in another.

export type JobRunRow = Pick<RowOf<typeof jobRuns>, "id" | "name" | "started_at" | "finished_at" | "ok" | "error">;

/** The job's latest finished run. */
export function lastRun(q: Queryable, job: string): Promise<JobRunRow | null> {
  return q.get<JobRunRow>(
    "SELECT id, name, started_at, finished_at, ok, error FROM job_runs WHERE name = ? AND finished_at IS NOT NULL ORDER BY started_at DESC, id DESC LIMIT 1",
    [job],
  );
}

/** Finished runs and failures since `since`, the failures since the latest success, and when that success began. */
export async function runStats(q: Queryable, job: string, since: string) {
  const agg = (await q.get<{ runs: number; failures: number }>(
    "SELECT count(*) AS runs, count(*) FILTER (WHERE ok = 0) AS failures FROM job_runs WHERE name = ? AND started_at >= ? AND finished_at IS NOT NULL",
    [job, since],
  ))!;
  const lastOk = await q.get<Pick<JobRunRow, "id" | "started_at">>(
    "SELECT id, started_at FROM job_runs WHERE name = ? AND ok = 1 ORDER BY started_at DESC, id DESC LIMIT 1",
    [job],
  );
  // Consecutive failures: the failed runs after the latest success in (started_at, id) order — the id only breaks
  // a tie of start times ('' sorts before any ISO time).
  const at = lastOk?.started_at ?? "";
  const streak = await countOf(q, "SELECT count(*) AS n FROM job_runs WHERE name = ? AND ok = 0 AND (started_at > ? OR (started_at = ? AND id > ?))", [
    job,
    at,
    at,
    lastOk?.id ?? 0,
  ]);
  return { runs: agg.runs, failures: agg.failures, consecutive_failures: streak, last_success_at: lastOk?.started_at ?? null };
}
