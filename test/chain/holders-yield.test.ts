// The holders scan leaves the event loop free while it works (src/solana/scan-call.ts feedScanner): a 100k-holder
// snapshot with a 10 ms timer running beside it, and a reply already buffered whole, which a plain read loop would
// parse in one stretch of microtasks with no timer, probe or request served until the end.
import { afterEach, describe, expect, setDefaultTimeout, test } from "bun:test";
import { ChainFixture } from "../../src/chain/fixture-data";
import { scanStream } from "../../src/chain/fixture-scan";
import { HolderAccumulator, topSum } from "../../src/chain/holders";
import { feedScanner, SCAN_SLICE_BYTES } from "../../src/solana/scan-call";
import { ProgramAccountsScanner } from "../../src/solana/scan-parser";
import { openTestApp, type TestApp } from "../support/app";
import { chainEnv, type DevRpcServer, expectedHolders, startSolanaRpc } from "../support/solana-rpc";

// 100k accounts are ~24 MB of reply, built and read in this process: a few seconds on a loaded machine.
setDefaultTimeout(120_000);

const HOLDERS = 100_000;
/** Generous against a loaded CI machine: a slice is ~3 ms of parsing here, an unsliced 100k reply ~60–70 ms, 1M ~0.5 s. */
const MAX_LATE_MS = 250;

let h: TestApp | undefined;
let rpc: DevRpcServer | undefined;
afterEach(async () => {
  await h?.close();
  h = undefined;
  await rpc?.stop();
  rpc = undefined;
});

/** How late a 10 ms interval fired at worst while `work` ran, and how many times the loop turned (setImmediate). */
async function whileWatched<T>(work: () => Promise<T>): Promise<{ result: T; maxLateMs: number; turns: number }> {
  let last = performance.now();
  let maxLateMs = 0;
  const timer = setInterval(() => {
    const now = performance.now();
    maxLateMs = Math.max(maxLateMs, now - last - 10);
    last = now;
  }, 10);
  let turns = 0;
  let watching = true;
  const turn = () => {
    turns++;
    if (watching) setImmediate(turn);
  };
  setImmediate(turn);
  try {
    const result = await work();
    return { result, maxLateMs, turns };
  } finally {
    watching = false;
    clearInterval(timer);
  }
}

describe("the holders scan yields to the event loop", () => {
  test(`a ${HOLDERS / 1000}k-holder snapshot: a 10 ms timer is never more than ${MAX_LATE_MS} ms late, and the counts are exact`, async () => {
    rpc = startSolanaRpc({ holders: HOLDERS, transactions: 0, seed: "yield" });
    h = await openTestApp({ env: chainEnv(rpc, [rpc.url], { SOLANA_RPC_SCAN_TIMEOUT_MS: "120000" }) });
    const { result: run, maxLateMs } = await whileWatched(() => h!.ctx.jobs.runNow("holders-snapshot"));
    expect(run.ok).toBe(true);
    expect(maxLateMs).toBeLessThan(MAX_LATE_MS);
    const e = expectedHolders(rpc.fixture);
    const snap = await h.ctx.store.get<Record<string, unknown>>("SELECT * FROM chain_holder_snapshots ORDER BY id DESC LIMIT 1");
    expect(snap).toMatchObject({
      accounts_scanned: e.accounts,
      holders: e.holders,
      total_raw: e.total.toString(),
      top1_raw: e.top1.toString(),
      top5_raw: e.top5.toString(),
      top10_raw: e.top10.toString(),
    });
  });

  test("a reply buffered whole (one chunk, every read resolved at once) is parsed a slice at a time, with the loop turning between", async () => {
    const f = new ChainFixture({ seed: "yield", holders: HOLDERS, transactions: 0 });
    const parts: Uint8Array[] = [];
    const source = scanStream(f, { id: 1, dataSlice: { offset: 64, length: 8 }, withContext: false, truncateAfter: null, empty: false }).getReader();
    for (;;) {
      const { done, value } = await source.read();
      if (done) break;
      parts.push(value.slice());
    }
    const whole = Buffer.concat(parts);
    const acc = new HolderAccumulator();
    const scanner = new ProgramAccountsScanner(acc.sink);
    const buffered = new ReadableStream<Uint8Array>({
      start(c) {
        c.enqueue(whole);
        c.close();
      },
    });
    const { maxLateMs, turns } = await whileWatched(() => feedScanner(scanner, buffered.getReader()));
    expect(scanner.end()).toEqual({ accounts: expect.any(Number), bytes: whole.length });
    // A read loop without slices gives the loop no turn at all here: the whole reply is one synchronous stretch.
    expect(turns).toBeGreaterThanOrEqual(Math.floor(whole.length / SCAN_SLICE_BYTES));
    expect(maxLateMs).toBeLessThan(MAX_LATE_MS);
    const e = expectedHolders(f);
    const tally = acc.result();
    expect([tally.accounts, tally.holders, tally.total, topSum(tally.top, 10)]).toEqual([e.accounts, e.holders, e.total, e.top10]);
  });
});
