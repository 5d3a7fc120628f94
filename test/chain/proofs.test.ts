import { afterEach, describe, expect, test } from "bun:test";
import { parse } from "csv-parse/sync";
import { openTestApp, type TestApp } from "../support/app";
import { chainEnv, expectedHolders, startSolanaRpc, type DevRpcServer } from "../support/solana-rpc";

// The seven freshness proofs and wallet concentration: missing before any run, fresh after, stale when the
// clock passes stale_after_hours (jobs failing meanwhile), the failure named in `reason`, and each .csv parsing
// back (csv-parse) to the same values as its .json.

let h: TestApp | undefined;
let rpc: DevRpcServer | undefined;
afterEach(async () => {
  await h?.close();
  h = undefined;
  await rpc?.stop();
  rpc = undefined;
});

const HOUR = 3600;

const PROOFS = [
  { path: "/api/public/holder-cache-freshness", job: "holders-snapshot", staleAfter: 3, table: "chain_holder_snapshots" },
  { path: "/api/public/holder-growth-freshness", job: "holder-growth", staleAfter: 26, table: "chain_holder_growth" },
  { path: "/api/public/public-stats-cache-freshness", job: "token-snapshot", staleAfter: 1, table: "chain_token_snapshots" },
  { path: "/api/public/token-distribution-freshness", job: "holders-snapshot", staleAfter: 3, table: "chain_holder_snapshots" },
  { path: "/api/public/token-mint-authorities", job: "mint-authority-snapshot", staleAfter: 13, table: "chain_mint_authority_snapshots" },
  { path: "/api/public/transaction-sync-freshness", job: "transaction-sync", staleAfter: 1, table: "chain_sync_runs" },
] as const;

const JOBS = ["token-snapshot", "holders-snapshot", "mint-authority-snapshot", "transaction-sync", "holder-growth"];

async function setup(env: Record<string, string> = {}) {
  rpc = startSolanaRpc({ holders: 400, transactions: 12, seed: "proofs" });
  h = await openTestApp({ env: chainEnv(rpc, [rpc.url], env) });
  return { h, rpc, f: rpc.fixture };
}

async function runAll(h: TestApp) {
  const ids: Record<string, number> = {};
  for (const job of JOBS) {
    const r = await h.ctx.jobs.runNow(job);
    expect(r.ok).toBe(true);
    ids[job] = r.run_id;
  }
  return ids;
}

/** The test's own flattening: dotted keys, null → "", booleans and numbers as text, arrays as JSON. */
function flat(value: Record<string, unknown>, prefix = "", out: Record<string, string> = {}): Record<string, string> {
  for (const [k, v] of Object.entries(value)) {
    const key = prefix ? `${prefix}.${k}` : k;
    if (v === null || v === undefined) out[key] = "";
    else if (Array.isArray(v)) out[key] = JSON.stringify(v);
    else if (typeof v === "object") flat(v as Record<string, unknown>, key, out);
    else out[key] = String(v);
  }
  return out;
}

async function csvRows(h: TestApp, path: string): Promise<Array<Record<string, string>>> {
  const res = await h.request(path);
  expect(res.status).toBe(200);
  expect(res.headers.get("content-type")).toBe("text/csv; charset=utf-8");
  const text = await res.text();
  expect(text).toContain("\r\n"); // RFC 4180 line breaks
  return parse(text, { columns: true, skip_empty_lines: true });
}

async function expectCsvMatchesJson(h: TestApp, path: string) {
  const { success: _s, ...json } = (await h.json(`${path}.json`)).body;
  const rows = await csvRows(h, `${path}.csv`);
  const expected = flat(json);
  // A null object (last_run before any run) is its leaf columns, empty, so the header keeps one shape.
  for (const [k, v] of Object.entries(expected)) {
    const leaves = Object.keys(rows[0] ?? {}).filter((c) => c.startsWith(`${k}.`));
    if (v !== "" || leaves.length === 0) continue;
    delete expected[k];
    for (const c of leaves) expected[c] = "";
  }
  expect(rows).toEqual([expected]);
}

