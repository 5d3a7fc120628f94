import type { AppContext } from "../context";
import { HolderAccumulator, topSum } from "./holders";
import { SCAN_METHOD } from "../solana/scan-call";
import { insertSnapshot, latestGrowth, latestHolders, lockHoldersSnapshot, snapshotHead } from "./store/snapshots";

// holders-snapshot (one full scan of the mint's token accounts) and holder-growth (a point per run from it).

/**
 * Counts non-zero token accounts of the mint and the share of the largest 1/5/10. A holder here is a token
 * account, not an owner: owner de-duplication would need every owner key in memory (tens of MB per million),
 * and almost every owner holds a single associated token account. docs/chain.md says so.
 */
export async function takeHoldersSnapshot(ctx: AppContext, runId: number | null) {
  const mint = ctx.config.chain.tokenMint!;
  let acc = new HolderAccumulator();
  const t0 = performance.now();
  const { host } = await ctx.chain.scanTokenAccounts({ mint, begin: () => (acc = new HolderAccumulator()).sink });
  const tally = acc.result();
  return insertSnapshot(ctx.store, "chain_holder_snapshots", {
    ...snapshotHead(ctx.clock.now(), runId, mint),
    accounts_scanned: tally.accounts,
    holders: tally.holders,
    total_raw: tally.total.toString(),
    top1_raw: topSum(tally.top, 1).toString(),
    top5_raw: topSum(tally.top, 5).toString(),
    top10_raw: topSum(tally.top, 10).toString(),
    top_accounts_json: JSON.stringify(tally.top.map((t) => ({ address: t.address, amount_raw: t.amount.toString() }))),
    duration_ms: Math.round(performance.now() - t0),
    rpc_host: host,
    method: SCAN_METHOD,
  });
}

/**
 * One growth point from the latest holders snapshot; fails (so the proof goes stale) when there is none. Read and
 * written in one transaction, the snapshot locked first (lockHoldersSnapshot): two runs that overlap take turns,
 * and the second's previous point is the first's.
 */
export async function recordHolderGrowth(ctx: AppContext, runId: number | null) {
  const mint = ctx.config.chain.tokenMint!;
  const takenAt = ctx.clock.now();
  return ctx.store.tx(async (t) => {
    const snapshot = await latestHolders(t, mint);
    if (!snapshot) throw new Error("no holders snapshot yet: run holders-snapshot first");
    await lockHoldersSnapshot(t, ctx.store.dialect, snapshot.id);
    const previous = await latestGrowth(t, mint);
    return insertSnapshot(t, "chain_holder_growth", {
      ...snapshotHead(takenAt, runId, mint),
      holder_snapshot_id: snapshot.id,
      snapshot_taken_at: snapshot.taken_at,
      holders: snapshot.holders,
      previous_holders: previous?.holders ?? null,
      delta: previous ? snapshot.holders - previous.holders : null,
    });
  });
}
