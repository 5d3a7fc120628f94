import { afterEach, describe, expect, test } from "bun:test";
import { openTestApp, type TestApp } from "../support/app";
import { createKey, signedJson } from "../support/partner";
import { chainEnv, decimalString, deadRpcUrl, expectedBalances, expectedHolders, startSolanaRpc, type DevRpcServer } from "../support/solana-rpc";

let h: TestApp | undefined;
let rpc: DevRpcServer | undefined;
afterEach(async () => {
  await h?.close();
  h = undefined;
  await rpc?.stop();
  rpc = undefined;
});

async function setup(env: Record<string, string> = {}, holders = 600) {
  rpc = startSolanaRpc({ holders, transactions: 30, seed: "routes" });
  h = await openTestApp({ env: chainEnv(rpc, [rpc.url], env) });
  return { h, rpc, f: rpc.fixture, key: await createKey(h, { scopes: ["read"] }) };
}

async function runAll(h: TestApp) {
  for (const job of ["token-snapshot", "holders-snapshot", "mint-authority-snapshot", "transaction-sync", "holder-growth"]) {
    const r = await h.ctx.jobs.runNow(job);
    expect(r.ok).toBe(true);
  }
}

/** Partner auth for a signed read route: unsigned 401, a key without `read` 403, a sandbox key 403. */
async function expectReadAuth(h: TestApp, path: string) {
  expect((await h.json(path)).status).toBe(401);
  const noRead = await signedJson(h, await createKey(h, { scopes: ["users"] }), "GET", path);
  expect(noRead.status).toBe(403);
  expect(noRead.body.message).toContain('"read" scope');
  const sandbox = await signedJson(h, await createKey(h, { mode: "sandbox" }), "GET", path);
  expect(sandbox.status).toBe(403);
  expect(sandbox.body.error).toBe("forbidden");
}

describe("GET /api/partner/token-status", () => {
  test("503 service_unavailable until the first snapshot, then exact decimal strings from it", async () => {
    const { h, f, key } = await setup();
    const before = await signedJson(h, key, "GET", "/api/partner/token-status");
    expect(before.status).toBe(503);
    expect(before.body).toMatchObject({ success: false, error: "service_unavailable", details: { reason: "no_snapshot" } });

    await h.ctx.jobs.runNow("token-snapshot");
    await h.ctx.jobs.runNow("holders-snapshot");
    const e = expectedBalances(f);
    const r = await signedJson(h, key, "GET", "/api/partner/token-status?include_meta=1");
    expect(r.status).toBe(200);
    expect(r.body).toMatchObject({
      success: true,
      mint: f.mint,
      decimals: 6,
      rpc_url: rpc!.url,
      chain: {
        total_supply: decimalString(e.supply, 6),
        treasury_balance: decimalString(e.treasury, 6),
        reserve_balance: decimalString(e.reserve, 6),
        tracked_treasury_balance: decimalString(e.tracked, 6),
        circulating_supply: decimalString(e.circulating, 6),
        holders: expectedHolders(f).holders,
        holders_source: "onchain_scan",
      },
      raw: { total_supply: e.supply.toString(), circulating_supply: e.circulating.toString() },
      snapshot: { token_snapshot_id: 1, freshness_status: "fresh", age_hours: 0, holders_snapshot_id: 1, holders_freshness_status: "fresh" },
      meta: { request_id: expect.any(String) },
    });
  });

  test("auth: unsigned 401, missing read scope 403, sandbox key 403", async () => {
    const { h } = await setup();
    await expectReadAuth(h, "/api/partner/token-status");
  });
});

