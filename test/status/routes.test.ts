import { bucketOf, bucketValueUs } from "../../src/http/request-log/histogram";
import { afterEach, describe, expect, test } from "bun:test";
import { publicRateGroup } from "../../src/http/rate-limit/route-groups";
import { CHECK_NAMES } from "../../src/status/checks/engine";
import { openTestApp, jsonInit, type TestApp } from "../support/app";
import { FakeClock } from "../support/clock";
import { insertRequest } from "./support";

// The public status routes' contracts: shapes, the alias, include_meta, caching, latency percentiles by nearest
// rank, the strict canary, and the per-IP rate limit on every public status path.

let h: TestApp | undefined;
afterEach(async () => {
  await h?.close();
  h = undefined;
});

/** A latency as the histograms answer it: the middle of its bucket, in ms (src/http/request-log/histogram.ts). */
const bucketed = (us: number) => Math.round(bucketValueUs(bucketOf(us))) / 1000;
const T0 = "2026-01-01T00:00:00.000Z";

describe("GET /api/public/system-status and /status.json", () => {
  test("overall, every check by name with status and summary, links; the alias answers the same", async () => {
    h = await openTestApp({ clock: new FakeClock(T0) });
    const a = await h.json("/api/public/system-status");
    expect(a.status).toBe(200);
    expect(a.body).toMatchObject({
      success: true,
      generated_at: T0,
      overall: "ok",
      policy_version: "builtin-1",
      last_snapshot_at: null,
      open_incident: null,
      maintenance: { active: false, windows: [] },
    });
    expect(Object.keys(a.body.checks)).toEqual([...CHECK_NAMES]);
    for (const name of CHECK_NAMES) {
      expect(["ok", "warn", "bad"]).toContain(a.body.checks[name].status);
      expect(typeof a.body.checks[name].summary).toBe("string");
    }
    expect(a.body.checks.jobs.jobs.length).toBeGreaterThan(5);
    expect(a.body.links.page).toBe("/status");
    expect(a.headers.get("cache-control")).toBe("public, max-age=30");
    const b = await h.json("/status.json");
    expect(b.status).toBe(200);
    const { request_errors: _ra, ...ca } = a.body.checks;
    const { request_errors: _rb, ...cb } = b.body.checks; // the first request is in the log by now
    expect(cb).toEqual(ca);
    expect(b.headers.get("cache-control")).toBe("public, max-age=30");
  });

  test("include_meta adds meta; a stored snapshot shows as last_snapshot_at", async () => {
    h = await openTestApp({ clock: new FakeClock(T0) });
    await h.ctx.jobs.runNow("status-snapshot");
    const r = await h.json("/api/public/system-status?include_meta=1");
    expect(r.body.meta).toEqual({ request_id: r.headers.get("x-request-id")!, generated_at_utc: T0 });
    expect(r.body.last_snapshot_at).toBe(T0);
  });

  test("other methods are 405", async () => {
    h = await openTestApp();
    expect((await h.json("/api/public/system-status", { method: "POST" })).status).toBe(405);
  });
});

