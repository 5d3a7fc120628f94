import type { AppContext } from "../context";
import { formatUnits, percentOf } from "./amounts";
import { freshnessOf, NOT_CONFIGURED_REASON, type Freshness, type SnapshotRef, trustContext } from "./freshness";
import { CHAIN_JOBS, type ChainJob } from "./jobs";
import { SCAN_METHOD } from "../solana/scan-call";
import { lastRun, runStats } from "./store/job-runs";
import {
  type ChainSnapshotTable,
  countGrowthPoints,
  latestAuthority,
  latestGrowth,
  latestHolders,
  latestRef,
  latestSync,
  latestToken,
} from "./store/snapshots";
import { cursorsOf, latestTransactionRows, transactionCountTask } from "./store/transactions";
import { MINT_AUTHORITY_METHOD, reviewAuthorities, TOKEN_SNAPSHOT_METHOD } from "./token-snapshot";
import { TX_SYNC_METHOD } from "./tx-sync";

// The seven public freshness proofs. Each is the latest immutable snapshot of one job, with its age against a
// configured limit and its trust context; without TOKEN_MINT each says not_configured (never zeros).

const mintOf = (ctx: AppContext) => ctx.config.chain.tokenMint ?? "";
const limits = (ctx: AppContext) => ctx.config.chain.staleAfterHours;

/** Each job's snapshot table, the RPC method(s) its numbers come from, and how old its latest row may be. */
const JOB_SOURCES: Record<ChainJob, { table: ChainSnapshotTable; method: string; limit: (ctx: AppContext) => number }> = {
  "token-snapshot": { table: "chain_token_snapshots", method: TOKEN_SNAPSHOT_METHOD, limit: (ctx) => limits(ctx).publicStatsCache },
  "holders-snapshot": { table: "chain_holder_snapshots", method: SCAN_METHOD, limit: (ctx) => limits(ctx).holderCache },
  "mint-authority-snapshot": { table: "chain_mint_authority_snapshots", method: MINT_AUTHORITY_METHOD, limit: (ctx) => limits(ctx).mintAuthorities },
  "transaction-sync": { table: "chain_sync_runs", method: TX_SYNC_METHOD, limit: (ctx) => limits(ctx).transactionSync },
  "holder-growth": { table: "chain_holder_growth", method: "latest chain_holder_snapshots row per run", limit: (ctx) => limits(ctx).holderGrowth },
};

/**
 * The common part of a proof over the latest row of one job's table. A failed last run does not change the
 * status by itself (the last good snapshot may still be fresh), but it is always named in `reason`.
 */
