import { afterEach, describe, expect, test } from "bun:test";
import type { AppContext } from "../../src/context";
import { chainEnv, expectedTx, startSolanaRpc, type DevRpcServer } from "../support/solana-rpc";
import { sharedDatabase, type SharedDatabase } from "./contexts";

// Transaction sync against the fixture: exact deltas, idempotent across repeated runs and across a restart
// (a new context over the same database), and `until` keeps repeated runs from refetching anything.

let rpc: DevRpcServer | undefined;
let db: SharedDatabase | undefined;
afterEach(async () => {
  await db?.dispose();
  db = undefined;
  await rpc?.stop();
  rpc = undefined;
});

async function contextOf(env: Record<string, string>): Promise<AppContext> {
  db ??= await sharedDatabase();
  return db.open(env);
}

const stored = (ctx: AppContext) =>
  ctx.store.all<Record<string, any>>("SELECT signature, slot, block_time, status, token_delta_raw, amount_moved_raw FROM chain_transactions ORDER BY slot");

describe("transaction-sync", () => {
  test("stores every signature once with the tracked wallets' exact token delta", async () => {
    rpc = startSolanaRpc({ holders: 200, transactions: 25, seed: "tx" });
    const f = rpc.fixture;
    const ctx = await contextOf(chainEnv(rpc));
    const run = await ctx.jobs.runNow("transaction-sync");
    expect(run.ok).toBe(true);
    const expected = f.transactions.map((tx) => expectedTx(f, tx));
    expect(await stored(ctx)).toEqual(
      expected.map((e) => ({
        signature: e.signature,
        slot: e.slot,
        block_time: e.blockTime,
        status: e.status,
        token_delta_raw: e.delta.toString(),
        amount_moved_raw: e.moved.toString(),
      })),
    );
    // The fixture covers outflows, inflows, transfers between tracked wallets (net 0) and failed transactions.
    expect(new Set(expected.map((e) => (e.delta.toString().startsWith("-") ? "out" : e.delta === 0n ? "zero" : "in")))).toEqual(new Set(["out", "in", "zero"]));
    expect(expected.some((e) => e.status === "failed")).toBe(true);
    const syncRun = (await ctx.store.get<Record<string, any>>("SELECT * FROM chain_sync_runs"))!;
    expect(syncRun).toMatchObject({ job_run_id: run.run_id, stored: 25, gap_detected: 0, addresses: 4, newest_signature: f.transactions.at(-1)!.signature });
    // Signatures listed by several addresses (a treasury wallet and the mint) were fetched once.
    expect(rpc.callsOf("getTransaction")).toHaveLength(25);
    expect(syncRun.already_stored).toBe(syncRun.new_signatures - 25);
  });

  test("repeated runs and a restart add only what is new, and ask only for what is newer", async () => {
    rpc = startSolanaRpc({ holders: 200, transactions: 12, seed: "tx2" });
    const f = rpc.fixture;
    const env = chainEnv(rpc);
    const first = await contextOf(env);
    await first.jobs.runNow("transaction-sync");
    await first.jobs.runNow("transaction-sync");
    expect(await stored(first)).toHaveLength(12);
    expect(rpc.callsOf("getTransaction")).toHaveLength(12);
    // Every later getSignaturesForAddress carried `until` = the last stored signature of that address.
    const second = rpc.callsOf("getSignaturesForAddress").slice(4);
    expect(second.every((c) => typeof (c.params[1] as { until?: string }).until === "string")).toBe(true);
    await db!.close(first);

    f.addTransactions(7);
    const restarted = await contextOf(env);
    const run = await restarted.jobs.runNow("transaction-sync");
    expect(run.ok).toBe(true);
    expect(await stored(restarted)).toHaveLength(19);
    expect(rpc.callsOf("getTransaction")).toHaveLength(19);
    expect((await stored(restarted)).map((r) => r.signature)).toEqual(f.transactions.map((t) => t.signature));
    await restarted.jobs.runNow("transaction-sync");
    expect(await stored(restarted)).toHaveLength(19);
    expect(rpc.callsOf("getTransaction")).toHaveLength(19);
  });

  test("a run that fails half way resumes from its cursor without duplicates", async () => {
    rpc = startSolanaRpc({ holders: 100, transactions: 10, seed: "tx3" });
    const ctx = await contextOf({ ...chainEnv(rpc), SOLANA_RPC_RETRIES: "0" });
    // The sixth getTransaction fails on the only URL: the run stops there.
    rpc.fault({ kind: "500", method: "getTransaction", times: 1, after: 5 });
    const calls = () => rpc!.callsOf("getTransaction").length;
    let run = await ctx.jobs.runNow("transaction-sync");
    expect(run.ok).toBe(false);
    expect(run.error).toContain("HTTP 500");
    expect(calls()).toBe(6);
    expect(await stored(ctx)).toHaveLength(5);
    run = await ctx.jobs.runNow("transaction-sync");
    expect(run.ok).toBe(true);
    expect(calls()).toBe(6 + 5); // only the five not yet stored
    expect(await stored(ctx)).toHaveLength(10);
    expect(new Set((await stored(ctx)).map((r) => r.signature)).size).toBe(10);
  });

  test("the first sync backfills at most CHAIN_TX_BACKFILL_LIMIT per address; a later gap is flagged", async () => {
    rpc = startSolanaRpc({ holders: 100, transactions: 20, seed: "tx4" });
    const f = rpc.fixture;
    const ctx = await contextOf({ ...chainEnv(rpc), CHAIN_TX_BACKFILL_LIMIT: "5", CHAIN_TX_MAX_PER_RUN: "3" });
    await ctx.jobs.runNow("transaction-sync");
    const mintNewest = f
      .signaturesFor(f.mint)
      .slice(0, 5)
      .map((t) => t.signature);
    const got = new Set((await stored(ctx)).map((r) => r.signature));
    for (const s of mintNewest) expect(got.has(s)).toBe(true);
    expect((await ctx.store.get<{ gap_detected: number }>("SELECT gap_detected FROM chain_sync_runs"))!.gap_detected).toBe(0);
    f.addTransactions(6);
    await ctx.jobs.runNow("transaction-sync");
    const last = (await ctx.store.get<{ gap_detected: number }>("SELECT gap_detected FROM chain_sync_runs ORDER BY id DESC LIMIT 1"))!;
    expect(last.gap_detected).toBe(1);
  });
});
