// Issue 6 (Solana chain data), re-verified over HTTP against the suite's target (test/support/target.ts): the
// in-process app by default, `bun src/main.ts serve` with HERALD_TEST_TARGET=source. test/chain holds the claims in
// process and test/e2e/chain.test.ts a configured pass served; these are the two no served pass covered: a Herald
// with no mint starts and says not_configured everywhere, and an RPC URL's credentials appear in no chain answer.
import { afterEach, expect, test } from "bun:test";
import { createKey, signedJson } from "../support/partner";
import { chainEnv, deadRpcUrl, type DevRpcServer, startSolanaRpc } from "../support/solana-rpc";
import { startTarget, type TargetApp } from "../support/target";

let h: TargetApp | undefined;
let rpc: DevRpcServer | undefined;
afterEach(async () => {
  await h?.stop();
  h = undefined;
  await rpc?.stop();
  rpc = undefined;
});

const PROOFS = [
  ...["holder-cache", "holder-growth", "public-stats-cache", "token-distribution", "transaction-sync"].map((p) => `/api/public/${p}-freshness`),
  "/api/public/token-mint-authorities",
  "/api/public/token-snapshot-jobs-rollup",
  "/transparency/wallet-concentration",
];
const NO_LIMITS = { RATE_LIMIT_PUBLIC_API_PER_MIN: "0" };
const WALLET = "9xQeWvG816bUx9EPjHmaT23yvVM2ZWbrrpZb9PusVFin";

test("issue 6: with no TOKEN_MINT the service starts and every chain-backed answer says not_configured (not a 500, not zeros)", async () => {
  h = await startTarget({ env: NO_LIMITS });
  const key = await createKey(h, { scopes: ["read"] });
  for (const p of PROOFS) {
    const json = await h.json(`${p}.json`);
    expect([p, json.status, json.body.status, json.body.age_hours]).toEqual([p, 200, "not_configured", null]);
    expect(json.body.trust_context).toBeDefined();
    const csv = await h.request(`${p}.csv`);
    expect([p, csv.status, csv.headers.get("content-type")]).toEqual([p, 200, "text/csv; charset=utf-8"]);
    expect(await csv.text()).toContain("\r\n");
  }
  const stats = await h.json("/api/public-stats");
  expect(stats.body).toMatchObject({ status: "not_configured", stats: { total_supply: null, holders: null }, cache: { enabled: false } });
  const latest = await h.json("/api/transactions/latest");
  expect(latest.body).toMatchObject({ status: "not_configured", rows: [] });
  for (const p of ["/api/partner/token-status", `/api/partner/wallet-info/${WALLET}`]) {
    const r = await signedJson(h, key, "GET", p);
    expect([p, r.status, r.body.details?.reason]).toEqual([p, 503, "not_configured"]);
  }
});

test("issue 6: an RPC URL's credentials, path and query appear in no chain answer; token-status and wallet-info name only the host", async () => {
  rpc = startSolanaRpc({ holders: 200, transactions: 12, seed: "issue-6" });
  const dead = deadRpcUrl().replace("http://", "http://user:Qz9pw@");
  const urls = [`${dead}/Qz9path/?api-key=Qz9key1`, `${rpc.url.replace("http://", "http://user:Qz9pw@")}/Qz9path?api-key=Qz9key2`];
  h = await startTarget({ env: { ...chainEnv(rpc, urls), ...NO_LIMITS } });
  for (const job of ["token-snapshot", "holders-snapshot", "mint-authority-snapshot", "transaction-sync", "holder-growth"]) {
    expect((await h.ctx.jobs.runNow(job)).ok).toBe(true);
  }
  const key = await createKey(h, { scopes: ["read"] });
  const host = new URL(rpc.url).host;
  const ts = await signedJson(h, key, "GET", "/api/partner/token-status");
  // rpc_url is the scheme and host of the primary (first) URL, here the one that refuses connections.
  expect([ts.status, ts.body.rpc_url]).toEqual([200, `http://${new URL(dead).host}`]);
  const wi = await signedJson(h, key, "GET", `/api/partner/wallet-info/${rpc.fixture.treasury[0]!.owner}`);
  expect([wi.status, wi.body.rpc_host]).toEqual([200, host]);
  const texts = [JSON.stringify(ts.body), JSON.stringify(wi.body)];
  for (const p of ["/api/public-stats", "/api/transactions/latest", ...PROOFS.flatMap((p) => [`${p}.json`, `${p}.csv`])]) {
    const r = await h.request(p);
    expect([p, r.status]).toEqual([p, 200]);
    texts.push(await r.text());
  }
  for (const t of texts) expect(t).not.toContain("Qz9");
  expect(texts.join("")).toContain(`"rpc_host":"${host}"`);
});