async function csvHeader(h: TestApp, path: string): Promise<string> {
  return (await (await h.request(path)).text()).split("\r\n")[0]!;
}

describe("freshness proofs", () => {
  test("missing before any run, each naming where its data will come from", async () => {
    const { h, f } = await setup();
    for (const p of PROOFS) {
      const r = await h.json(`${p.path}.json`);
      expect(r.status).toBe(200);
      expect(r.body).toMatchObject({
        success: true,
        status: "missing",
        freshness_status: "missing",
        age_hours: null,
        stale_after_hours: p.staleAfter,
        snapshot_at_utc: null,
      });
      expect(r.body.reason).toContain(`no ${p.job} snapshot has been taken yet`);
      expect(r.body.trust_context).toMatchObject({
        data_source: "solana_rpc",
        mint: f.mint,
        rpc_host: new URL(rpc!.url).host,
        snapshot_id: null,
        job: p.job,
        table: p.table,
      });
      await expectCsvMatchesJson(h, p.path);
    }
  });

  test("fresh after the jobs ran: snapshot id, job run id, host and method in the trust context", async () => {
    const { h } = await setup();
    const headersBefore = await Promise.all(PROOFS.map((p) => csvHeader(h, `${p.path}.csv`)));
    const runs = await runAll(h);
    // The same columns before and after the first run (last_run was one column while null).
    expect(await Promise.all(PROOFS.map((p) => csvHeader(h, `${p.path}.csv`)))).toEqual(headersBefore);
    expect(headersBefore.every((header) => header.includes("last_run.started_at"))).toBe(true);
    for (const p of PROOFS) {
      const r = await h.json(`${p.path}.json`);
      expect(r.body).toMatchObject({
        status: "fresh",
        age_hours: 0,
        snapshot_at_utc: h.clock.now().toISOString(),
        reason: null,
        last_run: { job: p.job, ok: true, error: null },
      });
      expect(r.body.trust_context).toMatchObject({ snapshot_id: 1, job_run_id: runs[p.job] });
      expect(r.body.trust_context.method.length).toBeGreaterThan(10);
      expect(r.body.trust_context.rpc_host).toBe(new URL(rpc!.url).host);
      await expectCsvMatchesJson(h, p.path);
    }
  });

  test("stale once older than stale_after_hours while the jobs fail, with the failure named", async () => {
    const { h } = await setup();
    await runAll(h);
    rpc!.fault({ kind: "500" });
    h.clock.advanceSeconds(2 * HOUR);
    for (const job of JOBS) await h.ctx.jobs.runNow(job);
    const byPath = async (path: string) => (await h.json(`${path}.json`)).body;
    // 2 h: the 1 h proofs are stale, the others still fresh but say their last run failed.
    for (const p of PROOFS) {
      const body = await byPath(p.path);
      if (p.job === "holder-growth") {
        expect(body.status).toBe("fresh"); // it reads the (old) holders snapshot and so still succeeds
        continue;
      }
      expect(body.status).toBe(p.staleAfter < 2 ? "stale" : "fresh");
      expect(body.age_hours).toBe(2);
      expect(body.last_run).toMatchObject({ ok: false });
      expect(body.reason).toContain(`the last ${p.job} run`);
      expect(body.reason).toContain("failed");
    }
    h.clock.advanceSeconds(30 * HOUR);
    for (const p of PROOFS) {
      const body = await byPath(p.path);
      expect(body.status).toBe("stale");
      expect(body.reason).toContain(`over the ${p.staleAfter} h limit`);
      await expectCsvMatchesJson(h, p.path);
    }
  });

  test("per-proof limits come from configuration", async () => {
    const { h } = await setup({ CHAIN_STALE_HOLDER_CACHE_HOURS: "1", CHAIN_STALE_MINT_AUTHORITIES_HOURS: "48" });
    await runAll(h);
    h.clock.advanceSeconds(1.5 * HOUR);
    expect((await h.json("/api/public/holder-cache-freshness.json")).body).toMatchObject({ status: "stale", stale_after_hours: 1 });
    h.clock.advanceSeconds(40 * HOUR);
    expect((await h.json("/api/public/token-mint-authorities.json")).body).toMatchObject({ status: "fresh", stale_after_hours: 48 });
  });

  test("holder cache and distribution carry the scan's exact numbers; mint authorities the review", async () => {
    const { h, f } = await setup({ EXPECTED_MINT_AUTHORITY: "none" });
    f.freezeAuthority = f.authority(9);
    await runAll(h);
    const e = expectedHolders(f);
    const pct = (n: bigint) => Math.round(Number((n * 2_000_000n + e.total) / (2n * e.total))) / 10_000;
    expect((await h.json("/api/public/holder-cache-freshness.json")).body).toMatchObject({
      holders: e.holders,
      accounts_scanned: e.accounts,
      holders_source: "onchain_scan",
    });
    expect((await h.json("/api/public/token-distribution-freshness.json")).body).toMatchObject({
      holders: e.holders,
      top1_pct: pct(e.top1),
      top5_pct: pct(e.top5),
      top10_pct: pct(e.top10),
      total_raw: e.total.toString(),
    });
    expect((await h.json("/api/public/token-mint-authorities.json")).body).toMatchObject({
      mint_authority: null,
      freeze_authority: f.authority(9),
      mint_authority_renounced: true,
      freeze_authority_renounced: false,
      expected_mint_authority: "none",
      expected_freeze_authority: null,
      expectation_configured: true,
      review_status: "freeze_authority_retained",
      expected_review_status: "freeze_authority_retained",
      mismatch: false,
      mismatch_fields: [],
    });
    // A snapshot reviewed under another expectation (as if the configuration changed since it was taken): the proof
    // reviews the authorities it saw against the expectation in force now, every field from that one review.
    await h.ctx.store.run(
      "UPDATE chain_mint_authority_snapshots SET expected_mint_authority = ?, mismatch = 1, mismatch_fields = ?, expected_review_status = ?",
      ["SomeOtherAuthority1111111111111111111111111", '["mint_authority"]', "both_retained"],
    );
    expect((await h.json("/api/public/token-mint-authorities.json")).body).toMatchObject({
      expected_mint_authority: "none",
      expectation_configured: true,
      expected_review_status: "freeze_authority_retained",
      mismatch: false,
      mismatch_fields: [],
    });
    const sync = (await h.json("/api/public/transaction-sync-freshness.json")).body;
    expect(sync).toMatchObject({ stored: 12, transactions_stored: 12, gap_detected: false, newest_signature: f.transactions.at(-1)!.signature });
    // A later run that finds nothing new: the newest stored transaction is still named (it once went null).
    expect((await h.ctx.jobs.runNow("transaction-sync")).ok).toBe(true);
    const again = (await h.json("/api/public/transaction-sync-freshness.json")).body;
    expect(again).toMatchObject({ new_signatures: 0, transactions_stored: 12, newest_signature: sync.newest_signature, newest_slot: sync.newest_slot });
    expect(sync.cursors.map((c: { address: string }) => c.address).sort()).toEqual([f.mint, ...f.wallets().map((w) => w.owner)].sort());
  });
});

