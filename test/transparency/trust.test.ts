import { bucketOf, bucketValueUs } from "../../src/http/request-log/histogram";
import { afterEach, describe, expect, test } from "bun:test";
import { openTestApp, type TestApp } from "../support/app";
import { FakeClock } from "../support/clock";
import { chainEnv, startSolanaRpc, type DevRpcServer } from "../support/solana-rpc";
import { insertRequest, insertSnapshot, iso } from "../status/support";

// /trust.json and the trust dashboard: every evidence pointer resolves, what is claimed is read from the
// live system (the status checks, SQLite's own pragmas), and what cannot be observed is said so.

let h: TestApp | undefined;
let rpc: DevRpcServer | undefined;
afterEach(async () => {
  await h?.close();
  h = undefined;
  await rpc?.stop();
  rpc = undefined;
});

/** A latency as the histograms answer it: the middle of its bucket, in ms (src/http/request-log/histogram.ts). */
const bucketed = (us: number) => Math.round(bucketValueUs(bucketOf(us))) / 1000;
const T0 = "2026-01-01T00:00:00.000Z";

describe("GET /trust.json", () => {
  test("controls with evidence, the seven proofs, data protection and signing; every evidence URL answers 200", async () => {
    h = await openTestApp({ clock: new FakeClock(T0) });
    const r = await h.json("/trust.json");
    expect(r.status).toBe(200);
    expect(r.headers.get("cache-control")).toBe("public, max-age=60");
    const b = r.body;
    expect(b).toMatchObject({
      success: true,
      generated_at_utc: T0,
      service: { name: "Herald", version: "0.1.0", base_url: "http://localhost:3000" },
      overall: "ok",
    });
    expect(b.proofs).toHaveLength(7);
    expect(b.proofs[0]).toEqual({
      check: "freshness_holder_cache",
      label: "Holder cache",
      json_url: "/api/public/holder-cache-freshness.json",
      csv_url: "/api/public/holder-cache-freshness.csv",
      status: "ok",
      freshness_status: "not_configured",
      age_hours: null,
      stale_after_hours: 3,
    });
    // SQLite's PRAGMAs, or PostgreSQL's meaning of them (src/transparency/store/database.ts: one function per engine).
    if (h.ctx.store.dialect === "sqlite") {
      expect(b.data_protection.database).toEqual({ engine: "sqlite", journal_mode: "wal", synchronous: "normal" });
      expect(b.data_protection.replication).toMatchObject({ tool: "litestream", observed_by_service: false });
      expect(b.data_protection.backup.on_demand_endpoint).toBe("/admin/backup/run");
    } else {
      const setting = (await h.ctx.store.get<{ s: string }>("SELECT current_setting('synchronous_commit') AS s"))!.s;
      expect(b.data_protection.database).toEqual({ engine: "postgres", journal_mode: "wal", synchronous: setting });
      expect(b.data_protection.replication).toMatchObject({ tool: "postgresql", observed_by_service: false, docs: "docs/postgres.md" });
      expect(b.data_protection.backup.on_demand_endpoint).toBeNull();
    }
    expect(b.signing.partner_requests).toMatchObject({ scheme: "HMAC-SHA256", timestamp_skew_seconds: 300, nonce_single_use_seconds: 601 });
    expect(b.signing.webhooks.headers).toContain("X-Webhook-Signature");
    expect(b.mint_authority).toEqual({
      status: "ok",
      review_status: null,
      expected_review_status: null,
      expectation_configured: false,
      mismatch: null,
      proof_url: "/api/public/token-mint-authorities.json",
    });

    const urls = new Set<string>([
      ...b.controls.flatMap((c: { evidence: string[] }) => c.evidence),
      ...b.proofs.flatMap((p: any) => [p.json_url, p.csv_url]),
      ...Object.values(b.links as Record<string, string>),
    ]);
    for (const url of urls) {
      const res = await h.request(url);
      expect({ url, status: res.status }).toEqual({ url, status: 200 });
    }
  });

  test("with a token: proofs and the mint-authority review come from the real snapshots", async () => {
    rpc = startSolanaRpc({ holders: 20, transactions: 2, seed: "trust" });
    h = await openTestApp({ env: chainEnv(rpc, [rpc.url], { EXPECTED_MINT_AUTHORITY: "none" }) });
    await h.ctx.jobs.runNow("mint-authority-snapshot");
    const b = (await h.json("/trust.json")).body;
    expect(b.mint_authority).toMatchObject({ status: "ok", review_status: "renounced", expectation_configured: true, mismatch: false });
    expect(b.proofs.find((p: any) => p.check === "freshness_mint_authorities")).toMatchObject({ freshness_status: "fresh", status: "ok", age_hours: 0 });
    expect(b.proofs.find((p: any) => p.check === "freshness_holder_cache")).toMatchObject({ freshness_status: "missing", status: "warn" });
    expect(b.overall).toBe("warn");
  });
});

