import { sql } from "drizzle-orm";
import { index, integer, primaryKey, sqliteTable, text } from "drizzle-orm/sqlite-core";

// Chain snapshots are immutable: each job run inserts one row and never updates it, so every published number
// can be traced to the row (and the job run) it came from. Token amounts are raw integer base units stored as
// decimal TEXT (u64 and sums of u64 exceed JavaScript's safe integers); they are formatted only on the way out.
// Every table carries the mint: after TOKEN_MINT changes, the old mint's rows are never served as the new one's.

/** The columns every snapshot row starts with: its id, when it was taken, by which job run, of which mint. */
const snapshotHead = () => ({
  id: integer("id").primaryKey({ autoIncrement: true }),
  takenAt: text("taken_at").notNull(),
  jobRunId: integer("job_run_id"),
  mint: text("mint").notNull(),
});

/** Where a snapshot's numbers were read: the RPC host(s) and the method(s) asked. */
const snapshotSource = () => ({ rpcHost: text("rpc_host").notNull(), method: text("method").notNull() });

/** token-snapshot: supply and the balances excluded from circulating supply. */
export const chainTokenSnapshots = sqliteTable(
  "chain_token_snapshots",
  {
    ...snapshotHead(),
    decimals: integer("decimals").notNull(),
    slot: integer("slot"),
    supplyRaw: text("supply_raw").notNull(),
    treasuryRaw: text("treasury_raw").notNull(),
    reserveRaw: text("reserve_raw").notNull(),
    trackedTreasuryRaw: text("tracked_treasury_raw").notNull(),
    circulatingRaw: text("circulating_raw").notNull(),
    /** [{ role: "treasury"|"reserve", wallet, amount_raw, token_accounts }] — the parts the sums came from. */
    walletsJson: text("wallets_json").notNull(),
    ...snapshotSource(),
  },
  // "latest snapshot of this mint" (every proof and stats read).
  (t) => [index("chain_token_snapshots_mint_idx").on(t.mint, t.id)],
);

/** holders-snapshot: one full scan of the mint's token accounts (amounts only) and its concentration. */
export const chainHolderSnapshots = sqliteTable(
  "chain_holder_snapshots",
  {
    ...snapshotHead(),
    accountsScanned: integer("accounts_scanned").notNull(),
    /** Token accounts with a non-zero balance (an owner with two such accounts counts twice). */
    holders: integer("holders").notNull(),
    totalRaw: text("total_raw").notNull(),
    top1Raw: text("top1_raw").notNull(),
    top5Raw: text("top5_raw").notNull(),
    top10Raw: text("top10_raw").notNull(),
    /** The ten largest accounts [{ address, amount_raw }], largest first. */
    topAccountsJson: text("top_accounts_json").notNull(),
    durationMs: integer("duration_ms").notNull(),
    ...snapshotSource(),
  },
  // latest snapshot and the concentration trend of this mint.
  (t) => [index("chain_holder_snapshots_mint_idx").on(t.mint, t.id)],
);

/** mint-authority-snapshot: the mint's authorities against the configured expectation. */
export const chainMintAuthoritySnapshots = sqliteTable(
  "chain_mint_authority_snapshots",
  {
    ...snapshotHead(),
    decimals: integer("decimals").notNull(),
    supplyRaw: text("supply_raw").notNull(),
    slot: integer("slot"),
    /** null = renounced (no authority). */
    mintAuthority: text("mint_authority"),
    freezeAuthority: text("freeze_authority"),
    /** As configured: an address, "none", or null when no expectation is configured. */
    expectedMintAuthority: text("expected_mint_authority"),
    expectedFreezeAuthority: text("expected_freeze_authority"),
    expectationConfigured: integer("expectation_configured", { mode: "boolean" }).notNull(),
    reviewStatus: text("review_status").notNull(),
    expectedReviewStatus: text("expected_review_status"),
    mismatch: integer("mismatch", { mode: "boolean" }).notNull(),
    /** JSON array of the fields that differ from the expectation: mint_authority, freeze_authority. */
    mismatchFields: text("mismatch_fields").notNull(),
    ...snapshotSource(),
  },
  (t) => [index("chain_mint_authority_snapshots_mint_idx").on(t.mint, t.id)],
);