describe("GET /api/public/latency-percentiles", () => {
  test("p50/p95/p99 overall and per route over the window: the buckets of the nearest-rank values (worked out by hand)", async () => {
    h = await openTestApp({ clock: new FakeClock(T0) });
    const at = new Date(Date.parse(T0) - 60_000).toISOString();
    for (let ms = 1; ms <= 100; ms++) await insertRequest(h, at, 200, ms * 1000, "/a"); // 1..100 ms
    for (const ms of [5, 1, 3]) await insertRequest(h, at, 200, ms * 1000, "/b");
    // The window is whole hours: from the start of the hour 24 h before now. The instant before it is outside.
    await insertRequest(h, "2025-12-30T23:59:59.999Z", 200, 999_000, "/a");
    await insertRequest(h, "2025-12-31T00:00:00.000Z", 200, 1_000, "/c");
    const r = await h.json("/api/public/latency-percentiles");
    expect(r.status).toBe(200);
    // /a: rank ⌈0.50×100⌉ = 50 → 50 ms; ⌈0.95×100⌉ = 95; ⌈0.99×100⌉ = 99
    // /b: sorted 1,3,5: ⌈1.5⌉ = 2 → 3 ms; ⌈2.85⌉ = 3 → 5 ms; ⌈2.97⌉ = 3 → 5 ms
    // overall (104, with /c's 1 ms): values ≤ v number v + 4 for v ≥ 5: ⌈52⌉ = 52 → 48 ms; ⌈98.8⌉ = 99 → 95 ms;
    // ⌈102.96⌉ = 103 → 99 ms. Each is answered as the middle of its latency bucket, within 9.05 %.
    expect(r.body).toMatchObject({
      window: { hours: 24, start_utc: "2025-12-31T00:00:00.000Z", end_utc: T0 },
      available: true,
      method: "histogram",
      relative_error_pct: 9.05,
      overall: { samples: 104, p50_ms: bucketed(48_000), p95_ms: bucketed(95_000), p99_ms: bucketed(99_000) },
      endpoint_breakdown: [
        { path: "/a", samples: 100, p50_ms: bucketed(50_000), p95_ms: bucketed(95_000), p99_ms: bucketed(99_000) },
        { path: "/b", samples: 3, p50_ms: bucketed(3_000), p95_ms: bucketed(5_000), p99_ms: bucketed(5_000) },
        { path: "/c", samples: 1, p50_ms: bucketed(1_000), p95_ms: bucketed(1_000), p99_ms: bucketed(1_000) },
      ],
    });
  });

  test("empty window: available false and nulls; hours is bounded 1–720", async () => {
    h = await openTestApp({ clock: new FakeClock(T0) });
    const r = await h.json("/api/public/latency-percentiles?hours=1");
    expect(r.body).toMatchObject({ available: false, overall: { samples: 0, p50_ms: null, p95_ms: null, p99_ms: null }, endpoint_breakdown: [] });
    for (const q of ["hours=0", "hours=721", "hours=one"]) {
      const bad = await h.json(`/api/public/latency-percentiles?${q}`);
      expect(bad.status).toBe(400);
      expect(bad.body).toMatchObject({ error: "invalid_query", details: [{ field: "query.hours" }] });
    }
  });
});

describe("POST /api/canary/echo", () => {
  test("echoes message and request_id with the service's own request id; never cached", async () => {
    h = await openTestApp({ clock: new FakeClock(T0) });
    const r = await h.json("/api/canary/echo", jsonInit("POST", { message: "ping ✓", request_id: "probe-0001" }));
    expect(r.status).toBe(200);
    expect(r.body).toEqual({ success: true, message: "ping ✓", request_id: "probe-0001", server_request_id: r.headers.get("x-request-id")!, received_at: T0 });
    expect(r.headers.get("cache-control")).toBe("no-store");
  });

  const MALFORMED: Array<[string, string]> = [
    ["empty object", "{}"],
    ["missing request_id", JSON.stringify({ message: "hi" })],
    ["missing message", JSON.stringify({ request_id: "r1" })],
    ["empty message", JSON.stringify({ message: "", request_id: "r1" })],
    ["message too long", JSON.stringify({ message: "x".repeat(1001), request_id: "r1" })],
    ["empty request_id", JSON.stringify({ message: "hi", request_id: "" })],
    ["request_id too long", JSON.stringify({ message: "hi", request_id: "r".repeat(129) })],
    ["request_id with a space", JSON.stringify({ message: "hi", request_id: "has space" })],
    ["request_id not ASCII", JSON.stringify({ message: "hi", request_id: "réq" })],
    ["message a number", JSON.stringify({ message: 42, request_id: "r1" })],
    ["message an array", JSON.stringify({ message: ["hi"], request_id: "r1" })],
    ["request_id null", JSON.stringify({ message: "hi", request_id: null })],
    ["unknown field", JSON.stringify({ message: "hi", request_id: "r1", extra: true })],
    ["an array", JSON.stringify([{ message: "hi", request_id: "r1" }])],
    ["a string", JSON.stringify("hi")],
    ["a number", "42"],
    ["null", "null"],
    ["malformed JSON", '{"message": "hi",'],
    ["empty body", ""],
  ];
  for (const [name, body] of MALFORMED) {
    test(`400 invalid_payload: ${name}`, async () => {
      h = await openTestApp();
      const r = await h.json("/api/canary/echo", { method: "POST", headers: { "content-type": "application/json" }, body });
      expect(r.status).toBe(400);
      expect(r.body).toMatchObject({ success: false, error: "invalid_payload" });
      expect(r.body.request_id).toBe(r.headers.get("x-request-id")!);
    });
  }

  test("unknown field is named in details", async () => {
    h = await openTestApp();
    const r = await h.json("/api/canary/echo", jsonInit("POST", { message: "hi", request_id: "r1", extra: true }));
    expect(r.body.details).toContainEqual({ field: "extra", problem: "is not a known field" });
  });

  test("a non-JSON content type is 415; a body over MAX_BODY_BYTES is 413", async () => {
    h = await openTestApp({ env: { MAX_BODY_BYTES: "2048" } });
    const text = await h.json("/api/canary/echo", { method: "POST", headers: { "content-type": "text/plain" }, body: "hi" });
    expect(text.status).toBe(415);
    const big = await h.json("/api/canary/echo", jsonInit("POST", { message: "x".repeat(3000), request_id: "r1" }));
    expect(big.status).toBe(413);
    expect(big.body.error).toBe("payload_too_large");
  });
});

