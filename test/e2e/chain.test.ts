import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { parse } from "csv-parse/sync";
import { signedJson } from "../support/partner";
import { chainEnv, decimalString, expectedBalances, expectedHolders, startSolanaRpc, type DevRpcServer } from "../support/solana-rpc";
import { TARGET } from "../support/target";
import { expectRefusal, startE2E, type E2E } from "./support";

// Chain data end to end (docs/chain.md), with the deterministic Solana JSON-RPC fixture on 127.0.0.1 as the peer.
// The chain jobs run in this process (h.ctx.jobs.runNow), as `herald jobs run` would beside the server: they write
// the shared database, and the target's routes — in process, or in a served Herald — read what they wrote.
// Every expected number is computed from the fixture's own data (test/support/solana-rpc.ts), not from src/chain.

let e: E2E;
let rpc: DevRpcServer;
const JOBS = ["token-snapshot", "holders-snapshot", "mint-authority-snapshot", "transaction-sync", "holder-growth"];

beforeAll(async () => {
  // The fixture's transfers end just before `now`: the test clock's start in process, the wall clock when served.
  rpc = startSolanaRpc({ holders: 300, transactions: 30, seed: "e2e-chain", ...(TARGET.kind === "app" ? {} : { now: new Date() }) });
  e = await startE2E(chainEnv(rpc, [rpc.url], { SOLANA_RPC_RETRIES: "0" }));
});
afterAll(async () => {
  await e?.stop();
  await rpc?.stop();
});

describe(`chain over HTTP (${TARGET.label})`, () => {
  test("before any job: public proofs say missing, the partner's token status is 503 no_snapshot", async () => {
    const stats = await e.h.json("/api/public-stats");
    expect(stats.status).toBe(200);
    expect(stats.body).toMatchObject({ success: true, status: "missing", cache: { available: false } });
    const status = await signedJson(e.h, e.live, "GET", "/api/partner/token-status");
    expectRefusal(status, 503, "service_unavailable");
    expect(status.body.details).toMatchObject({ reason: "no_snapshot" });
    expect((await e.h.json("/api/public/holder-cache-freshness.json")).body).toMatchObject({ status: "missing", holders: null });
  });

  test("after the jobs: public stats, holders and the partner's token status carry the chain's exact numbers", async () => {
    for (const job of JOBS) {
      const run = await e.h.ctx.jobs.runNow(job);
      expect({ job, ok: run.ok }).toEqual({ job, ok: true });
    }
    const f = rpc.fixture;
    const b = expectedBalances(f);
    const holders = expectedHolders(f);
    const since = e.h.clock.now().getTime() / 1000 - 86_400;
    const volume = f.transactions.filter((t) => !t.failed && t.blockTime >= since).reduce((s, t) => s + t.amount, 0n);
    expect(volume).toBeGreaterThan(0n);

    const stats = await e.h.json("/api/public-stats");
    expect(stats.status).toBe(200);
    expect(stats.headers.get("cache-control")).toBe("public, max-age=60");
    expect(stats.body).toMatchObject({
      success: true,
      status: "fresh",
      stats: {
        total_supply: decimalString(b.supply, 6),
        circulating_supply: decimalString(b.circulating, 6),
        holders: holders.holders,
        holders_source: "onchain_scan",
        volume_24h: decimalString(volume, 6),
      },
      cache: { source: "chain_token_snapshots", available: true, reason: null, proof_url: "/api/public/public-stats-cache-freshness.json" },
      trust_context: { job: "token-snapshot", rpc_host: new URL(rpc.url).host },
    });

    const proof = await e.h.json("/api/public/holder-cache-freshness.json");
    expect(proof.body).toMatchObject({
      proof: "holder_cache_freshness",
      status: "fresh",
      holders: holders.holders,
      accounts_scanned: holders.accounts,
      holders_source: "onchain_scan",
      last_run: { job: "holders-snapshot", ok: true, error: null },
      trust_context: { table: "chain_holder_snapshots", mint: f.mint },
    });
    const csv = await e.h.request("/api/public/holder-cache-freshness.csv");
    expect(csv.status).toBe(200);
    const records = parse(await csv.text(), { columns: true }) as Array<Record<string, string>>;
    expect(records).toHaveLength(1);
    expect(records[0]).toMatchObject({ status: "fresh", holders: String(holders.holders), "trust_context.mint": f.mint });

    const token = await signedJson(e.h, e.live, "GET", "/api/partner/token-status");
    expect(token.status).toBe(200);
    expect(token.body).toMatchObject({
      mint: f.mint,
      decimals: 6,
      chain: {
        total_supply: decimalString(b.supply, 6),
        treasury_balance: decimalString(b.treasury, 6),
        reserve_balance: decimalString(b.reserve, 6),
        circulating_supply: decimalString(b.circulating, 6),
        holders: holders.holders,
      },
      raw: { total_supply: b.supply.toString(), circulating_supply: b.circulating.toString() },
      snapshot: { freshness_status: "fresh", holders_freshness_status: "fresh" },
    });
  });

  test("latest transactions newest first; concentration; a holder's live wallet info", async () => {
    const f = rpc.fixture;
    const latest = await e.h.json("/api/transactions/latest?limit=5");
    expect(latest.status).toBe(200);
    expect(latest.body.rows.map((r: { signature: string }) => r.signature)).toEqual(
      [...f.transactions]
        .reverse()
        .slice(0, 5)
        .map((t) => t.signature),
    );
    expectRefusal(await e.h.json("/api/transactions/latest?limit=0"), 400, "invalid_query");

    const conc = await e.h.json("/transparency/wallet-concentration.json");
    expect(conc.body).toMatchObject({ status: "fresh", latest: { holders: expectedHolders(f).holders } });
    expect(conc.body.trend_points).toHaveLength(1);
    const top = conc.body.latest;
    expect(top.top1_pct).toBeLessThanOrEqual(top.top5_pct);
    expect(top.top5_pct).toBeLessThanOrEqual(top.top10_pct);

    const i = 7;
    const info = await signedJson(e.h, e.live, "GET", `/api/partner/wallet-info/${f.holderOwner(i)}`);
    expect(info.status).toBe(200);
    expect(info.body).toMatchObject({
      wallet: f.holderOwner(i),
      mint: f.mint,
      token_balance_raw: String(f.holderAmount(i)),
      token_balance_exact: decimalString(BigInt(f.holderAmount(i)), 6),
      native_balance_lamports: f.holderLamports(i).toString(),
    });
    expectRefusal(await signedJson(e.h, e.live, "GET", "/api/partner/wallet-info/not-base58!"), 400, "invalid_query");
  });
});
