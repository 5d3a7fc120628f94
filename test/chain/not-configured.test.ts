import { afterEach, describe, expect, test } from "bun:test";
import { parse } from "csv-parse/sync";
import { loadConfig, type ConfigError } from "../../src/config";
import { openTestApp, type TestApp } from "../support/app";
import { createKey, signedJson } from "../support/partner";

// Without TOKEN_MINT the service starts and every chain-backed answer says not_configured: public answers are
// 200 with status not_configured and null numbers (never zeros); partner answers are 503 service_unavailable.

let h: TestApp | undefined;
afterEach(async () => {
  await h?.close();
  h = undefined;
});

const PUBLIC_JSON = [
  "/api/public/holder-cache-freshness.json",
  "/api/public/holder-growth-freshness.json",
  "/api/public/public-stats-cache-freshness.json",
  "/api/public/token-distribution-freshness.json",
  "/api/public/token-mint-authorities.json",
  "/api/public/token-snapshot-jobs-rollup.json",
  "/api/public/transaction-sync-freshness.json",
  "/transparency/wallet-concentration.json",
];

const ADDRESS = "9EVthMCQwN6pWeBjaniiQwLNYAgApKUiyn63mWGVUUZm";

describe("no TOKEN_MINT", () => {
  test("every proof is 200 with status not_configured, a reason, and no numbers", async () => {
    h = await openTestApp();
    for (const path of PUBLIC_JSON) {
      const r = await h.json(path);
      expect(r.status).toBe(200);
      expect(r.body).toMatchObject({ success: true, status: "not_configured", freshness_status: "not_configured", age_hours: null });
      expect(r.body.reason).toContain("TOKEN_MINT is not set");
      for (const k of ["holders", "total_supply", "top1_pct", "stored", "mint_authority", "latest"]) {
        if (k in r.body) expect(r.body[k]).toBeNull();
      }
      const csv = await h.request(path.replace(/\.json$/, ".csv"));
      expect(csv.status).toBe(200);
      const rows = parse(await csv.text(), { columns: true }) as Array<Record<string, string>>;
      for (const row of rows) expect(row.status).toBe("not_configured");
    }
  });

  test("public stats: status not_configured, cache disabled, every stat null and each source unavailable", async () => {
    h = await openTestApp();
    const r = await h.json("/api/public-stats");
    expect(r.status).toBe(200);
    expect(r.body.status).toBe("not_configured");
    const { holders_source, volume_24h_source, ...stats } = r.body.stats;
    expect(Object.values(stats).every((v) => v === null)).toBe(true);
    // The sources are named as token-status names them: "unavailable", not null.
    expect([holders_source, volume_24h_source]).toEqual(["unavailable", "unavailable"]);
    expect((await h.json("/api/public/holder-cache-freshness.json")).body).toMatchObject({ holders: null, holders_source: "unavailable" });
    expect(r.body.cache).toMatchObject({ available: false, enabled: false, cached_at_utc: null });
    expect(r.body.cache.reason).toContain("TOKEN_MINT is not set");
  });

  test("latest transactions: not_configured and no rows", async () => {
    h = await openTestApp();
    const r = await h.json("/api/transactions/latest?limit=5");
    expect(r.body).toMatchObject({ success: true, status: "not_configured", count: 0, rows: [], query: { limit: 5 } });
  });

  test("partner token-status and wallet-info: 503 service_unavailable with reason not_configured; a bad address is still 400", async () => {
    h = await openTestApp();
    const key = await createKey(h, { scopes: ["read"] });
    for (const path of ["/api/partner/token-status", `/api/partner/wallet-info/${ADDRESS}`]) {
      const r = await signedJson(h, key, "GET", path);
      expect(r.status).toBe(503);
      expect(r.body).toMatchObject({ success: false, error: "service_unavailable", details: { reason: "not_configured" } });
      expect(r.body.message).toContain("TOKEN_MINT");
    }
    expect((await signedJson(h, key, "GET", "/api/partner/wallet-info/nope")).status).toBe(400);
  });

  test("the chain jobs are listed and do nothing (no snapshot rows; scheduled ticks are quiet)", async () => {
    h = await openTestApp();
    const names = (await h.ctx.jobs.list()).map((j) => j.name);
    for (const job of ["token-snapshot", "holders-snapshot", "mint-authority-snapshot", "transaction-sync", "holder-growth", "chain-rpc-prune"])
      expect(names).toContain(job);
    expect((await h.ctx.jobs.list()).find((j) => j.name === "token-snapshot")!.description).toContain("TOKEN_MINT is not set");
    const r = await h.ctx.jobs.runNow("holders-snapshot");
    expect(r.ok).toBe(true);
    expect((await h.ctx.store.get<{ n: number }>("SELECT count(*) AS n FROM chain_holder_snapshots"))!.n).toBe(0);
    expect(h.ctx.chain.configured).toBe(false);
  });
});

describe("chain configuration checks", () => {
  const base = { NODE_ENV: "test", HERALD_DB_PATH: ":memory:" };
  const problems = (env: Record<string, string>) => {
    try {
      loadConfig({ ...base, ...env });
      return [];
    } catch (err) {
      return (err as ConfigError).problems;
    }
  };

  test("a mint needs an RPC URL; bad addresses and URLs are named; URLs are never echoed", () => {
    expect(problems({ TOKEN_MINT: ADDRESS })[0]).toContain("SOLANA_RPC_URLS is empty");
    expect(problems({ TOKEN_MINT: "not-base58-0OIl" })[0]).toContain("TOKEN_MINT");
    expect(problems({ TREASURY_WALLETS: `${ADDRESS},bad` })[0]).toContain('"bad"');
    expect(problems({ TREASURY_WALLETS: ADDRESS, RESERVE_WALLETS: ADDRESS })[0]).toContain("both TREASURY_WALLETS and RESERVE_WALLETS");
    const p = problems({ SOLANA_RPC_URLS: "ftp://secret-key@host" });
    expect(p[0]).toContain("SOLANA_RPC_URLS entry 1");
    expect(p.join(" ")).not.toContain("secret-key");
    expect(problems({ EXPECTED_MINT_AUTHORITY: "none", EXPECTED_FREEZE_AUTHORITY: ADDRESS, TOKEN_MINT: "", LP_MINT: "" })).toEqual([]);
    expect(problems({ CHAIN_HOLDERS_SNAPSHOT_CRON: "every hour" })[0]).toContain("CHAIN_HOLDERS_SNAPSHOT_CRON");
  });
});