describe("token-snapshot-jobs-rollup", () => {
  test("one entry per chain job; the worst freshness sets the status; CSV has a row per job", async () => {
    const { h } = await setup();
    const missing = (await h.json("/api/public/token-snapshot-jobs-rollup.json")).body;
    expect(missing).toMatchObject({ status: "missing", window_hours: 24 });
    expect(missing.jobs.map((j: { job: string }) => j.job)).toEqual(JOBS);
    await runAll(h);
    rpc!.fault({ kind: "500" });
    await h.ctx.jobs.runNow("transaction-sync");
    await h.ctx.jobs.runNow("transaction-sync");
    const body = (await h.json("/api/public/token-snapshot-jobs-rollup.json")).body;
    expect(body.status).toBe("fresh");
    // The headline's age and limit are one job's (subject_job, the nearest its own limit), never two jobs' mixed.
    const sameJob = (b: any) => {
      const subject = b.jobs.find((j: { job: string }) => j.job === b.subject_job);
      expect([b.age_hours, b.stale_after_hours]).toEqual([subject.age_hours, subject.stale_after_hours]);
      for (const j of b.jobs) if (j.age_hours !== null) expect(j.age_hours / j.stale_after_hours).toBeLessThanOrEqual(b.age_hours / b.stale_after_hours);
    };
    sameJob(body);
    expect(body.jobs.find((j: { job: string }) => j.job === "transaction-sync")).toMatchObject({
      runs_24h: 3,
      failures_24h: 2,
      consecutive_failures: 2,
      freshness_status: "fresh",
    });
    h.clock.advanceSeconds(2 * HOUR);
    const later = (await h.json("/api/public/token-snapshot-jobs-rollup.json")).body;
    expect(later).toMatchObject({ status: "stale", age_hours: 2 });
    sameJob(later);
    expect(later.age_hours).toBeGreaterThan(later.stale_after_hours);
    const rows = await csvRows(h, "/api/public/token-snapshot-jobs-rollup.csv");
    expect(rows).toEqual(
      later.jobs.map((j: Record<string, unknown>) => ({
        generated_at_utc: later.generated_at_utc,
        status: "stale",
        mint: later.trust_context.mint,
        ...flat(j),
        // Every proof carries its trust context, the list CSVs on every row (after the items' own columns).
        ...flat(later.trust_context, "trust_context"),
      })),
    );
    // A day on, jobs with longer limits have aged too: the headline is still one job's age with that job's limit.
    h.clock.advanceSeconds(20 * HOUR);
    sameJob((await h.json("/api/public/token-snapshot-jobs-rollup.json")).body);
  });
});