describe("GET /api/partner/wallet-info/{wallet_address}", () => {
  test("live SOL, token and LP balances: JSON numbers as the spec says, exact decimal strings beside them", async () => {
    const { h, f, key } = await setup({ LP_MINT: "" }); // empty = unset: no LP fields
    const i = 14;
    const r = await signedJson(h, key, "GET", `/api/partner/wallet-info/${f.holderOwner(i)}?include_meta=1`);
    expect(r.status).toBe(200);
    const native = decimalString(f.holderLamports(i), 9);
    const token = decimalString(BigInt(f.holderAmount(i)), 6);
    expect(r.body).toEqual({
      success: true,
      wallet: f.holderOwner(i),
      mint: f.mint,
      decimals: 6,
      native_balance: Number(native),
      native_balance_exact: native,
      native_balance_lamports: f.holderLamports(i).toString(),
      token_balance: Number(token),
      token_balance_exact: token,
      token_balance_raw: String(f.holderAmount(i)),
      token_accounts: 1,
      // No LP_MINT: the spec's string and number, empty and zero, and lp_configured says why.
      lp_configured: false,
      lp_mint: "",
      lp_amount: 0,
      lp_amount_exact: "0",
      lp_amount_raw: "0",
      rpc_host: new URL(rpc!.url).host,
      fetched_at_utc: "2026-01-01T00:00:00.000Z",
      meta: { request_id: expect.any(String), generated_at_utc: expect.any(String) },
    });
    expect([typeof r.body.native_balance, typeof r.body.token_balance]).toEqual(["number", "number"]);
    expect([typeof r.body.native_balance_exact, typeof r.body.token_balance_exact]).toEqual(["string", "string"]);
    // Live: each request asks the RPC node (no snapshot involved).
    expect(rpc!.callsOf("getBalance")).toHaveLength(1);
    expect(rpc!.callsOf("getTokenAccountsByOwner")).toHaveLength(1);
  });

  test("amounts a double cannot hold: the number is the nearest double, the _exact string keeps every digit", async () => {
    const { h, f, key } = await setup({ LP_MINT: "" });
    const treasury = f.treasury[0]!;
    // 2^53 − 1 lamports (still exact as the RPC's JSON number) and a token sum past 2^64 raw units: both lose
    // digits as doubles once divided into SOL and tokens.
    treasury.lamports = 9_007_199_254_740_991n;
    treasury.accounts[0]!.amount = 12_345_678_901_234_567_891n;
    treasury.accounts[1]!.amount = 1n;
    const r = await signedJson(h, key, "GET", `/api/partner/wallet-info/${treasury.owner}`);
    expect(r.status).toBe(200);
    expect(r.body).toMatchObject({
      native_balance_exact: "9007199.254740991",
      native_balance_lamports: "9007199254740991",
      native_balance: 9007199.25474099,
      token_balance_exact: "12345678901234.567892",
      token_balance_raw: "12345678901234567892",
      token_balance: 12345678901234.568,
      token_accounts: 2,
    });
    // The rounding is real: the number's shortest form is not the exact string, which is why both are served.
    expect(String(r.body.native_balance)).not.toBe(r.body.native_balance_exact);
    expect(String(r.body.token_balance)).not.toBe(r.body.token_balance_exact);
    expect(r.body.native_balance).toBe(Number(r.body.native_balance_exact));
    expect(r.body.token_balance).toBe(Number(r.body.token_balance_exact));
  });

  test("with LP_MINT the wallet's LP amount is reported (number and exact string); several token accounts are summed", async () => {
    rpc = startSolanaRpc({ holders: 100, seed: "lp" });
    h = await openTestApp({ env: chainEnv(rpc, [rpc.url], { LP_MINT: rpc.fixture.lpMint }) });
    const key = await createKey(h, { scopes: ["read"] });
    const f = rpc.fixture;
    const withLp = await signedJson(h, key, "GET", `/api/partner/wallet-info/${f.holderOwner(7)}`);
    const lp = decimalString(f.holderLpAmount(7), 9);
    expect(withLp.body).toMatchObject({
      lp_configured: true,
      lp_mint: f.lpMint,
      lp_amount: Number(lp),
      lp_amount_exact: lp,
      lp_amount_raw: f.holderLpAmount(7).toString(),
    });
    expect(typeof withLp.body.lp_amount).toBe("number");
    const withoutLp = await signedJson(h, key, "GET", `/api/partner/wallet-info/${f.holderOwner(8)}`);
    expect(withoutLp.body).toMatchObject({ lp_amount: 0, lp_amount_exact: "0", lp_amount_raw: "0" });
    const treasury = f.treasury[0]!;
    const t = await signedJson(h, key, "GET", `/api/partner/wallet-info/${treasury.owner}`);
    const sum = treasury.accounts.reduce((s, a) => s + a.amount, 0n);
    expect(t.body).toMatchObject({
      token_accounts: 2,
      token_balance: Number(decimalString(sum, 6)),
      token_balance_exact: decimalString(sum, 6),
      native_balance: Number(decimalString(treasury.lamports, 9)),
      native_balance_exact: decimalString(treasury.lamports, 9),
    });
  });

  test("a valid address with nothing on it is zero, not an error", async () => {
    const { h, f, key } = await setup();
    const stranger = f.authority(42);
    const r = await signedJson(h, key, "GET", `/api/partner/wallet-info/${stranger}`);
    expect(r.status).toBe(200);
    expect(r.body).toMatchObject({ native_balance: 0, native_balance_exact: "0", token_balance: 0, token_balance_exact: "0", token_accounts: 0, decimals: 6 });
  });

  test("invalid addresses are 400 invalid_query", async () => {
    const { h, key } = await setup();
    for (const bad of ["not-an-address", "0OIl0OIl0OIl0OIl0OIl0OIl0OIl0OIl", "1".repeat(31), "A".repeat(45), "x".repeat(80)]) {
      const r = await signedJson(h, key, "GET", `/api/partner/wallet-info/${bad}`);
      expect(r.status).toBe(400);
      expect(r.body.error).toBe("invalid_query");
    }
  });

  test("an unreachable RPC is 503 service_unavailable (rpc_unavailable), never zeros", async () => {
    rpc = startSolanaRpc({ holders: 50, seed: "down" });
    h = await openTestApp({ env: chainEnv(rpc, [deadRpcUrl()], { SOLANA_RPC_RETRIES: "0" }) });
    const r = await signedJson(h, await createKey(h, { scopes: ["read"] }), "GET", `/api/partner/wallet-info/${rpc.fixture.holderOwner(1)}`);
    expect(r.status).toBe(503);
    expect(r.body).toMatchObject({ error: "service_unavailable", details: { reason: "rpc_unavailable" } });
  });

  test("auth: unsigned 401, missing read scope 403, sandbox key 403", async () => {
    const { h, f } = await setup();
    await expectReadAuth(h, `/api/partner/wallet-info/${f.holderOwner(1)}`);
  });
});

