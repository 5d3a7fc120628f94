import type { TProperties, TSchema } from "@sinclair/typebox";
import { t } from "elysia";
import { Envelope } from "../http/envelope";
import { LatestQueryEcho, PaginationSchema } from "../http/pagination";
import { intQuery } from "../http/params";
import { named } from "../http/openapi/names";
import { nullable as N } from "../http/routes/declare";

const Amount = (description: string) => t.String({ description: `${description} (exact decimal string)` });
/** A chain amount as the JSON number the spec asks for: the nearest double, which may round; `exact` names the exact twin. */
const Approx = (description: string, exact: string) =>
  t.Number({ description: `${description} (JSON number, the nearest double: may be rounded; the exact value is ${exact})` });

/** Token status's amounts, each as `schema` writes it with what it sums. */
const tokenAmounts = <S extends TSchema>(schema: (description: string) => S) => ({
  total_supply: schema("supply"),
  treasury_balance: schema("sum over TREASURY_WALLETS"),
  reserve_balance: schema("sum over RESERVE_WALLETS"),
  tracked_treasury_balance: schema("treasury + reserve"),
  circulating_supply: schema("supply − treasury − reserve"),
});

const Freshness = t.Union([t.Literal("fresh"), t.Literal("stale"), t.Literal("missing"), t.Literal("not_configured")], {
  description: "fresh | stale (older than stale_after_hours) | missing (never taken) | not_configured (no TOKEN_MINT)",
});

const TrustContext = named(
  "TrustContext",
  t.Object({
    data_source: t.Literal("solana_rpc"),
    chain: t.Literal("solana"),
    mint: N(t.String()),
    rpc_host: N(t.String({ description: "host[:port] of the RPC node; never its path, query or credentials" })),
    snapshot_id: N(t.Integer()),
    job: t.String(),
    job_run_id: N(t.Integer({ description: "the job_runs row that wrote the snapshot" })),
    method: t.String({ description: "the RPC method(s) the numbers came from" }),
    table: t.String(),
  }),
);

const HoldersSource = t.UnionEnum(["onchain_scan", "unavailable"], { description: "unavailable until the first holders snapshot" });

const LastRun = N(t.Object({ job: t.String(), started_at: t.String(), ok: N(t.Boolean()), error: N(t.String()) }));

const header = {
  generated_at_utc: t.String({ format: "date-time" }),
  status: Freshness,
  freshness_status: Freshness,
  age_hours: N(t.Number()),
  stale_after_hours: t.Number(),
  snapshot_at_utc: N(t.String()),
  reason: N(t.String()),
  last_run: LastRun,
  trust_context: TrustContext,
};

/** A freshness proof's answer: its name, the common header, then its own fields. */
const proofModel = <L extends string, P extends TProperties>(name: string, proof: L, fields: P) =>
  named(name, Envelope({ proof: t.Literal(proof), ...header, ...fields }));

const Pct = N(t.Number({ description: "percent, four decimals" }));
export const ConcentrationPoint = t.Object({
  snapshot_id: t.Integer(),
  taken_at_utc: t.String(),
  holders: t.Integer(),
  top1_pct: Pct,
  top5_pct: Pct,
  top10_pct: Pct,
});

export const LatestTransaction = t.Object({
  signature: t.String(),
  block_time: N(t.String()),
  slot: t.Integer(),
  status: t.Union([t.Literal("ok"), t.Literal("failed")]),
  token_delta: N(t.String({ description: "net change of the treasury + reserve wallets' balance" })),
  token_delta_raw: t.String(),
  amount_moved: N(t.String()),
  found_via: t.String(),
});

