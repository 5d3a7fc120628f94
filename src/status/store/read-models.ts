import { apartTask } from "../../db/apart";
import type { Queryable } from "../../db/port";
import type { RowOf } from "../../db/rows";
import type { jobRuns } from "../../jobs/tables";

// The status checks' reads of other domains' tables: read models on purpose, each allow-listed with its reason in
// test/conventions/layering.test.ts. Written once for both engines.

/** Requests logged after `sinceIso` (and before `beforeIso` when given): all of them, those answered 5xx and those answered 4xx. */
export async function requestOutcomesSince(q: Queryable, sinceIso: string, beforeIso?: string): Promise<{ total: number; server: number; client: number }> {
  return (await q.get<{ total: number; server: number; client: number }>(
    `SELECT count(*) AS total, count(*) FILTER (WHERE status >= 500) AS server, count(*) FILTER (WHERE status >= 400 AND status < 500) AS client
     FROM request_log WHERE at > ?${beforeIso === undefined ? "" : " AND at < ?"}`,
    beforeIso === undefined ? [sinceIso] : [sinceIso, beforeIso],
  ))!;
}

/**
 * requestOutcomesSince apart from the event loop (src/db/apart.ts): it counts every request of the window, which
 * grows with the traffic (bench scale at 10M rows: the 15 minutes after ~340,000 credits held the status snapshot's
 * thread ~200 ms).
 */
export const requestOutcomesTask = apartTask("request-outcomes", (q, a: { sinceIso: string; beforeIso?: string }) =>
  requestOutcomesSince(q, a.sinceIso, a.beforeIso),
);

/**
 * The newest complete audit run of transparency's audit_runs (the row its latestAuditVerdict reads). Typed here
 * rather than from transparency's tables.ts: transparency imports this domain (it publishes its uptime), and an
 * import back would close a cycle between the two domains.
 */
export interface CompleteAuditRun {
  id: number;
  label: string;
  overall: "ok" | "warn" | "bad" | null;
  rows_total: number;
  signatures_with_anomalies: number;
}

export function latestCompleteAuditRun(q: Queryable): Promise<CompleteAuditRun | null> {
  return q.get<CompleteAuditRun>(
    "SELECT id, label, overall, rows_total, signatures_with_anomalies FROM audit_runs WHERE is_complete = 1 ORDER BY id DESC LIMIT 1",
  );
}

export type FinishedRun = Pick<RowOf<typeof jobRuns>, "name" | "finished_at" | "ok">;

/** The finished runs that started at or after `sinceIso`, by job and then in the order they started. */
export function finishedRunsSince(q: Queryable, sinceIso: string): Promise<FinishedRun[]> {
  return q.all<FinishedRun>("SELECT name, finished_at, ok FROM job_runs WHERE started_at >= ? AND ok IS NOT NULL ORDER BY name, started_at, id", [sinceIso]);
}

/**
 * What changes whenever a run starts or finishes: the newest run's id and how many runs are unfinished. Two
 * index reads (the primary key's last entry, job_runs_unfinished_idx's few entries), so the reliability check can
 * tell in ~0.2 ms whether its kept figures still hold.
 */
export async function jobRunsMark(q: Queryable): Promise<string> {
  const row = await q.get<{ top: number | null; open: number }>(
    "SELECT (SELECT max(id) FROM job_runs) AS top, (SELECT count(*) FROM job_runs WHERE finished_at IS NULL) AS open",
  );
  return `${row?.top ?? 0}:${row?.open ?? 0}`;
}
