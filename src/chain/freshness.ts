import type { AppContext } from "../context";
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
export type SnapshotRef = Pick<TokenSnapshotRow, "id" | "taken_at" | "job_run_id"> & { rpc_host: string | null };

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