export const ChainModel = {
  metaQuery: t.Object({ include_meta: t.Optional(t.String()) }),
  walletParams: t.Object({ wallet_address: t.String({ maxLength: 64 }) }),
  latestQuery: t.Object({ limit: intQuery({ minimum: 1, maximum: 200, defaultValue: 50 }), include_meta: t.Optional(t.String()) }),

  tokenStatus: named(
    "TokenStatus",
    Envelope({
      mint: t.String(),
      decimals: t.Integer(),
      rpc_url: t.String({ description: "scheme and host of the primary RPC URL" }),
      chain: t.Object({
        ...tokenAmounts(Amount),
        holders: N(t.Integer()),
        holders_source: t.Union([t.Literal("onchain_scan"), t.Literal("unavailable")]),
      }),
      raw: t.Object(
        tokenAmounts(() => t.String()),
        { description: "the same amounts in raw base units (integers as strings)" },
      ),
      snapshot: t.Object({
        token_snapshot_id: t.Integer(),
        taken_at_utc: t.String(),
        age_hours: N(t.Number()),
        freshness_status: Freshness,
        stale_after_hours: t.Number(),
        holders_snapshot_id: N(t.Integer()),
        holders_taken_at_utc: N(t.String()),
        holders_freshness_status: Freshness,
      }),
    }),
  ),

  publicStats: named(
    "PublicStats",
    Envelope({
      status: Freshness,
      stats: t.Object({
        total_supply: N(t.String()),
        circulating_supply: N(t.String()),
        decimals: N(t.Integer()),
        holders: N(t.Integer()),
        holders_cached: N(t.Integer()),
        holders_onchain_lower_bound: N(t.Integer()),
        holders_source: HoldersSource,
        holders_snapshot_at_utc: N(t.String()),
        volume_24h: N(t.String({ description: "sum moved by synced transactions in the last 24 h" })),
        volume_24h_source: t.UnionEnum(["synced_transactions", "unavailable"], { description: "unavailable until the first transaction sync" }),
      }),
      cache: t.Object({
        source: t.String(),
        available: t.Boolean(),
        enabled: t.Boolean(),
        reason: N(t.String()),
        cached_at_utc: N(t.String()),
        age_hours: N(t.Number()),
        max_age_hours: t.Number(),
        source_error: N(t.String()),
        consecutive_failures: t.Integer(),
        proof_url: t.String(),
        proof_csv_url: t.String(),
        proof_page_url: t.String(),
      }),
      trust_context: TrustContext,
    }),
  ),

  walletInfo: named(
    "WalletInfo",
    Envelope({
      wallet: t.String(),
      mint: t.String(),
      decimals: t.Integer(),
      native_balance: Approx("SOL", "native_balance_exact"),
      native_balance_exact: Amount("SOL"),
      native_balance_lamports: t.String(),
      token_balance: Approx("token balance over all the wallet's token accounts of the mint", "token_balance_exact"),
      token_balance_exact: Amount("token balance over all the wallet's token accounts of the mint"),
      token_balance_raw: t.String(),
      token_accounts: t.Integer(),
      lp_configured: t.Boolean({ description: 'whether LP_MINT is set; without it lp_mint is "" and the lp amounts 0' }),
      lp_mint: t.String({ description: 'LP_MINT, or "" without it' }),
      lp_amount: Approx("LP tokens of LP_MINT held by the wallet; 0 without LP_MINT", "lp_amount_exact"),
      lp_amount_exact: Amount('LP tokens of LP_MINT held by the wallet; "0" without LP_MINT'),
      lp_amount_raw: t.String(),
      rpc_host: t.String(),
      fetched_at_utc: t.String(),
    }),
  ),

  latestTransactions: named(
    "LatestTransactions",
    Envelope({
      status: Freshness,
      reason: N(t.String()),
      count: t.Integer(),
      query: LatestQueryEcho(),
      pagination: PaginationSchema,
      decimals: N(t.Integer()),
      rows: t.Array(LatestTransaction),
      sync: t.Object({ freshness_status: Freshness, last_sync_at_utc: N(t.String()), age_hours: N(t.Number()) }),
    }),
  ),

  holderCache: proofModel("HolderCacheProof", "holder_cache_freshness", {
    holders: N(t.Integer()),
    accounts_scanned: N(t.Integer()),
    holders_source: HoldersSource,
    scan_duration_ms: N(t.Integer()),
  }),
  holderGrowth: proofModel("HolderGrowthProof", "holder_growth_freshness", {
    holders: N(t.Integer()),
    previous_holders: N(t.Integer()),
    delta: N(t.Integer()),
    holder_snapshot_id: N(t.Integer()),
    points_available: t.Integer(),
  }),
  publicStatsCache: proofModel("PublicStatsCacheProof", "public_stats_cache_freshness", {
    total_supply: N(t.String()),
    circulating_supply: N(t.String()),
    decimals: N(t.Integer()),
    slot: N(t.Integer()),
  }),
  tokenDistribution: proofModel("TokenDistributionProof", "token_distribution_freshness", {
    holders: N(t.Integer()),
    top1_pct: Pct,
    top5_pct: Pct,
    top10_pct: Pct,
    total_raw: N(t.String()),
    denominator: t.String(),
  }),
  mintAuthorities: proofModel("MintAuthoritiesProof", "token_mint_authorities", {
    mint_authority: N(t.String()),
    freeze_authority: N(t.String()),
    mint_authority_renounced: N(t.Boolean()),
    freeze_authority_renounced: N(t.Boolean()),
    expected_mint_authority: N(t.String()),
    expected_freeze_authority: N(t.String()),
    expectation_configured: t.Boolean(),
    review_status: N(t.String({ description: "renounced | mint_authority_retained | freeze_authority_retained | both_retained" })),
    expected_review_status: N(t.String()),
    mismatch: N(t.Boolean()),
    mismatch_fields: t.Array(t.String()),
  }),
  transactionSync: proofModel("TransactionSyncProof", "transaction_sync_freshness", {
    new_signatures: N(t.Integer()),
    stored: N(t.Integer()),
    already_stored: N(t.Integer()),
    gap_detected: N(t.Boolean()),
    newest_signature: N(t.String()),
    newest_slot: N(t.Integer()),
    transactions_stored: N(t.Integer()),
    cursors: t.Array(t.Object({ address: t.String(), last_signature: t.String(), last_slot: t.Integer(), updated_at: t.String() })),
  }),
  jobsRollup: named(
    "SnapshotJobsRollup",
    Envelope({
      proof: t.Literal("token_snapshot_jobs_rollup"),
      generated_at_utc: t.String({ format: "date-time" }),
      status: Freshness,
      freshness_status: Freshness,
      subject_job: t.String({ description: "the job age_hours and stale_after_hours are of: the worst, then the nearest its limit" }),
      age_hours: N(t.Number({ description: "subject_job's snapshot age; null without one" })),
      stale_after_hours: t.Number({ description: "subject_job's own limit" }),
      reason: N(t.String()),
      window_hours: t.Integer(),
      jobs: t.Array(
        t.Object({
          job: t.String(),
          freshness_status: Freshness,
          snapshot_id: N(t.Integer()),
          snapshot_at_utc: N(t.String()),
          job_run_id: N(t.Integer()),
          age_hours: N(t.Number()),
          stale_after_hours: t.Number(),
          runs_24h: t.Integer(),
          failures_24h: t.Integer(),
          consecutive_failures: t.Integer(),
          last_success_at: N(t.String()),
        }),
      ),
      trust_context: TrustContext,
    }),
  ),

  walletConcentration: named(
    "WalletConcentration",
    Envelope({
      generated_at_utc: t.String({ format: "date-time" }),
      status: Freshness,
      freshness_status: Freshness,
      age_hours: N(t.Number()),
      stale_after_hours: t.Number(),
      reason: N(t.String()),
      latest: N(ConcentrationPoint),
      trend_points: t.Array(ConcentrationPoint),
      denominator: t.String(),
      trust_context: TrustContext,
    }),
  ),
};