describe("GET /transparency/trust-dashboard.json", () => {
  test("status, uptime over four windows, incidents of 30 days, proofs, percentiles", async () => {
    h = await openTestApp({ clock: new FakeClock(T0) });
    // 60 minutes of snapshots, 6 of them warn → 10 % degraded over every window (only that hour was observed).
    for (let m = 0; m < 60; m++) await insertSnapshot(h, iso(T0, m - 60), m < 6 ? "warn" : "ok", m < 6 ? { jobs: "warn" } : {});
    await h.ctx.store.run(
      "INSERT INTO status_incidents (started_at, ended_at, severity, current_severity, checks, summary, opened_snapshot_id, updated_at) VALUES (?, ?, 'warn', 'warn', '{\"jobs\":\"warn\"}', '{}', 1, ?)",
      [iso(T0, -60), iso(T0, -54), iso(T0, -54)],
    );
    await h.ctx.store.run(
      "INSERT INTO status_incidents (started_at, ended_at, severity, current_severity, checks, summary, opened_snapshot_id, updated_at) VALUES (?, NULL, 'bad', 'bad', '{}', '{}', 1, ?)",
      [iso(T0, -5), iso(T0, -5)],
    );
    for (const ms of [10, 20, 30]) await insertRequest(h, iso(T0, -1), 200, ms * 1000);
    const r = await h.json("/transparency/trust-dashboard.json");
    expect(r.status).toBe(200);
    const b = r.body;
    expect(b.overall).toBe("ok");
    expect(b.checks.database).toEqual({ status: "ok", summary: "writable, migrations current" });
    expect(b.uptime.exclude_maintenance).toBe(true);
    for (const w of ["24h", "7d", "30d", "90d"])
      expect(b.uptime.windows[w]).toMatchObject({ observed_minutes: 60, degraded_minutes: 6, degraded_pct: 10, uptime_pct: 90 });
    expect(b.incidents).toEqual({
      open: 1,
      last_30_days: 2,
      bad_last_30_days: 1,
      latest: [
        { id: 2, started_at: iso(T0, -5), ended_at: null, severity: "bad" },
        { id: 1, started_at: iso(T0, -60), ended_at: iso(T0, -54), severity: "warn" },
      ],
    });
    expect(b.proofs).toHaveLength(7);
    // The 24 whole hours before the current one (the requests were made in the last of them), bucketed.
    expect(b.latency_ms_24h).toEqual({ samples: 3, p50_ms: bucketed(20_000), p95_ms: bucketed(30_000), p99_ms: bucketed(30_000) });
    expect(b.audit_anomalies.available).toBe(false);
    expect(r.headers.get("cache-control")).toBe("public, max-age=60");
  });

  test("include_meta works; other methods are 405", async () => {
    h = await openTestApp({ clock: new FakeClock(T0) });
    expect((await h.json("/transparency/trust-dashboard.json?include_meta=true")).body.meta.generated_at_utc).toBe(T0);
    expect((await h.json("/trust.json", { method: "DELETE" })).status).toBe(405);
  });
});

