// Docs audit: docs/chain.md's routes table, wallet-info fields, proof fields and the "not configured" table against
// the real app (with the fixture RPC server on 127.0.0.1 where a chain is needed).
import { afterEach, describe, expect, test } from "bun:test";
import { openTestApp, type TestApp } from "../support/app";
import { createKey, signedJson } from "../support/partner";
import { chainEnv, deadRpcUrl, startSolanaRpc, type DevRpcServer } from "../support/solana-rpc";

let h: TestApp;
let rpc: DevRpcServer | undefined;
afterEach(async () => {
  await h?.close();
  h = undefined as unknown as TestApp;
  await rpc?.stop();
  rpc = undefined;
});
const PROOFS = [
  "holder-cache-freshness",
  "holder-growth-freshness",
  "public-stats-cache-freshness",
  "token-distribution-freshness",
  "transaction-sync-freshness",
  "token-mint-authorities",
  "token-snapshot-jobs-rollup",
];

describe("docs/chain.md", () => {
  // docs/chain.md:245-251 — no TOKEN_MINT: public 200 not_configured with numbers null; partner 503 not_configured; bad inputs 400
  test("not configured", async () => {
    h = await openTestApp();
    const k = await createKey(h);
    for (const p of PROOFS) {
      const r = await h.json(`/api/public/${p}.json`);
      expect([p, r.status, r.body.status]).toEqual([p, 200, "not_configured"]);
    }
    const ts = await signedJson(h, k, "GET", "/api/partner/token-status");
    expect([ts.status, ts.body.error, ts.body.details?.reason]).toEqual([503, "service_unavailable", "not_configured"]);
    const wi = await signedJson(h, k, "GET", "/api/partner/wallet-info/So11111111111111111111111111111111111111112");
    expect([wi.status, wi.body.error, wi.body.details?.reason]).toEqual([503, "service_unavailable", "not_configured"]);
    const bad = await signedJson(h, k, "GET", "/api/partner/wallet-info/not-an-address");
    expect([bad.status, bad.body.error]).toEqual([400, "invalid_query"]);
    const lim = await h.json("/api/transactions/latest?limit=201");
    expect([lim.status, lim.body.error]).toEqual([400, "invalid_query"]);
    const tl = await h.json("/api/transactions/latest");
    expect(tl.body.query?.limit).toBe(50);
    expect(typeof tl.body.pagination?.has_more).toBe("boolean");
  });

  // docs/chain.md:182-189 — the rollup CSV header on a service without a token
  test("rollup CSV header", async () => {
    h = await openTestApp();
    const csv = await (await h.request("/api/public/token-snapshot-jobs-rollup.csv")).text();
    expect(csv.split("\r\n")[0]).toBe(
      "generated_at_utc,status,mint,job,freshness_status,snapshot_id,snapshot_at_utc,job_run_id,age_hours,stale_after_hours,runs_24h,failures_24h,consecutive_failures,last_success_at,trust_context.data_source,trust_context.chain,trust_context.mint,trust_context.rpc_host,trust_context.snapshot_id,trust_context.job,trust_context.job_run_id,trust_context.method,trust_context.table",
    );
    const rows = csv.trim().split("\r\n").slice(1);
    expect(rows[0]).toContain(",not_configured,,token-snapshot,not_configured,");
  });

  // docs/chain.md:245-249 — configured, job never ran: public missing; token-status 503 no_snapshot; wallet-info fields
  test("configured: missing before the first run, then fresh; wallet-info fields", async () => {
    rpc = startSolanaRpc({ holders: 50, transactions: 5, seed: "docs" });
    h = await openTestApp({ env: chainEnv(rpc) });
    const k = await createKey(h);
    const miss = await h.json("/api/public/holder-cache-freshness.json");
    expect([miss.status, miss.body.status]).toEqual([200, "missing"]);
    const ts = await signedJson(h, k, "GET", "/api/partner/token-status");
    expect([ts.status, ts.body.details?.reason]).toEqual([503, "no_snapshot"]);
    const owner = rpc.fixture.treasury[0]!.owner;
    const wi = await signedJson(h, k, "GET", `/api/partner/wallet-info/${owner}`);
    expect(wi.status).toBe(200);
    for (const f of [
      "wallet",
      "mint",
      "decimals",
      "native_balance",
      "native_balance_exact",
      "native_balance_lamports",
      "token_balance",
      "token_balance_exact",
      "token_balance_raw",
      "token_accounts",
      "lp_configured",
      "lp_mint",
      "lp_amount",
      "lp_amount_exact",
      "lp_amount_raw",
      "rpc_host",
      "fetched_at_utc",
    ])
      expect(Object.keys(wi.body)).toContain(f);
    expect(wi.body).toMatchObject({ lp_configured: false, lp_mint: "", lp_amount: 0, lp_amount_exact: "0", lp_amount_raw: "0" });
    expect(wi.body.token_balance).toBe(Number(wi.body.token_balance_exact));
    expect(wi.body.rpc_host).toBe(new URL(rpc.url).host);
    await h.ctx.jobs.runNow("holders-snapshot");
    const p = await h.json("/api/public/holder-cache-freshness.json");
    expect(p.body).toMatchObject({ proof: "holder_cache_freshness", status: "fresh", freshness_status: "fresh", stale_after_hours: 3, reason: null });
    expect(p.body.last_run).toMatchObject({ job: "holders-snapshot", ok: true, error: null });
    expect(p.body.trust_context).toMatchObject({ data_source: "solana_rpc", chain: "solana", job: "holders-snapshot", table: "chain_holder_snapshots" });
    const stale: Record<string, number> = {};
    for (const q of PROOFS.slice(0, 6)) stale[q] = (await h.json(`/api/public/${q}.json`)).body.stale_after_hours;
    expect(stale).toEqual({
      "holder-cache-freshness": 3,
      "holder-growth-freshness": 26,
      "public-stats-cache-freshness": 1,
      "token-distribution-freshness": 3,
      "transaction-sync-freshness": 1,
      "token-mint-authorities": 13,
    });
    h.clock.advanceSeconds(3 * 3600 + 60);
    const old = await h.json("/api/public/holder-cache-freshness.json");
    expect(old.body.status).toBe("stale");
  });

  // docs/chain.md:248 — RPC unreachable: wallet-info 503 rpc_unavailable
  test("RPC unreachable: wallet-info 503 rpc_unavailable", async () => {
    rpc = startSolanaRpc({ holders: 5, transactions: 1, seed: "dead" });
    h = await openTestApp({ env: { ...chainEnv(rpc, [deadRpcUrl()]), SOLANA_RPC_RETRIES: "0" } });
    const k = await createKey(h);
    const wi = await signedJson(h, k, "GET", `/api/partner/wallet-info/${rpc.fixture.treasury[0]!.owner}`);
    expect([wi.status, wi.body.error, wi.body.details?.reason]).toEqual([503, "service_unavailable", "rpc_unavailable"]);
  });
});