describe("wallet concentration", () => {
  test("latest top-1/5/10 and a daily trend, as JSON and CSV", async () => {
    const { h, f } = await setup();
    const empty = (await h.json("/transparency/wallet-concentration.json")).body;
    expect(empty).toMatchObject({ status: "missing", latest: null, trend_points: [] });
    expect(await csvRows(h, "/transparency/wallet-concentration.csv")).toEqual([]);

    await h.ctx.jobs.runNow("holders-snapshot");
    h.clock.advanceSeconds(HOUR);
    await h.ctx.jobs.runNow("holders-snapshot"); // same UTC day: replaces the day's point
    h.clock.advanceSeconds(24 * HOUR);
    await h.ctx.jobs.runNow("holders-snapshot");
    const e = expectedHolders(f);
    const pct = (n: bigint) => Math.round(Number((n * 2_000_000n + e.total) / (2n * e.total))) / 10_000;
    const r = await h.json("/transparency/wallet-concentration.json");
    expect(r.headers.get("cache-control")).toBe("public, max-age=60");
    expect(r.body).toMatchObject({
      status: "fresh",
      latest: { snapshot_id: 3, holders: e.holders, top1_pct: pct(e.top1), top5_pct: pct(e.top5), top10_pct: pct(e.top10) },
    });
    expect(r.body.trend_points.map((p: { snapshot_id: number }) => p.snapshot_id)).toEqual([2, 3]);
    const rows = await csvRows(h, "/transparency/wallet-concentration.csv");
    expect(rows).toEqual(
      r.body.trend_points.map((p: Record<string, unknown>) => ({
        generated_at_utc: r.body.generated_at_utc,
        status: "fresh",
        mint: f.mint,
        ...flat(p),
        ...flat(r.body.trust_context, "trust_context"),
      })),
    );
  });
});

