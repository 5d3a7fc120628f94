import { afterEach, describe, expect, test } from "bun:test";
import { openTestApp, type TestApp } from "../support/app";
import { chainEnv, decimalString, expectedBalances, expectedHolders, startSolanaRpc, type DevRpcServer } from "../support/solana-rpc";

let h: TestApp | undefined;
let rpc: DevRpcServer | undefined;
afterEach(async () => {
  await h?.close();
  h = undefined;
  await rpc?.stop();
  rpc = undefined;
});

async function setup(opts: { holders?: number; transactions?: number; env?: Record<string, string> } = {}) {
  rpc = startSolanaRpc({ holders: opts.holders ?? 777, transactions: opts.transactions ?? 30, seed: "jobs" });
  h = await openTestApp({ env: chainEnv(rpc, [rpc.url], opts.env) });
  return { h, rpc, f: rpc.fixture };
}

async function row(h: TestApp, sql: string, ...args: Array<string | number>): Promise<Record<string, any>> {
  await h.ctx.chain.flushRecords(); // the RPC outcomes are written in batches off the call path
  return (await h.ctx.store.get<Record<string, any>>(sql, args))!;
}

describe("token-snapshot", () => {
  test("writes supply, treasury, reserve and circulating exactly, naming its job run", async () => {
    const { h, f } = await setup();
    const run = await h.ctx.jobs.runNow("token-snapshot");
    expect(run.ok).toBe(true);
    const e = expectedBalances(f);
    const snap = await row(h, "SELECT * FROM chain_token_snapshots ORDER BY id DESC LIMIT 1");
    expect(snap).toMatchObject({
      mint: f.mint,
      decimals: 6,
      supply_raw: e.supply.toString(),
      treasury_raw: e.treasury.toString(),
      reserve_raw: e.reserve.toString(),
      tracked_treasury_raw: e.tracked.toString(),
      circulating_raw: e.circulating.toString(),
      job_run_id: run.run_id,
      rpc_host: new URL(rpc!.url).host,
    });
    // The first treasury wallet holds two token accounts of the mint: both are counted.
    const wallets = JSON.parse(snap.wallets_json);
    expect(wallets[0]).toMatchObject({ role: "treasury", wallet: f.treasury[0]!.owner, token_accounts: 2 });
    expect(decimalString(e.circulating, 6)).toMatch(/^\d+\.\d+$/); // the fixture is not a round number
  });

  test("snapshots are immutable: a second run adds a row and leaves the first untouched", async () => {
    const { h } = await setup();
    await h.ctx.jobs.runNow("token-snapshot");
    const first = await row(h, "SELECT * FROM chain_token_snapshots WHERE id = 1");
    h.clock.advanceSeconds(600);
    await h.ctx.jobs.runNow("token-snapshot");
    expect((await row(h, "SELECT count(*) AS n FROM chain_token_snapshots")).n).toBe(2);
    expect(await row(h, "SELECT * FROM chain_token_snapshots WHERE id = 1")).toEqual(first);
  });
});

