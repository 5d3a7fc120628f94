import { afterEach, describe, expect, test } from "bun:test";
import { MAX_LATENCY_SAMPLES, nearestRank } from "../../src/http/latency";
import { openTestApp, type TestApp } from "../support/app";
import { createKey, signedJson, type TestKey } from "../support/partner";
import { insertLog, minutesAgo, seedSample } from "./request-log-rows";

let h = undefined as unknown as TestApp;
afterEach(async () => {
  await h?.close();
  h = undefined as unknown as TestApp;
});

const usage = (t: TestApp, key: TestKey, q = "") => signedJson(t, key, "GET", `/api/partner/analytics/usage${q}`);

describe("usage analytics", () => {
  test("counts, error rates and nearest-rank percentiles match the hand-computed sample", async () => {
    h = await openTestApp();
    const key = await createKey(h, { partner: "Acme" });
    await seedSample(h, key, await createKey(h, { partner: "Acme" }));
    const r = await usage(h, key);
    expect(r.status).toBe(200);
    expect(r.body.window).toEqual({ hours: 24, start_utc: "2025-12-31T00:00:00.000Z", end_utc: "2026-01-01T00:00:00.000Z" });
    expect(r.body.request_metrics).toEqual({
      total_requests: 27,
      success_requests: 22,
      error_requests: 5,
      rate_limited_requests: 1,
      endpoint_breakdown: [
        { path: "/api/partner/users/:user_id", requests: 20, errors: 4, error_rate_pct: 20 },
        { path: "/api/salutes/credit", requests: 7, errors: 1, error_rate_pct: 14.29 }, // 1/7 = 14.2857…
      ],
    });
    // A sorted (µs): 288 910 1234 1693 2384 2795 3141 3383 4197 [4592] 5105 5358 5678 5926 6264 7494 8209 9793 [9937] [11121]
    //   n=20: p50 rank ceil(10)=10 → 4592; p95 rank ceil(19)=19 → 9937; p99 rank ceil(19.8)=20 → 11121
    // B sorted: 100 200 300 [400] 500 600 [700]; n=7: p50 rank ceil(3.5)=4 → 400; p95 rank ceil(6.65)=7 → 700; p99 → 700
    // All 27: 100 200 288 300 400 500 600 700 910 1234 1693 2384 2795 [3141]=14th … 9793 [9937]=26th [11121]=27th
    //   p50 rank ceil(13.5)=14 → 3141; p95 rank ceil(25.65)=26 → 9937; p99 rank ceil(26.73)=27 → 11121
    expect(r.body.latency_metrics_ms).toEqual({
      available: true,
      method: "nearest_rank",
      sample_limit: MAX_LATENCY_SAMPLES,
      truncated: false,
      overall: { samples: 27, p50_ms: 3.141, p95_ms: 9.937, p99_ms: 11.121 },
      endpoint_breakdown: [
        { path: "/api/partner/users/:user_id", samples: 20, p50_ms: 4.592, p95_ms: 9.937, p99_ms: 11.121 },
        { path: "/api/salutes/credit", samples: 7, p50_ms: 0.4, p95_ms: 0.7, p99_ms: 0.7 },
      ],
    });
  });

  test("nearest rank on tiny samples", () => {
    expect(nearestRank([7], 50)).toBe(7);
    expect(nearestRank([7], 99)).toBe(7);
    expect(nearestRank([1, 2], 50)).toBe(1);
    expect(nearestRank([1, 2], 51)).toBe(2);
    expect(
      nearestRank(
        Array.from({ length: 100 }, (_, i) => i + 1),
        95,
      ),
    ).toBe(95);
    expect(
      nearestRank(
        Array.from({ length: 100 }, (_, i) => i + 1),
        99,
      ),
    ).toBe(99);
  });

  test("with no traffic: zeros, available=false and null percentiles", async () => {
    h = await openTestApp();
    const r = await usage(h, await createKey(h));
    expect(r.body.request_metrics).toEqual({ total_requests: 0, success_requests: 0, error_requests: 0, rate_limited_requests: 0, endpoint_breakdown: [] });
    expect(r.body.latency_metrics_ms).toMatchObject({
      available: false,
      overall: { samples: 0, p50_ms: null, p95_ms: null, p99_ms: null },
      endpoint_breakdown: [],
    });
  });

  test("the window is (now − hours, now], moved by the clock", async () => {
    h = await openTestApp();
    const key = await createKey(h);
    const now = h.clock.now().getTime();
    const iso = (ms: number) => new Date(now + ms).toISOString();
    await insertLog(
      h,
      key.keyId,
      [
        { route: "/exactly-one-hour-old", status: 200, latencyUs: 1, at: iso(-3_600_000) },
        { route: "/just-inside", status: 200, latencyUs: 2, at: iso(-3_600_000 + 1) },
        { route: "/now", status: 200, latencyUs: 3, at: iso(0) },
        { route: "/future", status: 200, latencyUs: 4, at: iso(1) },
      ],
      iso(0),
    );
    const paths = async (q: string) => ((await usage(h, key, q)).body.request_metrics.endpoint_breakdown as Array<{ path: string }>).map((e) => e.path).sort();
    expect(await paths("?hours=1")).toEqual(["/just-inside", "/now"]);
    h.clock.advance(1);
    const r = await usage(h, key, "?hours=1");
    expect(r.body.window).toEqual({ hours: 1, start_utc: iso(-3_600_000 + 1), end_utc: iso(1) });
    const later = (r.body.request_metrics.endpoint_breakdown as Array<{ path: string }>).map((e) => e.path);
    expect(later).toContain("/future");
    expect(later).not.toContain("/just-inside");
    expect(await paths("?hours=2")).toContain("/exactly-one-hour-old");
  });

  test("real requests of this key appear (the buffered log is flushed first); other keys' do not", async () => {
    h = await openTestApp();
    const key = await createKey(h, { partner: "Acme" });
    const sibling = await createKey(h, { partner: "Acme" });
    await signedJson(h, key, "GET", "/api/partner/capabilities");
    await signedJson(h, key, "GET", "/api/partner/donation-claims/dc_unknown");
    await signedJson(h, sibling, "GET", "/api/partner/capabilities");
    // The after-response hook logs each call once its response is sent: wait until all three are buffered, bounded.
    for (let i = 0; i < 200 && h.ctx.requestLog.pending < 3; i++) await Bun.sleep(5);
    expect(h.ctx.requestLog.pending).toBe(3);
    const r = await usage(h, key);
    expect(r.body.request_metrics).toMatchObject({ total_requests: 2, error_requests: 1 });
    expect(r.body.request_metrics.endpoint_breakdown).toEqual([
      { path: "/api/partner/capabilities", requests: 1, errors: 0, error_rate_pct: 0 },
      { path: "/api/partner/donation-claims/:claim_code", requests: 1, errors: 1, error_rate_pct: 100 },
    ]);
    expect(r.body.latency_metrics_ms.overall.samples).toBe(2);
  });

  test("percentiles use the most recent sample_limit requests; counts stay exact", async () => {
    h = await openTestApp();
    const key = await createKey(h);
    const old = minutesAgo(h, 60);
    // The 10 oldest requests are very slow; they fall outside the sample, so p99 never sees them.
    await insertLog(
      h,
      key.keyId,
      Array.from({ length: 10 }, () => ({ route: "/slow", status: 200, latencyUs: 10_000_000 })),
      old,
    );
    await insertLog(
      h,
      key.keyId,
      Array.from({ length: MAX_LATENCY_SAMPLES }, (_, i) => ({ route: "/fast", status: 200, latencyUs: 1000 + (i % 100) })),
      minutesAgo(h, 1),
    );
    const r = await usage(h, key);
    expect(r.body.request_metrics.total_requests).toBe(MAX_LATENCY_SAMPLES + 10);
    expect(r.body.latency_metrics_ms).toMatchObject({ truncated: true, overall: { samples: MAX_LATENCY_SAMPLES, p99_ms: 1.098 } });
    expect(r.body.latency_metrics_ms.endpoint_breakdown.map((e: { path: string }) => e.path)).toEqual(["/fast"]);
  });

  test.each(["0", "721", "1.5", "-1", "abc", ""])("hours=%p → 400 invalid_query", async (hours) => {
    h = await openTestApp();
    const r = await usage(h, await createKey(h), `?hours=${hours}`);
    expect(r.status).toBe(400);
    expect(r.body.error).toBe("invalid_query");
  });

  test("hours=720 is accepted; no scope needed; unsigned 401; sandbox key 403", async () => {
    h = await openTestApp();
    const r = await usage(h, await createKey(h, { scopes: ["read"] }), "?hours=720");
    expect(r.status).toBe(200);
    expect(r.body.window.hours).toBe(720);
    expect((await h.json("/api/partner/analytics/usage")).status).toBe(401);
    const sandbox = await usage(h, await createKey(h, { mode: "sandbox" }));
    expect(sandbox.status).toBe(403);
    expect(sandbox.body.error).toBe("forbidden");
  });
});
