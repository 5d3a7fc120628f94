import { type BatchBound, type BatchedDeleteResult, deleteInBatches } from "../../db/batched-delete";
import { placeholders, type Queryable, type Store } from "../../db/port";
import type { RowOf } from "../../db/rows";
import type { opsProbeRuns } from "../tables";

// The readiness area's SQL: the synthetic probes' rows (ops_probe_runs, its own table) and the 403 noise export's
// read of the request log's hourly rollups (owned by the request log; test/conventions/layering.test.ts allows it).
// Written once for both engines.

export type ProbeRow = RowOf<typeof opsProbeRuns>;

const INSERT_COLUMNS = ["run_id", "at", "probe", "url", "status", "latency_ms", "had_data", "ok", "error"] as const;

const valuesOf = (r: Omit<ProbeRow, "id">) => INSERT_COLUMNS.map((c) => r[c]);

export async function insertProbeRuns(t: Queryable, rows: ReadonlyArray<Omit<ProbeRow, "id">>): Promise<void> {
  const sql = `INSERT INTO ops_probe_runs (${INSERT_COLUMNS.join(", ")}) VALUES (${placeholders(INSERT_COLUMNS.length)})`;
  for (const r of rows) await t.run(sql, valuesOf(r));
}

/** Retention, in bounded batches down ops_probe_runs_at_idx (src/db/batched-delete.ts). */
export function deleteProbeRunsBefore(store: Store, cutoff: string, bound: BatchBound = {}): Promise<BatchedDeleteResult> {
  return deleteInBatches(store, { table: "ops_probe_runs", where: "at < ?", params: [cutoff], ...bound });
}

const PROBE_COLUMNS = "at, run_id, probe, url, status, latency_ms, had_data, ok, error";
export type ProbeRead = Omit<ProbeRow, "id">;

/** The newest row of one probe: ops_probe_runs_probe_idx (probe, at), one index seek however many runs are kept. */
export const newestProbeRun = (q: Queryable, probe: string) =>
  q.get<ProbeRead>(`SELECT ${PROBE_COLUMNS} FROM ops_probe_runs WHERE probe = ? ORDER BY at DESC, id DESC LIMIT 1`, [probe]);

/** Rows since `since` that failed or came back without data, newest first: the range on ops_probe_runs_at_idx. */
export const probeProblemsSince = (q: Queryable, since: string, limit: number) =>
  q.all<ProbeRead>(`SELECT ${PROBE_COLUMNS} FROM ops_probe_runs WHERE at >= ? AND (ok = 0 OR had_data = 0) ORDER BY at DESC, id DESC LIMIT ?`, [since, limit]);

/** The per-day sums of request_log_hourly from `fromHour` to `toHour` (inclusive), one row per day that has any. */
export const dailyRollups = (q: Queryable, fromHour: string, toHour: string) =>
  q.all<{ day: string; requests: number; forbidden: number; hours_with_data: number }>(
    `SELECT substr(hour, 1, 10) AS day, sum(requests) AS requests, sum(forbidden) AS forbidden, count(*) AS hours_with_data
       FROM request_log_hourly WHERE hour >= ? AND hour <= ? GROUP BY substr(hour, 1, 10)`,
    [fromHour, toHour],
  );
