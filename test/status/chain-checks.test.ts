import { afterEach, describe, expect, test } from "bun:test";
import { openTestApp, type TestApp } from "../support/app";
import { chainEnv, startSolanaRpc, type DevRpcServer } from "../support/solana-rpc";
import { policyFile } from "./support";

// The freshness and mint-authority checks over real chain snapshots, taken by the real chain jobs from the
// fixture Solana RPC (a real HTTP server on 127.0.0.1).

let h: TestApp | undefined;
let rpc: DevRpcServer | undefined;
const cleanups: Array<() => void> = [];
afterEach(async () => {
  await h?.close();
  h = undefined;
  await rpc?.stop();
  rpc = undefined;
  while (cleanups.length) cleanups.pop()!();
});

const FRESHNESS = [
  "freshness_holder_cache",
  "freshness_holder_growth",
  "freshness_public_stats_cache",
  "freshness_token_distribution",
  "freshness_mint_authorities",
  "freshness_snapshot_jobs_rollup",
  "freshness_transaction_sync",
];
const JOBS = ["token-snapshot", "holders-snapshot", "mint-authority-snapshot", "transaction-sync", "holder-growth"];

async function setup(env: Record<string, string> = {}, policy?: string) {
  rpc = startSolanaRpc({ holders: 50, transactions: 4, seed: "status" });
  if (policy) {
    const f = policyFile("policy.yaml", policy);
    cleanups.push(f.remove);
    env = { ...env, STATUS_POLICY_PATH: f.path };
  }
  h = await openTestApp({ env: chainEnv(rpc, [rpc.url], env) });
  return { h, f: rpc.fixture };
}

const checks = async (h: TestApp) => (await h.json("/api/public/system-status")).body.checks;

describe("freshness checks", () => {
  test("not configured: every proof ok with note not_configured, never bad", async () => {
    h = await openTestApp();
    const c = await checks(h);
    for (const name of FRESHNESS) expect(c[name]).toMatchObject({ status: "ok", freshness_status: "not_configured", note: "not_configured" });
    expect(c.mint_authority).toMatchObject({ status: "ok", configured: false, note: "not_configured" });
  });

  test("missing before any run → warn; fresh after the jobs → ok; stale past the limit → warn (bad if the policy says)", async () => {
    const { h } = await setup();
    let c = await checks(h);
    for (const name of FRESHNESS) expect(c[name]).toMatchObject({ status: "warn", freshness_status: "missing", note: null });
    expect(c.freshness_holder_cache.proof_url).toBe("/api/public/holder-cache-freshness.json");
    for (const job of JOBS) expect((await h.ctx.jobs.runNow(job)).ok).toBe(true);
    c = await checks(h);
    for (const name of FRESHNESS) expect(c[name]).toMatchObject({ status: "ok", freshness_status: "fresh", age_hours: 0 });
    // public-stats cache and transaction sync go stale after 1 h; exactly 1 h old is still fresh.
    h.clock.advance(3_600_000);
    expect((await checks(h)).freshness_public_stats_cache).toMatchObject({ status: "ok", freshness_status: "fresh", age_hours: 1 });
    h.clock.advance(60_000);
    c = await checks(h);
    expect(c.freshness_public_stats_cache).toMatchObject({ status: "warn", freshness_status: "stale", stale_after_hours: 1 });
    expect(c.freshness_public_stats_cache.summary).toContain("stale");
    expect(c.freshness_holder_growth.status).toBe("ok"); // 26 h limit
  });

  test("policy freshness.stale: bad makes a stale proof bad and the service bad", async () => {
    const { h } = await setup({}, "checks:\n  freshness:\n    stale: bad\n");
    for (const job of JOBS) await h.ctx.jobs.runNow(job);
    h.clock.advance(2 * 3_600_000);
    const r = await h.json("/api/public/system-status");
    expect(r.body.checks.freshness_transaction_sync.status).toBe("bad");
    expect(r.body.overall).toBe("bad");
  });
});

describe("mint_authority check", () => {
  test("no snapshot yet → ok with note no_snapshot", async () => {
    const { h } = await setup({ EXPECTED_MINT_AUTHORITY: "none" });
    expect((await checks(h)).mint_authority).toMatchObject({
      status: "ok",
      note: "no_snapshot",
      review_status: null,
      mismatch: null,
      expectation_configured: true,
    });
  });

  test("authorities as expected → ok; a retained authority against a renounced expectation → mismatch, bad", async () => {
    const { h, f } = await setup({ EXPECTED_MINT_AUTHORITY: "none", EXPECTED_FREEZE_AUTHORITY: "none" });
    await h.ctx.jobs.runNow("mint-authority-snapshot");
    expect((await checks(h)).mint_authority).toMatchObject({
      status: "ok",
      review_status: "renounced",
      expected_review_status: "renounced",
      expectation_configured: true,
      mismatch: false,
      mismatch_fields: [],
    });
    f.mintAuthority = f.authority(3);
    await h.ctx.jobs.runNow("mint-authority-snapshot");
    const r = await h.json("/api/public/system-status");
    expect(r.body.checks.mint_authority).toMatchObject({
      status: "bad",
      review_status: "mint_authority_retained",
      expected_review_status: "renounced",
      mismatch: true,
      mismatch_fields: ["mint_authority"],
    });
    expect(r.body.overall).toBe("bad");
  });

  test("no expectation configured → ok with note expectation_missing (warn if the policy says)", async () => {
    let { h } = await setup();
    await h.ctx.jobs.runNow("mint-authority-snapshot");
    expect((await checks(h)).mint_authority).toMatchObject({ status: "ok", note: "expectation_missing", expectation_configured: false, mismatch: false });
    await h.close();
    await rpc!.stop();
    ({ h } = await setup({}, "checks:\n  mint_authority:\n    expectation_missing: warn\n"));
    await h.ctx.jobs.runNow("mint-authority-snapshot");
    expect((await checks(h)).mint_authority.status).toBe("warn");
  });
});