async function proofHeader(ctx: AppContext, job: ChainJob, row: SnapshotRef | null, staleAfterHours = JOB_SOURCES[job].limit(ctx)) {
  const { table, method } = JOB_SOURCES[job];
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

export async function holderCacheProof(ctx: AppContext) {
  const row = ctx.chain.configured ? await latestHolders(ctx.store, mintOf(ctx)) : null;
  return {
    proof: "holder_cache_freshness" as const,
    ...(await proofHeader(ctx, "holders-snapshot", row)),
    holders: row?.holders ?? null,
    accounts_scanned: row?.accounts_scanned ?? null,
    holders_source: row ? ("onchain_scan" as const) : ("unavailable" as const),
    scan_duration_ms: row?.duration_ms ?? null,
  };
}

export async function holderGrowthProof(ctx: AppContext) {
  const row = ctx.chain.configured ? await latestGrowth(ctx.store, mintOf(ctx)) : null;
  const points = row ? await countGrowthPoints(ctx.store, mintOf(ctx)) : 0;
  const rpcHost = row ? ((await latestHolders(ctx.store, mintOf(ctx)))?.rpc_host ?? null) : null;
  return {
    proof: "holder_growth_freshness" as const,
    ...(await proofHeader(ctx, "holder-growth", row ? { ...row, rpc_host: rpcHost } : null)),
    holders: row?.holders ?? null,
    previous_holders: row?.previous_holders ?? null,
    delta: row?.delta ?? null,
    holder_snapshot_id: row?.holder_snapshot_id ?? null,
    points_available: points,
  };
}

export async function publicStatsCacheProof(ctx: AppContext) {
  const row = ctx.chain.configured ? await latestToken(ctx.store, mintOf(ctx)) : null;
  return {
    proof: "public_stats_cache_freshness" as const,
    ...(await proofHeader(ctx, "token-snapshot", row)),
    total_supply: row ? formatUnits(BigInt(row.supply_raw), row.decimals) : null,
    circulating_supply: row ? formatUnits(BigInt(row.circulating_raw), row.decimals) : null,
    decimals: row?.decimals ?? null,
    slot: row?.slot ?? null,
  };
}

export async function tokenDistributionProof(ctx: AppContext) {
  const row = ctx.chain.configured ? await latestHolders(ctx.store, mintOf(ctx)) : null;
  const pct = (raw: string | undefined) => (row && raw !== undefined ? percentOf(BigInt(raw), BigInt(row.total_raw)) : null);
  return {
    proof: "token_distribution_freshness" as const,
    ...(await proofHeader(ctx, "holders-snapshot", row, limits(ctx).tokenDistribution)),
    holders: row?.holders ?? null,
    top1_pct: pct(row?.top1_raw),
    top5_pct: pct(row?.top5_raw),
    top10_pct: pct(row?.top10_raw),
    total_raw: row?.total_raw ?? null,
    denominator: "sum of every token account balance in the scan (the supply at scan time)",
  };
}

export async function mintAuthoritiesProof(ctx: AppContext) {
  const row = ctx.chain.configured ? await latestAuthority(ctx.store, mintOf(ctx)) : null;
  const chain = ctx.config.chain;
  // The authorities seen in the latest snapshot, reviewed against the expectation configured NOW: every field of
  // the review comes from one source, so a changed (or removed) expectation never shows as "not configured" beside
  // a mismatch found under the old one. The snapshot row keeps the review made when it was taken.
  const review = row ? reviewAuthorities(row.mint_authority, row.freeze_authority, chain.expectedMintAuthority, chain.expectedFreezeAuthority) : null;
  return {
    proof: "token_mint_authorities" as const,
    ...(await proofHeader(ctx, "mint-authority-snapshot", row)),
    mint_authority: row?.mint_authority ?? null,
    freeze_authority: row?.freeze_authority ?? null,
    mint_authority_renounced: row ? row.mint_authority === null : null,
    freeze_authority_renounced: row ? row.freeze_authority === null : null,
    expected_mint_authority: chain.expectedMintAuthority ?? null,
    expected_freeze_authority: chain.expectedFreezeAuthority ?? null,
    expectation_configured: chain.expectedMintAuthority !== undefined || chain.expectedFreezeAuthority !== undefined,
    review_status: review?.review_status ?? null,
    expected_review_status: review?.expected_review_status ?? null,
    mismatch: review ? review.mismatch : null,
    mismatch_fields: review?.mismatch_fields ?? [],
  };
}

export async function transactionSyncProof(ctx: AppContext) {
  const mint = mintOf(ctx);
  const row = ctx.chain.configured ? await latestSync(ctx.store, mint) : null;
  const stored = ctx.chain.configured ? await ctx.store.apart(transactionCountTask, { mint }) : null;
  const cursors = ctx.chain.configured ? await cursorsOf(ctx.store, mint) : [];
  // The newest transaction stored, whichever run stored it (a run that found nothing new has no newest of its own).
  const newest = ctx.chain.configured ? (await latestTransactionRows(ctx.store, mint, 1))[0] : undefined;
  return {
    proof: "transaction_sync_freshness" as const,
    ...(await proofHeader(ctx, "transaction-sync", row)),
    new_signatures: row?.new_signatures ?? null,
    stored: row?.stored ?? null,
    already_stored: row?.already_stored ?? null,
    gap_detected: row ? row.gap_detected === 1 : null,
    newest_signature: newest?.signature ?? null,
    newest_slot: newest?.slot ?? null,
    transactions_stored: stored,
    cursors,
  };
}

const SEVERITY: Record<Freshness, number> = { fresh: 0, stale: 1, missing: 2, not_configured: 3 };

async function jobEntry(ctx: AppContext, job: ChainJob, since: string) {
  const src = JOB_SOURCES[job];
  const latest = ctx.chain.configured ? await latestRef(ctx.store, src.table, mintOf(ctx)) : null;
  const { status, age_hours } = freshnessOf(ctx, latest?.taken_at ?? null, src.limit(ctx));
  const stats = await runStats(ctx.store, job, since);
  return {
    job,
    freshness_status: status,
    snapshot_id: latest?.id ?? null,
    snapshot_at_utc: latest?.taken_at ?? null,
    job_run_id: latest?.job_run_id ?? null,
    age_hours,
    stale_after_hours: src.limit(ctx),
    runs_24h: stats.runs,
    failures_24h: stats.failures,
    consecutive_failures: stats.consecutive_failures,
    last_success_at: stats.last_success_at,
  };
}

/** Every chain job: its latest snapshot's freshness and its last day of runs. The worst one sets the status. */
export async function jobsRollupProof(ctx: AppContext) {
  const since = new Date(ctx.clock.now().getTime() - 86_400_000).toISOString();
  const jobs: Array<Awaited<ReturnType<typeof jobEntry>>> = [];
  for (const job of CHAIN_JOBS) jobs.push(await jobEntry(ctx, job, since));
  // The job the headline speaks for: the worst status, and among jobs of that status the one nearest its own limit
  // (age ÷ limit; no snapshot counts as past it). Its age and ITS limit are reported together, so "age over the
  // limit means stale" holds of the headline as of each job (they once came from two different jobs).
  const nearness = (j: (typeof jobs)[number]) => (j.age_hours === null ? Number.POSITIVE_INFINITY : j.age_hours / j.stale_after_hours);
  const subject = jobs.reduce((w, j) => {
    const order = SEVERITY[j.freshness_status] - SEVERITY[w.freshness_status];
    return order > 0 || (order === 0 && nearness(j) > nearness(w)) ? j : w;
  }, jobs[0]!);
  const status = subject.freshness_status;
  return {
    proof: "token_snapshot_jobs_rollup" as const,
    generated_at_utc: ctx.clock.now().toISOString(),
    status,
    freshness_status: status,
    subject_job: subject.job,
    age_hours: subject.age_hours,
    stale_after_hours: subject.stale_after_hours,
    reason: status === "fresh" ? null : status === "not_configured" ? NOT_CONFIGURED_REASON : `${subject.job} is ${status}`,
    window_hours: 24,
    jobs,
    trust_context: trustContext(ctx, "all chain jobs", "job_runs", "latest row per chain snapshot table + job_runs of the last 24 h", null),
  };
}
