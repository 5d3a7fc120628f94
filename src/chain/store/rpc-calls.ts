import { type BatchBound, type BatchedDeleteResult, deleteInBatches } from "../../db/batched-delete";
import type { Param, Queryable, Store } from "../../db/port";
import type { RowOf } from "../../db/rows";
import type { RpcAttemptRecord } from "../../solana/rpc-client";
import type { chainRpcCalls } from "../tables";

// chain_rpc_calls: every RPC attempt's outcome (written in batches by src/chain/rpc-log.ts), read per host by the
// status engine's chain_rpc check, pruned by age. Rows of every instance land here: the error rates are the
// service's, while each instance's circuit breakers stay its own.

type CallRow = RowOf<typeof chainRpcCalls>;

/** Rows per INSERT: a batch is written as a few multi-row statements, each size prepared once (100 × 7 parameters). */
const INSERT_SIZES = [100, 10, 1] as const;
const INSERT_OF = new Map(
  INSERT_SIZES.map((n) => [
    n,
    `INSERT INTO chain_rpc_calls (at, host, method, outcome, http_status, latency_ms, error) VALUES ${Array(n).fill("(?, ?, ?, ?, ?, ?, ?)").join(", ")}`,
  ]),
);

/** The batch as a few multi-row INSERTs (100 rows, then 10, then 1 at a time), in the order the attempts ended. */
export async function insertCalls(t: Queryable, rows: readonly RpcAttemptRecord[]): Promise<void> {
  let i = 0;
  for (const size of INSERT_SIZES) {
    const sql = INSERT_OF.get(size)!;
    while (rows.length - i >= size) {
      const params: Param[] = [];
      for (const r of rows.slice(i, i + size)) params.push(r.at, r.host, r.method, r.outcome, r.httpStatus, r.latencyMs, r.error);
      await t.run(sql, params);
      i += size;
    }
  }
}

/**
 * A host's attempts since `sinceIso`: how many, how many did not succeed, and the median latency of those that did
 * (the lower middle of an even count; null without any).
 */
export async function hostWindow(q: Queryable, host: string, sinceIso: string) {
  const agg = (await q.get<{ calls: number; failures: number; oks: number }>(
    `SELECT count(*) AS calls, count(*) FILTER (WHERE outcome <> 'ok') AS failures, count(*) FILTER (WHERE outcome = 'ok') AS oks
     FROM chain_rpc_calls WHERE host = ? AND at >= ?`,
    [host, sinceIso],
  ))!;
  const median = agg.oks
    ? await q.get<Pick<CallRow, "latency_ms">>(
        "SELECT latency_ms FROM chain_rpc_calls WHERE host = ? AND at >= ? AND outcome = 'ok' ORDER BY latency_ms LIMIT 1 OFFSET ?",
        [host, sinceIso, Math.floor(agg.oks / 2)],
      )
    : null;
  return { calls: agg.calls, failures: agg.failures, p50_latency_ms: median?.latency_ms ?? null };
}

/** A host's latest attempt, and its latest successful one, ever (by the time they ended). */
export async function hostLatest(q: Queryable, host: string) {
  const last = await q.get<Pick<CallRow, "outcome" | "error">>("SELECT outcome, error FROM chain_rpc_calls WHERE host = ? ORDER BY at DESC, id DESC LIMIT 1", [
    host,
  ]);
  const lastOk = await q.get<Pick<CallRow, "at">>("SELECT at FROM chain_rpc_calls WHERE host = ? AND outcome = 'ok' ORDER BY at DESC, id DESC LIMIT 1", [host]);
  return { last, lastOkAt: lastOk?.at ?? null };
}

/** Retention, in bounded batches down chain_rpc_calls_at_idx (src/db/batched-delete.ts). */
export function pruneCalls(store: Store, beforeIso: string, bound: BatchBound = {}): Promise<BatchedDeleteResult> {
  return deleteInBatches(store, { table: "chain_rpc_calls", where: "at < ?", params: [beforeIso], ...bound });
}
