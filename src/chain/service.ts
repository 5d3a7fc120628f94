import { latestPage } from "../http/pagination";
import type { AppContext } from "../context";
import { AppError } from "../http/errors/errors";
import { schemaView } from "../http/schema-view";
import { ConcentrationPoint, LatestTransaction } from "./model";
import { formatUnits, percentOf } from "./amounts";
import { freshnessOf, NOT_CONFIGURED_REASON, trustContext } from "./freshness";
import { jobsRollupProof, publicStatsCacheProof } from "./proofs";
import { ChainUnavailableError } from "../solana/rpc-errors";
import { isAddress, SOL_DECIMALS } from "../solana/constants";
import { dailyHolderSnapshots, type HolderSnapshotRow, latestAuthority, latestHolders, latestSync, latestToken } from "./store/snapshots";
import { amountsMovedSince, latestTransactionRows } from "./store/transactions";
import { walletTokenBalance } from "./token-snapshot";

// The chain domain's verbs for routes and other domains. Public answers say not_configured with a 200;
// partner answers that cannot be given (no mint, no snapshot yet, RPC down) are 503 service_unavailable with
// details.reason, so a partner's retry logic does the right thing and nobody reads zeros as data.

export { rpcHealth } from "./rpc-log";
export {
  jobsRollupProof,
  mintAuthoritiesProof,
  holderCacheProof,
  holderGrowthProof,
  publicStatsCacheProof,
  tokenDistributionProof,
  transactionSyncProof,
} from "./proofs";
export { formatUnits } from "./amounts";
/** The dotted CSV columns of a proof object (the transparency schema registry names the CSVs' headers). */
export { dottedColumns } from "./csv";

const unavailable = (reason: "not_configured" | "no_snapshot" | "rpc_unavailable", message: string) =>
  new AppError("service_unavailable", message, { details: { reason } });

function requireConfigured(ctx: AppContext): string {
  if (!ctx.chain.configured) throw unavailable("not_configured", `${NOT_CONFIGURED_REASON}; chain-backed partner routes answer 503 until an operator sets it`);
  return ctx.config.chain.tokenMint!;
}

/** Decimals of the mint from the latest snapshot that knows them (token or mint-authority). */
export async function knownDecimals(ctx: AppContext): Promise<number | null> {
  const mint = ctx.config.chain.tokenMint;
  if (!mint) return null;
  return (await latestToken(ctx.store, mint))?.decimals ?? (await latestAuthority(ctx.store, mint))?.decimals ?? null;
}

export async function tokenStatus(ctx: AppContext) {
  const mint = requireConfigured(ctx);
  const token = await latestToken(ctx.store, mint);
  if (!token) throw unavailable("no_snapshot", "No token snapshot has been taken yet; the token-snapshot job runs on CHAIN_TOKEN_SNAPSHOT_CRON — retry later");
  const holders = await latestHolders(ctx.store, mint);
  const raw = {
    total_supply: token.supply_raw,
    treasury_balance: token.treasury_raw,
    reserve_balance: token.reserve_raw,
    tracked_treasury_balance: token.tracked_treasury_raw,
    circulating_supply: token.circulating_raw,
  };
  const limits = ctx.config.chain.staleAfterHours;
  const tokenFresh = freshnessOf(ctx, token.taken_at, limits.publicStatsCache);
  const holdersFresh = freshnessOf(ctx, holders?.taken_at ?? null, limits.holderCache);
  return {
    mint,
    decimals: token.decimals,
    rpc_url: ctx.chain.primaryUrl!,
    chain: {
      // The same amounts in whole tokens, exact decimal strings.
      ...(Object.fromEntries(Object.entries(raw).map(([k, v]) => [k, formatUnits(BigInt(v), token.decimals)])) as typeof raw),
      holders: holders?.holders ?? null,
      holders_source: holders ? ("onchain_scan" as const) : ("unavailable" as const),
    },
    raw,
    snapshot: {
      token_snapshot_id: token.id,
      taken_at_utc: token.taken_at,
      age_hours: tokenFresh.age_hours,
      freshness_status: tokenFresh.status,
      stale_after_hours: limits.publicStatsCache,
      holders_snapshot_id: holders?.id ?? null,
      holders_taken_at_utc: holders?.taken_at ?? null,
      holders_freshness_status: holdersFresh.status,
    },
  };
}

