import { afterEach, describe, expect, test } from "bun:test";
import type { Queryable, Store } from "../../src/db/port";
import { createLogger } from "../../src/log";
import { recordHolderGrowth } from "../../src/chain/holders-snapshot";
import { rpcCallLog } from "../../src/chain/rpc-log";
import { moveCursor } from "../../src/chain/store/transactions";
import { chainEnv, startSolanaRpc, type DevRpcServer } from "../support/solana-rpc";
import { sharedDatabase, type SharedDatabase } from "./contexts";

// Two Herald instances over ONE database (two contexts: two SQLite connections on the file, or two PostgreSQL
// pools), on HERALD_TEST_ENGINE's engine: the chain jobs are singletons under the job leases, but a manual run
// beside the scheduled one (or a run that outlived its lease) must still leave the tables right.

let db: SharedDatabase | undefined;
let rpc: DevRpcServer | undefined;
afterEach(async () => {
  await db?.dispose();
  db = undefined;
  await rpc?.stop();
  rpc = undefined;
});

async function twoInstances(opts: { holders?: number; transactions?: number } = {}) {
  rpc = startSolanaRpc({ holders: opts.holders ?? 120, transactions: opts.transactions ?? 20, seed: "instances" });
  db = await sharedDatabase();
  const env = chainEnv(rpc);
  return { a: await db.open(env, undefined, "a"), b: await db.open(env, undefined, "b"), f: rpc.fixture };
}

describe("transaction-sync on two instances at once", () => {
  test("every signature is stored once and counted once, and each cursor ends at its address's newest signature", async () => {
    const { a, b, f } = await twoInstances();
    const [ra, rb] = await Promise.all([a.jobs.runNow("transaction-sync"), b.jobs.runNow("transaction-sync")]);
    expect([ra.ok, rb.ok]).toEqual([true, true]);
    const rows = await a.store.all<{ signature: string }>("SELECT signature FROM chain_transactions");
    expect(rows).toHaveLength(20);
    expect(new Set(rows.map((r) => r.signature))).toEqual(new Set(f.transactions.map((t) => t.signature)));
    const runs = await a.store.all<{ stored: number }>("SELECT stored FROM chain_sync_runs");
    expect(runs).toHaveLength(2);
    expect(runs.reduce((s, r) => s + r.stored, 0)).toBe(20); // stored by one run, "already stored" for the other
    for (const c of await a.store.all<{ address: string; last_signature: string }>("SELECT address, last_signature FROM chain_sync_cursors")) {
      expect(c.last_signature).toBe(f.signaturesFor(c.address)[0]!.signature);
    }
  });

  test("a cursor only moves forward: a slower run's older signature does not take it back", async () => {
    db = await sharedDatabase();
    const ctx = await db.open();
    const at = (signature: string, slot: number) => ({
      mint: "M",
      address: "A",
      last_signature: signature,
      last_slot: slot,
      updated_at: "2026-01-01T00:00:00.000Z",
    });
    await moveCursor(ctx.store, at("newer", 20));
    await moveCursor(ctx.store, at("older", 10));
    expect(await ctx.store.get("SELECT last_signature, last_slot FROM chain_sync_cursors")).toEqual({ last_signature: "newer", last_slot: 20 });
    await moveCursor(ctx.store, at("newest", 30));
    expect(await ctx.store.get("SELECT last_signature, last_slot FROM chain_sync_cursors")).toEqual({ last_signature: "newest", last_slot: 30 });
  });
});

describe("holder-growth on two instances at once", () => {
  test("points computed at once take turns: each one's previous point is the one before it, never both from the same one", async () => {
    const { a, b } = await twoInstances();
    expect((await a.jobs.runNow("holders-snapshot")).ok).toBe(true);
    // Ten pairs of points recorded at the same moment on the two instances (the job's own verb, as a manual run
    // beside the scheduled one would call it).
    for (let i = 0; i < 10; i++) await Promise.all([recordHolderGrowth(a, null), recordHolderGrowth(b, null)]);
    const points = await a.store.all<{ holders: number; previous_holders: number | null; delta: number | null }>(
      "SELECT holders, previous_holders, delta FROM chain_holder_growth ORDER BY id",
    );
    const holders = points[0]!.holders;
    expect(points).toHaveLength(20);
    expect(points.filter((p) => p.previous_holders === null)).toHaveLength(1); // only the very first has none
    expect(points.slice(1).every((p) => p.previous_holders === holders && p.delta === 0)).toBe(true);
  });
});

describe("RPC outcomes", () => {
  test("both instances' attempts are stored: each flushes its own buffer into the one table", async () => {
    const { a, b, f } = await twoInstances();
    await a.chain.tokenSupply(f.mint);
    await b.chain.tokenSupply(f.mint);
    await b.chain.tokenSupply(f.mint);
    await a.chain.flushRecords();
    await b.chain.flushRecords();
    expect((await a.store.get<{ n: number }>("SELECT count(*) AS n FROM chain_rpc_calls WHERE outcome = 'ok'"))!.n).toBe(3);
  });

  test("recording an attempt never writes: a store that refuses keeps the rows for the next flush, and the caller never sees it", async () => {
    let refuse = true;
    const writes: unknown[][] = [];
    const store = {
      dialect: "sqlite",
      async tx<T>(fn: (t: Queryable) => Promise<T>): Promise<T> {
        if (refuse) throw new Error("database is locked");
        return fn({
          all: async () => [],
          get: async () => null,
          run: async (_sql: string, params: readonly unknown[] = []) => {
            writes.push([...params]);
            return { changes: 1 };
          },
        } as unknown as Queryable);
      },
    } as unknown as Store;
    const log = rpcCallLog(store, createLogger("silent"));
    const attempt = {
      at: "2026-01-01T00:00:00.000Z",
      host: "rpc.example",
      method: "getBalance",
      outcome: "ok" as const,
      httpStatus: null,
      latencyMs: 3,
      error: null,
    };
    log.record(attempt); // returns at once: nothing was written yet
    log.record({ ...attempt, outcome: "timeout" as const });
    expect([log.pending, writes.length]).toEqual([2, 0]);
    expect(await log.flush()).toBe(0); // refused: kept
    expect(log.pending).toBe(2);
    refuse = false;
    expect(await log.flush()).toBe(2);
    expect([log.pending, writes.length]).toEqual([0, 2]);
  });
});