describe("holders-snapshot", () => {
  test("counts non-zero accounts and top-1/5/10 exactly as a brute-force sort of the fixture", async () => {
    const { h, f } = await setup({ holders: 2500 });
    const run = await h.ctx.jobs.runNow("holders-snapshot");
    expect(run).toMatchObject({ ok: true });
    const e = expectedHolders(f);
    const snap = await row(h, "SELECT * FROM chain_holder_snapshots ORDER BY id DESC LIMIT 1");
    expect(snap).toMatchObject({
      accounts_scanned: e.accounts,
      holders: e.holders,
      total_raw: e.total.toString(),
      top1_raw: e.top1.toString(),
      top5_raw: e.top5.toString(),
      top10_raw: e.top10.toString(),
      job_run_id: run.run_id,
    });
    expect(e.holders).toBeLessThan(e.accounts); // the fixture has empty accounts, which are not holders
    expect(BigInt(snap.total_raw)).toBe(f.supply());
    const top = JSON.parse(snap.top_accounts_json) as Array<{ address: string; amount_raw: string }>;
    expect(top).toHaveLength(10);
    expect(top.reduce((s, t) => s + BigInt(t.amount_raw), 0n)).toBe(e.top10);
    // Addresses are real: the largest one is the first treasury wallet's main token account.
    expect(top[0]!.address).toBe(f.treasury[0]!.accounts[0]!.address);
    // The scan asked for the amount slice only, filtered on the mint.
    const call = rpc!.callsOf("getProgramAccounts")[0]!;
    expect(call.params[1]).toMatchObject({
      encoding: "base64",
      dataSlice: { offset: 64, length: 8 },
      filters: [{ dataSize: 165 }, { memcmp: { offset: 0, bytes: f.mint } }],
    });
  });

  test("a reply cut off half way is retried and counted once, not one and a half times", async () => {
    const { h, f } = await setup({ holders: 3000 });
    rpc!.fault({ kind: "malformed", method: "getProgramAccounts", times: 1 });
    const run = await h.ctx.jobs.runNow("holders-snapshot");
    expect(run.ok).toBe(true);
    expect(rpc!.callsOf("getProgramAccounts")).toHaveLength(2);
    expect((await row(h, "SELECT holders FROM chain_holder_snapshots")).holders).toBe(expectedHolders(f).holders);
    expect((await row(h, "SELECT outcome FROM chain_rpc_calls WHERE method = 'getProgramAccounts' ORDER BY id LIMIT 1")).outcome).toBe("malformed");
  });
});

describe("mint-authority-snapshot", () => {
  test("renounced authorities against an expectation of none: no mismatch", async () => {
    const { h } = await setup({ env: { EXPECTED_MINT_AUTHORITY: "none", EXPECTED_FREEZE_AUTHORITY: "none" } });
    expect((await h.ctx.jobs.runNow("mint-authority-snapshot")).ok).toBe(true);
    expect(await row(h, "SELECT * FROM chain_mint_authority_snapshots")).toMatchObject({
      mint_authority: null,
      freeze_authority: null,
      review_status: "renounced",
      expected_review_status: "renounced",
      expectation_configured: 1,
      mismatch: 0,
      mismatch_fields: "[]",
    });
  });

  test("a mint authority that reappears is a mismatch, named by field", async () => {
    const { h, f } = await setup({ env: { EXPECTED_MINT_AUTHORITY: "none", EXPECTED_FREEZE_AUTHORITY: "none" } });
    f.mintAuthority = f.authority(3);
    await h.ctx.jobs.runNow("mint-authority-snapshot");
    expect(await row(h, "SELECT * FROM chain_mint_authority_snapshots")).toMatchObject({
      mint_authority: f.authority(3),
      review_status: "mint_authority_retained",
      expected_review_status: "renounced",
      mismatch: 1,
      mismatch_fields: '["mint_authority"]',
    });
  });

  test("without an expectation the review is reported but nothing is a mismatch", async () => {
    const { h, f } = await setup();
    f.freezeAuthority = f.authority(1);
    await h.ctx.jobs.runNow("mint-authority-snapshot");
    expect(await row(h, "SELECT * FROM chain_mint_authority_snapshots")).toMatchObject({
      review_status: "freeze_authority_retained",
      expected_review_status: null,
      expectation_configured: 0,
      mismatch: 0,
    });
  });
});

describe("holder-growth", () => {
  test("fails without a holders snapshot, then records points with deltas", async () => {
    const { h } = await setup({ holders: 300 });
    const first = await h.ctx.jobs.runNow("holder-growth");
    expect(first.ok).toBe(false);
    expect(first.error).toContain("no holders snapshot yet");
    await h.ctx.jobs.runNow("holders-snapshot");
    const run = await h.ctx.jobs.runNow("holder-growth");
    const holders = (await row(h, "SELECT holders FROM chain_holder_snapshots")).holders;
    expect(await row(h, "SELECT * FROM chain_holder_growth")).toMatchObject({
      holders,
      previous_holders: null,
      delta: null,
      holder_snapshot_id: 1,
      job_run_id: run.run_id,
    });
    h.clock.advanceSeconds(86_400);
    await h.ctx.jobs.runNow("holder-growth");
    expect(await row(h, "SELECT * FROM chain_holder_growth WHERE id = 2")).toMatchObject({ holders, previous_holders: holders, delta: 0 });
  });
});
