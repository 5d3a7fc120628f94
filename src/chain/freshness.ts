import type { AppContext } from "../context";
import type { ChainJob } from "./jobs";
import { lastRun } from "./store/job-runs";
import type { TokenSnapshotRow } from "./store/snapshots";

// What every chain-backed public answer says about itself: how old the number is, whether that is too old,
// and where it came from (the trust context). The public trusts these numbers only as far as this is honest.

export type Freshness = "fresh" | "stale" | "missing" | "not_configured";

export const NOT_CONFIGURED_REASON = "TOKEN_MINT is not set on this service: no chain data is collected";

export function freshnessOf(ctx: AppContext, at: string | null, staleAfterHours: number): { status: Freshness; age_hours: number | null } {
  if (!ctx.chain.configured) return { status: "not_configured", age_hours: null };
  if (at === null) return { status: "missing", age_hours: null };
  const age = Math.round(((ctx.clock.now().getTime() - Date.parse(at)) / 3_600_000) * 100) / 100;
  return { status: age > staleAfterHours ? "stale" : "fresh", age_hours: age };
}

/** The snapshot row a proof speaks of: the columns every snapshot table has (holder growth has no host of its own). */
type SnapshotRef = Pick<TokenSnapshotRow, "id" | "taken_at" | "job_run_id"> & { rpc_host: string | null };

/**
 * The common part of a proof over the latest row of one job's table. A failed last run does not change the
 * status by itself (the last good snapshot may still be fresh), but it is always named in `reason`.
 */
export async function proofHeader(ctx: AppContext, job: ChainJob, table: string, method: string, row: SnapshotRef | null, staleAfterHours: number) {
  const { status, age_hours } = freshnessOf(ctx, row?.taken_at ?? null, staleAfterHours);
  const run = ctx.chain.configured ? await lastRun(ctx.store, job) : null;
  const failed = run && run.ok === 0 ? `the last ${job} run (${run.started_at}) failed: ${run.error ?? "unknown error"}` : null;
  const reasons: Record<Freshness, string | null> = {
    not_configured: NOT_CONFIGURED_REASON,
    missing: `no ${job} snapshot has been taken yet${failed ? `; ${failed}` : ""}`,
    stale: `the latest ${job} snapshot is ${age_hours} h old, over the ${staleAfterHours} h limit${failed ? `; ${failed}` : ""}`,
    fresh: failed ? `${failed}; serving the last good snapshot` : null,
  };
  return {
    generated_at_utc: ctx.clock.now().toISOString(),
    status,
    freshness_status: status,
    age_hours,
    stale_after_hours: staleAfterHours,
    snapshot_at_utc: row?.taken_at ?? null,
    reason: reasons[status],
    last_run: run ? { job, started_at: run.started_at, ok: run.ok === null ? null : run.ok === 1, error: run.error } : null,
    trust_context: trustContext(ctx, job, table, method, row),
  };
}

/** Where an answer's numbers came from: `row` is the snapshot they were read from, null before the first (or for a rollup). */
export const trustContext = (ctx: AppContext, job: string, table: string, method: string, row: Omit<SnapshotRef, "taken_at"> | null) => ({
  data_source: "solana_rpc" as const,
  chain: "solana" as const,
  mint: ctx.config.chain.tokenMint ?? null,
  // The host the snapshot came from; before the first snapshot, the host it will be asked of.
  rpc_host: row?.rpc_host ?? ctx.chain.endpoints[0]?.host ?? null,
  snapshot_id: row?.id ?? null,
  job,
  job_run_id: row?.job_run_id ?? null,
  method,
  table,
});