/** holder-growth: one point per run, read from the latest holders snapshot at that time. */
export const chainHolderGrowth = sqliteTable(
  "chain_holder_growth",
  {
    ...snapshotHead(),
    holderSnapshotId: integer("holder_snapshot_id").notNull(),
    snapshotTakenAt: text("snapshot_taken_at").notNull(),
    holders: integer("holders").notNull(),
    previousHolders: integer("previous_holders"),
    delta: integer("delta"),
  },
  (t) => [index("chain_holder_growth_mint_idx").on(t.mint, t.id)],
);

/**
 * transaction-sync: one row per signature, ever — the primary key makes repeated and restarted syncs
 * idempotent. token_delta is the net change of the tracked (treasury + reserve) wallets' balance.
 */
export const chainTransactions = sqliteTable(
  "chain_transactions",
  {
    signature: text("signature").primaryKey(),
    mint: text("mint").notNull(),
    slot: integer("slot").notNull(),
    blockTime: text("block_time"),
    status: text("status", { enum: ["ok", "failed"] }).notNull(),
    tokenDeltaRaw: text("token_delta_raw").notNull(),
    /** Sum of the positive balance changes of the mint in the transaction: the amount transferred. */
    amountMovedRaw: text("amount_moved_raw").notNull(),
    /** Net change of the LP_WALLETS owners' balances of the mint (0 before LP wallets were tracked). */
    lpDeltaRaw: text("lp_delta_raw").notNull().default("0"),
    foundVia: text("found_via").notNull(),
    syncRunId: integer("sync_run_id"),
    syncedAt: text("synced_at").notNull(),
  },
  (t) => [
    // GET /api/transactions/latest (newest first) and volume_24h (block_time window).
    index("chain_transactions_mint_slot_idx").on(t.mint, t.slot),
    index("chain_transactions_mint_time_idx").on(t.mint, t.blockTime),
  ],
);

/** The newest signature stored per tracked address: the `until` of the next getSignaturesForAddress. */
export const chainSyncCursors = sqliteTable(
  "chain_sync_cursors",
  {
    mint: text("mint").notNull(),
    address: text("address").notNull(),
    lastSignature: text("last_signature").notNull(),
    lastSlot: integer("last_slot").notNull(),
    updatedAt: text("updated_at").notNull(),
  },
  (t) => [primaryKey({ columns: [t.mint, t.address] })],
);

/** One immutable row per transaction-sync run: what it found and stored. */
export const chainSyncRuns = sqliteTable(
  "chain_sync_runs",
  {
    ...snapshotHead(),
    addresses: integer("addresses").notNull(),
    newSignatures: integer("new_signatures").notNull(),
    stored: integer("stored").notNull(),
    alreadyStored: integer("already_stored").notNull(),
    gapDetected: integer("gap_detected", { mode: "boolean" }).notNull(),
    newestSignature: text("newest_signature"),
    newestSlot: integer("newest_slot"),
    durationMs: integer("duration_ms").notNull(),
    ...snapshotSource(),
  },
  (t) => [index("chain_sync_runs_mint_idx").on(t.mint, t.id)],
);

/** Every RPC attempt's outcome: the status checks read error rates and latency per host from here. */
export const chainRpcCalls = sqliteTable(
  "chain_rpc_calls",
  {
    id: integer("id").primaryKey({ autoIncrement: true }),
    at: text("at").notNull(),
    host: text("host").notNull(),
    method: text("method").notNull(),
    outcome: text("outcome").notNull(),
    httpStatus: integer("http_status"),
    latencyMs: integer("latency_ms").notNull(),
    error: text("error"),
  },
  (t) => [
    // "outcomes of the last N minutes" (status checks) and pruning by age.
    index("chain_rpc_calls_at_idx").on(t.at),
    // A host's latest attempt and latest success (hostLatest), and its outcomes since a time (hostWindow).
    index("chain_rpc_calls_host_idx").on(t.host, t.at),
    // A host's latest success (hostLatest, on every status read): a host failing for days skips its failures.
    index("chain_rpc_calls_host_ok_idx").on(t.host, t.at).where(sql`outcome = 'ok'`),
  ],
);
