// The Solana chain's variables (src/chain; docs/chain.md): Config's `chain`, in src/config/vars.ts. No TOKEN_MINT =
// every chain-backed answer says not_configured.
import { CRON, int, list, text, v } from "./var-spec";

export const BASE58_ADDRESS = /^[1-9A-HJ-NP-Za-km-z]{32,44}$/;
// The optional chain addresses also accept "" (VAR= in an env file), which means unset.
const OPTIONAL_ADDRESS = /^([1-9A-HJ-NP-Za-km-z]{32,44})?$/;
const ADDRESS_OR_NONE = /^(none|[1-9A-HJ-NP-Za-km-z]{32,44})?$/;

export const CHAIN_VARS = {
  rpcUrls: v("SOLANA_RPC_URLS", {
    kind: list,
    fallback: "",
    secret: true,
    map: (urls): readonly string[] => urls.map((u) => u.replace(/\/+$/, "")),
    doc: "Comma list of Solana JSON-RPC URLs, tried in order (failover); may carry API keys, so it is masked and only the host is ever published.",
  }),
  tokenMint: v("TOKEN_MINT", {
    kind: text(OPTIONAL_ADDRESS, "a base58 Solana address"),
    doc: "The token's mint address. Unset: the chain jobs do nothing and chain routes answer not_configured.",
  }),
  treasuryWallets: v("TREASURY_WALLETS", {
    kind: list,
    fallback: "",
    doc: "Comma list of treasury owner wallets; their token balance is excluded from circulating supply.",
  }),
  reserveWallets: v("RESERVE_WALLETS", {
    kind: list,
    fallback: "",
    doc: "Comma list of reserve owner wallets; their token balance is excluded from circulating supply.",
  }),
  /** Liquidity-pool owner wallets: synced and audited as trades (docs/transparency.md), not excluded from supply. */
  lpWallets: v("LP_WALLETS", {
    kind: list,
    fallback: "",
    doc: "Comma list of liquidity-pool owner wallets; the transaction sync and the audit track them (trades, not treasury movements), and their balance stays in circulating supply.",
  }),
  expectedMintAuthority: v("EXPECTED_MINT_AUTHORITY", {
    kind: text(ADDRESS_OR_NONE, "a base58 address or none"),
    doc: "The mint authority the mint should have (none = renounced); unset = no expectation, review only.",
  }),
  expectedFreezeAuthority: v("EXPECTED_FREEZE_AUTHORITY", {
    kind: text(ADDRESS_OR_NONE, "a base58 address or none"),
    doc: "The freeze authority the mint should have (none = renounced); unset = no expectation, review only.",
  }),
  lpMint: v("LP_MINT", {
    kind: text(OPTIONAL_ADDRESS, "a base58 Solana address"),
    doc: "LP token mint; when set, wallet-info reports each wallet's LP amount.",
  }),
  rpc: {
    timeoutMs: v("SOLANA_RPC_TIMEOUT_MS", { kind: int(100, 120_000), fallback: "10000", doc: "Per-call RPC timeout (one attempt against one URL)." }),
    scanTimeoutMs: v("SOLANA_RPC_SCAN_TIMEOUT_MS", {
      kind: int(1000, 3_600_000),
      fallback: "300000",
      doc: "Timeout of the holders scan (getProgramAccounts streams every token account of the mint).",
    }),
    retries: v("SOLANA_RPC_RETRIES", {
      kind: int(0, 10),
      fallback: "2",
      doc: "Retries per URL on 429, 5xx, timeouts and malformed replies before failing over to the next URL.",
    }),
    backoffMs: v("SOLANA_RPC_BACKOFF_MS", {
      kind: int(0, 60_000),
      fallback: "250",
      doc: "First retry delay; doubles per retry with jitter, capped at 30 s (a 429's Retry-After is honoured up to the cap).",
    }),
    breakerThreshold: v("SOLANA_RPC_BREAKER_THRESHOLD", {
      kind: int(1, 1000),
      fallback: "5",
      doc: "Consecutive failed attempts that open a URL's circuit breaker (calls skip it while open).",
    }),
    breakerCooldownSeconds: v("SOLANA_RPC_BREAKER_COOLDOWN_SECONDS", {
      kind: int(1, 86_400),
      fallback: "30",
      doc: "How long an open breaker skips its URL before one trial call is let through.",
    }),
  },
  tx: {
    backfillLimit: v("CHAIN_TX_BACKFILL_LIMIT", {
      kind: int(1, 100_000),
      fallback: "1000",
      doc: "Signatures fetched per tracked address on its first transaction sync (older history is not backfilled).",
    }),
    maxPerRun: v("CHAIN_TX_MAX_PER_RUN", {
      kind: int(1, 1_000_000),
      fallback: "5000",
      doc: "Most new signatures one transaction-sync run stores per address; a larger gap is recorded as gap_detected.",
    }),
  },
  schedules: {
    tokenSnapshot: v("CHAIN_TOKEN_SNAPSHOT_CRON", {
      kind: CRON,
      fallback: "0 */10 * * * *",
      doc: "Schedule of the token-snapshot job (supply, treasury, reserve, circulating).",
    }),
    holdersSnapshot: v("CHAIN_HOLDERS_SNAPSHOT_CRON", {
      kind: CRON,
      fallback: "0 7 * * * *",
      doc: "Schedule of the holders-snapshot job (getProgramAccounts scan, concentration).",
    }),
    mintAuthority: v("CHAIN_MINT_AUTHORITY_CRON", { kind: CRON, fallback: "0 13 */6 * * *", doc: "Schedule of the mint-authority-snapshot job." }),
    transactionSync: v("CHAIN_TRANSACTION_SYNC_CRON", { kind: CRON, fallback: "30 */2 * * * *", doc: "Schedule of the transaction-sync job." }),
    holderGrowth: v("CHAIN_HOLDER_GROWTH_CRON", {
      kind: CRON,
      fallback: "0 15 0 * * *",
      doc: "Schedule of the holder-growth job (one point per run from the latest holders snapshot).",
    }),
  },
  staleAfterHours: {
    holderCache: v("CHAIN_STALE_HOLDER_CACHE_HOURS", {
      kind: int(1, 8760),
      fallback: "3",
      doc: "Hours after which the holders snapshot (holder-cache proof) is stale.",
    }),
    holderGrowth: v("CHAIN_STALE_HOLDER_GROWTH_HOURS", { kind: int(1, 8760), fallback: "26", doc: "Hours after which the holder-growth proof is stale." }),
    publicStatsCache: v("CHAIN_STALE_PUBLIC_STATS_HOURS", {
      kind: int(1, 8760),
      fallback: "1",
      doc: "Hours after which the public-stats cache (token snapshot) is stale.",
    }),
    tokenDistribution: v("CHAIN_STALE_TOKEN_DISTRIBUTION_HOURS", {
      kind: int(1, 8760),
      fallback: "3",
      doc: "Hours after which the token-distribution (concentration) proof is stale.",
    }),
    mintAuthorities: v("CHAIN_STALE_MINT_AUTHORITIES_HOURS", {
      kind: int(1, 8760),
      fallback: "13",
      doc: "Hours after which the mint-authorities proof is stale.",
    }),
    transactionSync: v("CHAIN_STALE_TRANSACTION_SYNC_HOURS", {
      kind: int(1, 8760),
      fallback: "1",
      doc: "Hours after which the transaction-sync proof is stale.",
    }),
  },
};