describe("rate limits", () => {
  test("every public status path is in the per-IP public group; partner status is not", () => {
    for (const p of [
      "/status",
      "/status/feed.rss",
      "/status/feed.json",
      "/api/public/system-status/incidents/1",
      "/status/badge/overall.svg",
      "/status.json",
      "/api/public/system-status/uptime",
      "/api/public/latency-percentiles",
      "/api/canary/echo",
      "/trust.json",
      "/transparency/trust-dashboard.json",
      "/developers/deprecations.rss",
      "/api/openapi-transparency.yaml",
      "/api/openapi.yaml",
      "/api/openapi.json",
    ]) {
      expect(publicRateGroup(p)).toBe("public");
    }
    expect(publicRateGroup("/api/partner/status")).toBeNull();
    expect(publicRateGroup("/admin/status/maintenance")).toBeNull();
    expect(publicRateGroup("/admin/status/incidents")).toBeNull();
    expect(publicRateGroup("/admin/status/subscribers")).toBeNull();
  });

  test("a prefix is a whole path segment: /api/public-stats is public by name, /statuses or /api/publicity are not", async () => {
    expect(publicRateGroup("/api/public-stats")).toBe("public");
    for (const p of ["/statuses", "/status-page", "/api/publicity", "/api/canary-x", "/trust.jsonx"]) expect([p, publicRateGroup(p)]).toEqual([p, null]);
    // The players' page moved under a path that only starts like a public one is not limited per IP.
    h = await openTestApp({
      env: { RATE_LIMIT_PUBLIC_API_PER_MIN: "1", MESSENGER_BOT_TOKEN: "7000000001:AAE_test-token_0123456789abcdefghijk", MESSENGER_MINI_APP_PATH: "/statuses" },
    });
    for (let i = 0; i < 3; i++) expect((await h.request("/statuses")).status).toBe(200);
    expect((await h.request("/api/public-stats")).status).toBe(200);
    expect((await h.request("/api/public-stats")).status).toBe(429);
  });

  test("the status page, its feed and badges answer 429 past RATE_LIMIT_PUBLIC_API_PER_MIN per IP", async () => {
    h = await openTestApp({ env: { RATE_LIMIT_PUBLIC_API_PER_MIN: "3" } });
    expect((await h.request("/status")).status).toBe(200);
    expect((await h.request("/status/feed.rss")).status).toBe(200);
    const badge = await h.request("/status/badge/overall.svg");
    expect(badge.status).toBe(200);
    expect(badge.headers.get("x-ratelimit-remaining")).toBe("0");
    const limited = await h.json("/status");
    expect(limited.status).toBe(429);
    expect(limited.body.error).toBe("rate_limited");
    expect(limited.headers.get("retry-after")).not.toBeNull();
  });
});