describe("GET /api/public-stats", () => {
  test("stats from the snapshots, 24 h volume from synced transactions, and the cache block", async () => {
    const { h, f } = await setup();
    await runAll(h);
    const e = expectedBalances(f);
    const since = h.clock.now().getTime() / 1000 - 86_400;
    const volume = f.transactions.filter((t) => !t.failed && t.blockTime >= since).reduce((s, t) => s + t.amount, 0n);
    const r = await h.json("/api/public-stats");
    expect(r.status).toBe(200);
    expect(r.headers.get("x-ratelimit-limit")).toBe("90");
    expect(r.body).toMatchObject({
      success: true,
      status: "fresh",
      stats: {
        total_supply: decimalString(e.supply, 6),
        circulating_supply: decimalString(e.circulating, 6),
        holders: expectedHolders(f).holders,
        holders_cached: expectedHolders(f).holders,
        holders_source: "onchain_scan",
        volume_24h: decimalString(volume, 6),
      },
      cache: {
        source: "chain_token_snapshots",
        available: true,
        enabled: true,
        reason: null,
        cached_at_utc: h.clock.now().toISOString(),
        age_hours: 0,
        max_age_hours: 1,
        source_error: null,
        proof_url: "/api/public/public-stats-cache-freshness.json",
      },
      trust_context: { snapshot_id: 1, job: "token-snapshot", rpc_host: new URL(rpc!.url).host },
    });
    expect(volume).toBeGreaterThan(0n);

    rpc!.fault({ kind: "500" });
    h.clock.advanceSeconds(90 * 60);
    await h.ctx.jobs.runNow("token-snapshot");
    const stale = await h.json("/api/public-stats");
    expect(stale.body.status).toBe("stale");
    expect(stale.body.cache).toMatchObject({ available: true, age_hours: 1.5, consecutive_failures: 1 });
    expect(stale.body.cache.source_error).toContain("every RPC URL failed");
    expect(stale.body.stats.total_supply).toBe(decimalString(e.supply, 6)); // the last good numbers, labelled stale
  });
});

describe("GET /api/transactions/latest", () => {
  test("newest first with exact token deltas; limit bounds", async () => {
    const { h, f } = await setup();
    await h.ctx.jobs.runNow("token-snapshot");
    await h.ctx.jobs.runNow("transaction-sync");
    const all = await h.json("/api/transactions/latest");
    expect(all.status).toBe(200);
    expect(all.body).toMatchObject({ status: "fresh", count: 30, query: { limit: 50, offset: 0, cursor: null }, decimals: 6 });
    expect(all.body.pagination).toEqual({ has_more: false, next_offset: null, next_cursor: null });
    const newest = [...f.transactions].reverse();
    expect(all.body.rows.map((r: { signature: string }) => r.signature)).toEqual(newest.map((t) => t.signature));
    const top = (await h.json("/api/transactions/latest?limit=3")).body;
    expect(top.rows).toHaveLength(3);
    expect(top).toMatchObject({ count: 3, query: { limit: 3, offset: 0, cursor: null }, pagination: { has_more: true, next_offset: null, next_cursor: null } });
    const tracked = new Set(f.wallets().map((w) => w.owner));
    top.rows.forEach((row: Record<string, unknown>, k: number) => {
      const tx = newest[k]!;
      const moved = tx.failed ? 0n : tx.amount;
      const delta = (tracked.has(tx.to.owner) ? moved : 0n) - (tracked.has(tx.from.owner) ? moved : 0n);
      expect(row).toEqual({
        signature: tx.signature,
        block_time: new Date(tx.blockTime * 1000).toISOString(),
        slot: tx.slot,
        status: tx.failed ? "failed" : "ok",
        token_delta: decimalString(delta, 6),
        token_delta_raw: delta.toString(),
        amount_moved: decimalString(moved, 6),
        found_via: expect.any(String),
      });
    });
    for (const bad of ["0", "201", "abc", "-1", "1.5"]) {
      const r = await h.json(`/api/transactions/latest?limit=${bad}`);
      expect(r.status).toBe(400);
      expect(r.body.error).toBe("invalid_query");
    }
  });
});