export async function publicStats(ctx: AppContext) {
  const proof = await publicStatsCacheProof(ctx);
  const mint = ctx.config.chain.tokenMint;
  const token = ctx.chain.configured && mint ? await latestToken(ctx.store, mint) : null;
  const holders = ctx.chain.configured && mint ? await latestHolders(ctx.store, mint) : null;
  const synced = ctx.chain.configured && mint ? await latestSync(ctx.store, mint) : null;
  const rollup = ctx.chain.configured ? (await jobsRollupProof(ctx)).jobs.find((j) => j.job === "token-snapshot") : null;
  const since = new Date(ctx.clock.now().getTime() - 86_400_000).toISOString();
  // Synced, successful transactions of the last 24 h, summed exactly.
  const moved = token && synced ? (await amountsMovedSince(ctx.store, mint!, since)).reduce((s, a) => s + BigInt(a), 0n) : null;
  const volume = token && moved !== null ? formatUnits(moved, token.decimals) : null;
  const lastError = proof.last_run && proof.last_run.ok === false ? proof.last_run.error : null;
  return {
    status: proof.status,
    stats: {
      total_supply: proof.total_supply,
      circulating_supply: proof.circulating_supply,
      decimals: proof.decimals,
      holders: holders?.holders ?? null,
      holders_cached: holders?.holders ?? null,
      // The scan is exhaustive, so its count is also the on-chain lower bound (non-zero token accounts).
      holders_onchain_lower_bound: holders?.holders ?? null,
      // A source is always named, as token-status names it: "unavailable" until the first snapshot.
      holders_source: holders ? ("onchain_scan" as const) : ("unavailable" as const),
      holders_snapshot_at_utc: holders?.taken_at ?? null,
      volume_24h: volume,
      volume_24h_source: synced ? ("synced_transactions" as const) : ("unavailable" as const),
    },
    cache: {
      source: "chain_token_snapshots",
      available: token !== null,
      enabled: ctx.chain.configured,
      reason: proof.reason,
      cached_at_utc: token?.taken_at ?? null,
      age_hours: proof.age_hours,
      max_age_hours: proof.stale_after_hours,
      source_error: lastError,
      consecutive_failures: rollup?.consecutive_failures ?? 0,
      proof_url: "/api/public/public-stats-cache-freshness.json",
      proof_csv_url: "/api/public/public-stats-cache-freshness.csv",
      proof_page_url: "/api/public/token-snapshot-jobs-rollup.json",
    },
    trust_context: proof.trust_context,
  };
}

/** Live balances of one wallet. An invalid address is a 400; an unreachable RPC a 503 (never zeros). */
export async function walletInfo(ctx: AppContext, wallet: string) {
  if (!isAddress(wallet)) {
    throw new AppError("invalid_query", "wallet_address must be a Solana address: base58 of 32 bytes", {
      details: [{ field: "path.wallet_address", problem: "must be a Solana address: base58 of 32 bytes" }],
    });
  }
  const mint = requireConfigured(ctx);
  const lpMint = ctx.config.chain.lpMint;
  try {
    const [native, token, lp] = await Promise.all([
      ctx.chain.lamports(wallet),
      walletTokenBalance(ctx, wallet, mint),
      lpMint ? walletTokenBalance(ctx, wallet, lpMint) : Promise.resolve(null),
    ]);
    const decimals = token.decimals ?? (await knownDecimals(ctx)) ?? (await ctx.chain.tokenSupply(mint)).value.value.decimals;
    const lpDecimals = lp ? (lp.decimals ?? (await ctx.chain.tokenSupply(lpMint!)).value.value.decimals) : null;
    const nativeExact = formatUnits(BigInt(native.value), SOL_DECIMALS);
    const tokenExact = formatUnits(token.amount, decimals);
    const lpExact = lp && lpDecimals !== null ? formatUnits(lp.amount, lpDecimals) : null;
    // The spec types these balances as numbers; a double cannot hold every u64 amount exactly, so each number
    // is the nearest double to its `_exact` decimal string, which stays the authoritative value.
    return {
      wallet,
      mint,
      decimals,
      native_balance: Number(nativeExact),
      native_balance_exact: nativeExact,
      native_balance_lamports: String(native.value),
      token_balance: Number(tokenExact),
      token_balance_exact: tokenExact,
      token_balance_raw: token.amount.toString(),
      token_accounts: token.accounts,
      // The spec types lp_mint as a string and lp_amount as a number: without LP_MINT they are "" and 0, and
      // lp_configured says there is no LP token to hold.
      lp_configured: lpMint !== undefined,
      lp_mint: lpMint ?? "",
      lp_amount: lpExact === null ? 0 : Number(lpExact),
      lp_amount_exact: lpExact ?? "0",
      lp_amount_raw: lp ? lp.amount.toString() : "0",
      rpc_host: token.host,
      fetched_at_utc: ctx.clock.now().toISOString(),
    };
  } catch (err) {
    if (err instanceof ChainUnavailableError) throw unavailable("rpc_unavailable", `Solana RPC unavailable: ${err.message}`);
    throw err;
  }
}

