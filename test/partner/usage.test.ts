import { afterEach, describe, expect, test } from "bun:test";
import { bucketOf, bucketValueUs, MAX_RELATIVE_ERROR } from "../../src/http/request-log/histogram";
import { afterResponses, openTestApp, type TestApp } from "../support/app";
import { createKey, signedJson, type TestKey } from "../support/partner";
import { insertLog, minutesAgo, nearestRank, seedSample } from "./request-log-rows";

/** A latency as the histograms report it: the middle of its bucket (src/http/request-log/histogram.ts), in ms. */
const bucketed = (us: number) => Math.round(bucketValueUs(bucketOf(us))) / 1000;

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
    // Each percentile is the bucket of the nearest-rank sample above, within 9.05 % of it.
    expect(r.body.latency_metrics_ms).toEqual({
      available: true,
      method: "histogram",
      relative_error_pct: 9.05,
      overall: { samples: 27, p50_ms: bucketed(3141), p95_ms: bucketed(9937), p99_ms: bucketed(11121) },
      endpoint_breakdown: [
        { path: "/api/partner/users/:user_id", samples: 20, p50_ms: bucketed(4592), p95_ms: bucketed(9937), p99_ms: bucketed(11121) },
        { path: "/api/salutes/credit", samples: 7, p50_ms: bucketed(400), p95_ms: bucketed(700), p99_ms: bucketed(700) },
      ],
    });
    for (const [est, exact] of [
      [r.body.latency_metrics_ms.overall.p50_ms, 3.141],
      [r.body.latency_metrics_ms.overall.p99_ms, 11.121],
    ] as const) {
      expect(Math.abs(est - exact) / exact).toBeLessThanOrEqual(MAX_RELATIVE_ERROR);
    }
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

  test("the window is whole UTC hours: from the start of the hour that held now − hours, to now; moved by the clock", async () => {
    h = await openTestApp();
    const key = await createKey(h);
    h.clock.advanceSeconds(20 * 60); // 00:20
    const now = h.clock.now().getTime();
    const iso = (ms: number) => new Date(now + ms).toISOString();
    await insertLog(
      h,
      key.keyId,
      [
        { route: "/before-the-window", status: 200, latencyUs: 1, at: "2025-12-31T22:59:59.999Z" },
        { route: "/first-instant", status: 200, latencyUs: 2, at: "2025-12-31T23:00:00.000Z" },
        { route: "/now", status: 200, latencyUs: 3, at: iso(0) },
      ],
      iso(0),
    );
    // The usage calls themselves are this key's requests too: left out.
    const paths = async (q: string) =>
      ((await usage(h, key, q)).body.request_metrics.endpoint_breakdown as Array<{ path: string }>)
        .map((e) => e.path)
        .filter((p) => p !== "/api/partner/analytics/usage")
        .sort();
    expect(await paths("?hours=1")).toEqual(["/first-instant", "/now"]);
    const r = await usage(h, key, "?hours=1");
    expect(r.body.window).toEqual({ hours: 1, start_utc: "2025-12-31T23:00:00.000Z", end_utc: iso(0) });
    expect(await paths("?hours=2")).toEqual(["/before-the-window", "/first-instant", "/now"]);
    h.clock.advanceSeconds(3_600); // 01:20: the window starts at 00:00
    const later = await usage(h, key, "?hours=1");
    expect(later.body.window.start_utc).toBe("2026-01-01T00:00:00.000Z");
    expect(await paths("?hours=1")).toEqual(["/now"]);
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

  test("percentiles count every request of the window, each within 9.05 % of the nearest rank of the raw latencies", async () => {
    h = await openTestApp();
    const key = await createKey(h);
    // Log-uniform latencies from 20 µs to 20 s (a fixed pseudo-random sequence), over two routes and several hours.
    let seed = 42;
    const next = () => (seed = (seed * 1_103_515_245 + 12_345) % 2_147_483_648) / 2_147_483_648;
    const rows = Array.from({ length: 6_000 }, (_, i) => ({
      route: i % 3 ? "/a" : "/b",
      status: 200,
      latencyUs: Math.max(20, Math.round(20 * 1000 ** (next() * 2))),
      at: minutesAgo(h, (i * 7) % 600),
    }));
    await insertLog(h, key.keyId, rows, minutesAgo(h, 1));
    const r = await usage(h, key, "?hours=12");
    expect(r.body.request_metrics.total_requests).toBe(6_000);
    const check = (got: { samples: number; p50_ms: number; p95_ms: number; p99_ms: number }, us: number[]) => {
      expect(got.samples).toBe(us.length);
      const sorted = [...us].sort((a, b) => a - b);
      for (const p of [50, 95, 99] as const) {
        const exact = nearestRank(sorted, p) / 1000;
        const est = got[`p${p}_ms`];
        expect({ p, error: Math.abs(est - exact) / exact <= MAX_RELATIVE_ERROR + 1e-6 }).toEqual({ p, error: true });
      }
    };
    check(
      r.body.latency_metrics_ms.overall,
      rows.map((x) => x.latencyUs),
    );
    for (const e of r.body.latency_metrics_ms.endpoint_breakdown as Array<{ path: string; samples: number; p50_ms: number; p95_ms: number; p99_ms: number }>) {
      check(
        e,
        rows.filter((x) => x.route === e.path).map((x) => x.latencyUs),
      );
    }
  });

  test.each(["0", "721", "1.5", "-1", "abc", ""])("hours=%p → 400 invalid_query", async (hours) => {
    h = await openTestApp();
    const r = await usage(h, await createKey(h), `?hours=${hours}`);
    expect(r.status).toBe(400);
    expect(r.body.error).toBe("invalid_query");
  });

  test("hours=720 is accepted; no scope needed; unsigned 401; a sandbox key reads its own practice calls", async () => {
    h = await openTestApp();
    const live = await createKey(h, { scopes: ["read"] });
    const r = await usage(h, live, "?hours=720");
    expect(r.status).toBe(200);
    expect(r.body.window.hours).toBe(720);
    expect((await h.json("/api/partner/analytics/usage")).status).toBe(401);
    // The promotion report's error-rate check links here: a sandbox key sees its own calls, never the live key's.
    const sandboxKey = await createKey(h, { mode: "sandbox" });
    expect((await signedJson(h, sandboxKey, "GET", "/api/partner/sandbox/verify")).status).toBe(200);
    expect((await signedJson(h, sandboxKey, "GET", "/api/partner/sandbox/users/999999")).status).toBe(404);
    await afterResponses(10);
    const sandbox = await usage(h, sandboxKey);
    expect(sandbox.status).toBe(200);
    expect(sandbox.body.request_metrics).toMatchObject({ total_requests: 2, success_requests: 1, error_requests: 1 });
  });
});