describe("validators of the two live documents", () => {
  test("the ETag and Last-Modified follow the data, not the request time: 304 a minute later, 200 once the data changes", async () => {
    h = await openTestApp({ clock: new FakeClock(T0) });
    // These requests themselves are not the data under test: were they logged, each would be one more latency
    // sample in the next dashboard (whether it is depends on when the log's after-response hook runs).
    h.ctx.requestLog.record = () => {};
    for (const path of ["/trust.json", "/transparency/trust-dashboard.json"]) {
      const at = h.clock.now().toISOString();
      const first = await h.request(path);
      const etag = first.headers.get("etag")!;
      const lastModified = first.headers.get("last-modified")!;
      expect([path, ((await first.json()) as { generated_at_utc: string }).generated_at_utc, lastModified]).toEqual([path, at, new Date(at).toUTCString()]);
      // The request time moves; nothing the documents show does. (Before, generated_at_utc was the request time,
      // so every answer had new bytes and a new ETag and no client ever got a 304.)
      h.clock.advanceSeconds(90);
      const later = await h.request(path);
      expect([path, later.headers.get("etag"), ((await later.json()) as { generated_at_utc: string }).generated_at_utc]).toEqual([path, etag, at]);
      expect([path, (await h.request(path, { headers: { "if-none-match": etag } })).status]).toEqual([path, 304]);
      expect([path, (await h.request(path, { headers: { "if-modified-since": lastModified } })).status]).toEqual([path, 304]);
    }
    // New data (an incident opens): the dashboard has new bytes, a new ETag, and is dated now.
    const before = (await h.request("/transparency/trust-dashboard.json")).headers.get("etag")!;
    await h.ctx.store.run(
      "INSERT INTO status_incidents (started_at, ended_at, severity, current_severity, checks, summary, opened_snapshot_id, updated_at) VALUES (?, NULL, 'bad', 'bad', '{}', '{}', 1, ?)",
      [iso(T0, 1), iso(T0, 1)],
    );
    const changed = await h.request("/transparency/trust-dashboard.json", { headers: { "if-none-match": before } });
    expect(changed.status).toBe(200);
    expect(changed.headers.get("etag")).not.toBe(before);
    expect(((await changed.json()) as { generated_at_utc: string }).generated_at_utc).toBe(h.clock.now().toISOString());
  });

  test("with its own requests logged, the dashboard revalidates to 304 within the minute; its request figures count the requests before it", async () => {
    h = await openTestApp({ clock: new FakeClock("2026-01-01T00:00:10.000Z") });
    const path = "/transparency/trust-dashboard.json";
    const first = await h.request(path);
    const etag = first.headers.get("etag")!;
    const body = (await first.json()) as { checks: { request_errors: { summary: string } }; latency_ms_24h: { samples: number } };
    expect([body.checks.request_errors.summary, body.latency_ms_24h.samples]).toEqual([
      "0 of 0 requests failed with 5xx in 15 min (not judged below 20 requests)",
      0,
    ]);
    h.clock.advanceSeconds(20);
    // The first request is in the log now, as a partner's would be; it is not counted before the minute is over.
    for (let i = 0; i < 200 && h.ctx.requestLog.pending < 1; i++) await Bun.sleep(0); // recorded after the response
    await h.ctx.requestLog.flush();
    expect((await h.ctx.store.get<{ n: number }>("SELECT count(*) AS n FROM request_log WHERE route = ?", ["/transparency/trust-dashboard.json"]))!.n).toBe(1);
    expect((await h.request(path, { headers: { "if-none-match": etag } })).status).toBe(304);
    expect((await h.request(path)).headers.get("etag")).toBe(etag);
    for (let i = 0; i < 200 && h.ctx.requestLog.pending < 2; i++) await Bun.sleep(0);
    // The next minute counts the three requests of the one before: new bytes, a new ETag.
    h.clock.advanceSeconds(60);
    const next = await h.request(path, { headers: { "if-none-match": etag } });
    expect(next.status).toBe(200);
    expect(next.headers.get("etag")).not.toBe(etag);
    const counted = (await next.json()) as typeof body;
    // Latency counts whole hours (the request log's hourly histograms): none has ended since the first request.
    expect([counted.checks.request_errors.summary, counted.latency_ms_24h.samples]).toEqual([
      "0 of 3 requests failed with 5xx in 15 min (not judged below 20 requests)",
      0,
    ]);
    // Once the hour is over, its four requests (the three before and `next`) are counted, and stay so all hour.
    for (let i = 0; i < 200 && h.ctx.requestLog.pending < 1; i++) await Bun.sleep(0);
    h.clock.advanceSeconds(3_600);
    const hourLater = (await (await h.request(path)).json()) as typeof body;
    expect(hourLater.latency_ms_24h.samples).toBe(4);
  });
});