export async function latestTransactions(ctx: AppContext, limit: number) {
  const mint = ctx.config.chain.tokenMint;
  const configured = ctx.chain.configured && Boolean(mint);
  const sync = configured ? await latestSync(ctx.store, mint!) : null;
  const fresh = freshnessOf(ctx, sync?.taken_at ?? null, ctx.config.chain.staleAfterHours.transactionSync);
  const decimals = await knownDecimals(ctx);
  const { items: rows, query, pagination } = latestPage(configured ? await latestTransactionRows(ctx.store, mint!, limit + 1) : [], limit);
  return {
    status: fresh.status,
    reason: configured ? null : NOT_CONFIGURED_REASON,
    count: rows.length,
    query,
    pagination,
    decimals,
    // The amounts are null only before any snapshot has told us the decimals; the raw value is always there.
    rows: rows.map((r) =>
      schemaView(LatestTransaction, r, {
        token_delta: decimals === null ? null : formatUnits(BigInt(r.token_delta_raw), decimals),
        amount_moved: decimals === null ? null : formatUnits(BigInt(r.amount_moved_raw), decimals),
      }),
    ),
    sync: { freshness_status: fresh.status, last_sync_at_utc: sync?.taken_at ?? null, age_hours: fresh.age_hours },
  };
}

const concentrationOf = (row: HolderSnapshotRow) => {
  const total = BigInt(row.total_raw);
  return schemaView(ConcentrationPoint, row, {
    snapshot_id: row.id,
    taken_at_utc: row.taken_at,
    top1_pct: percentOf(BigInt(row.top1_raw), total),
    top5_pct: percentOf(BigInt(row.top5_raw), total),
    top10_pct: percentOf(BigInt(row.top10_raw), total),
  });
};

/** The latest concentration and a daily trend (the last snapshot of each UTC day, up to 90 days). */
export async function walletConcentration(ctx: AppContext) {
  const mint = ctx.config.chain.tokenMint;
  const configured = ctx.chain.configured && Boolean(mint);
  const latest = configured ? await latestHolders(ctx.store, mint!) : null;
  const daily = configured ? await dailyHolderSnapshots(ctx.store, mint!) : [];
  const limit = ctx.config.chain.staleAfterHours.tokenDistribution;
  const fresh = freshnessOf(ctx, latest?.taken_at ?? null, limit);
  return {
    generated_at_utc: ctx.clock.now().toISOString(),
    status: fresh.status,
    freshness_status: fresh.status,
    age_hours: fresh.age_hours,
    stale_after_hours: limit,
    reason: configured ? (latest ? null : "no holders snapshot has been taken yet") : NOT_CONFIGURED_REASON,
    latest: latest ? concentrationOf(latest) : null,
    trend_points: daily.reverse().map(concentrationOf),
    denominator: "sum of every token account balance in the scan (the supply at scan time)",
    trust_context: trustContext(ctx, "holders-snapshot", "chain_holder_snapshots", latest?.method ?? "getProgramAccounts scan", latest),
  };
}