test("wallet-concentration.json has validators that change with the data, not with the request time", async () => {
  const { h } = await setup();
  await h.ctx.jobs.runNow("holders-snapshot");
  const first = await h.request("/transparency/wallet-concentration.json");
  const etag = first.headers.get("etag")!;
  const lastModified = first.headers.get("last-modified")!;
  const body = (await first.json()) as { generated_at_utc: string };
  expect([first.status, first.headers.get("cache-control"), etag]).toEqual([200, "public, max-age=60", expect.stringMatching(/^"[A-Za-z0-9_-]{43}"$/)]);
  expect(lastModified).toBe(new Date(body.generated_at_utc).toUTCString());
  // Ten seconds on, the same data and the same age_hours (it moves in 0.01 h = 36 s steps): the same bytes, as
  // generated_at_utc is the data's time, not the request's; so 304 both ways.
  h.clock.advanceSeconds(10);
  const again = await h.request("/transparency/wallet-concentration.json");
  expect([again.headers.get("etag"), ((await again.json()) as { generated_at_utc: string }).generated_at_utc]).toEqual([etag, body.generated_at_utc]);
  const byTag = await h.request("/transparency/wallet-concentration.json", { headers: { "if-none-match": etag } });
  expect([byTag.status, byTag.headers.get("etag"), byTag.headers.get("cache-control"), await byTag.text()]).toEqual([304, etag, "public, max-age=60", ""]);
  expect((await h.request("/transparency/wallet-concentration.json", { headers: { "if-modified-since": lastModified } })).status).toBe(304);
  expect((await h.request("/transparency/wallet-concentration.json", { headers: { "if-none-match": '"other"' } })).status).toBe(200);
  // include_meta answers carry a request id and the core's meta block.
  expect((await h.json("/transparency/wallet-concentration.json?include_meta=1")).body.meta.request_id).toMatch(/^req_/);
  // A new snapshot is new data: a new ETag and a later Last-Modified.
  h.clock.advanceSeconds(HOUR);
  await h.ctx.jobs.runNow("holders-snapshot");
  const changed = await h.request("/transparency/wallet-concentration.json", { headers: { "if-none-match": etag } });
  expect(changed.status).toBe(200);
  expect(changed.headers.get("etag")).not.toBe(etag);
  expect(Date.parse(changed.headers.get("last-modified")!)).toBeGreaterThan(Date.parse(lastModified));
});

test("wallet-concentration.csv carries its own validators: 304 on its ETag or Last-Modified, 200 with new bytes once the data changes", async () => {
  const { h } = await setup();
  await h.ctx.jobs.runNow("holders-snapshot");
  const path = "/transparency/wallet-concentration.csv";
  const first = await h.request(path);
  const etag = first.headers.get("etag")!;
  const lastModified = first.headers.get("last-modified")!;
  expect([first.status, first.headers.get("content-type"), first.headers.get("cache-control"), etag, first.headers.get("content-disposition")]).toEqual([
    200,
    "text/csv; charset=utf-8",
    "public, max-age=60",
    expect.stringMatching(/^"[A-Za-z0-9_-]{43}"$/),
    'inline; filename="wallet-concentration.csv"',
  ]);
  const text = await first.text();
  // The JSON twin is dated by the same content, so both say the same Last-Modified.
  expect((await h.request("/transparency/wallet-concentration.json")).headers.get("last-modified")).toBe(lastModified);
  h.clock.advanceSeconds(10);
  const byTag = await h.request(path, { headers: { "if-none-match": etag } });
  expect([byTag.status, byTag.headers.get("etag"), await byTag.text()]).toEqual([304, etag, ""]);
  expect((await h.request(path, { headers: { "if-modified-since": lastModified } })).status).toBe(304);
  const again = await h.request(path);
  expect([again.headers.get("etag"), await again.text()]).toEqual([etag, text]);
  h.clock.advanceSeconds(HOUR);
  await h.ctx.jobs.runNow("holders-snapshot");
  const changed = await h.request(path, { headers: { "if-none-match": etag } });
  expect([changed.status, changed.headers.get("etag") === etag]).toEqual([200, false]);
});

test("public chain answers may be cached for a minute; partner ones are not marked cacheable", async () => {
  const { h } = await setup();
  for (const path of ["/api/public/holder-cache-freshness.json", "/api/public/holder-cache-freshness.csv", "/api/public-stats", "/api/transactions/latest"]) {
    expect((await h.request(path)).headers.get("cache-control")).toBe("public, max-age=60");
  }
  expect((await h.request("/api/partner/token-status")).headers.get("cache-control")).toBeNull();
});
