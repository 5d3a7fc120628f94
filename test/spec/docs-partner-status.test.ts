// Docs audit: docs/partner-status.md's windows, counts and delivery health against the real app.
import { afterEach, describe, expect, test } from "bun:test";
import { insertLog } from "../partner/request-log-rows";
import { afterResponses, openTestApp, type TestApp } from "../support/app";
import { FakeClock } from "../support/clock";
import { createKey, signedInit, signedJson } from "../support/partner";
import { startReceiver } from "../support/receiver";

let h: TestApp;
const receivers: Array<{ stop(): void }> = [];
afterEach(async () => {
  for (const r of receivers.splice(0)) r.stop();
  await h?.close();
  h = undefined as unknown as TestApp;
});

describe("usage analytics", () => {
  // docs/partner-status.md:78-80, :93-96 — whole UTC hours from the start of the hour that held end − hours; read
  // from daily rows for whole days and hourly rows at the ends: the counts equal the raw rows for any window
  test("windows across day boundaries count exactly the rows inside them", async () => {
    h = await openTestApp({ clock: new FakeClock("2026-01-10T10:20:00.000Z") });
    const k = await createKey(h);
    const now = h.clock.now().getTime();
    const rows = [];
    for (let m = 1; m < 32 * 24 * 60; m += 30) rows.push({ route: "/r", status: 200, latencyUs: 1000, at: new Date(now - m * 60_000 - 7_000).toISOString() });
    await insertLog(h, k.keyId, rows, new Date(now).toISOString());
    const got: Array<[number, number, number]> = [];
    const want: Array<[number, number, number]> = [];
    for (const hours of [1, 10, 11, 24, 25, 34, 35, 48, 49, 100, 720]) {
      const r = await signedJson(h, k, "GET", `/api/partner/analytics/usage?hours=${hours}`);
      const start = Date.parse(r.body.window.start_utc);
      expect(start).toBe(Math.floor((now - hours * 3_600_000) / 3_600_000) * 3_600_000);
      const inWindow = rows.filter((x) => Date.parse(x.at) >= start).length;
      const row = r.body.request_metrics.endpoint_breakdown.find((e: { path: string }) => e.path === "/r");
      const lat = r.body.latency_metrics_ms.endpoint_breakdown.find((e: { path: string }) => e.path === "/r");
      got.push([hours, row?.requests ?? 0, lat?.samples ?? 0]);
      want.push([hours, inWindow, inWindow]);
    }
    expect(got).toEqual(want);
  });

  // docs/partner-status.md:9-10, :81-84, :117-119 — all methods of a path in one row, ties by path, a 429 counted as
  // rate-limited and as an error, a 401 never counted
  test("breakdown by route template; 429 counted, 401 not", async () => {
    h = await openTestApp({ env: { RATE_LIMIT_PARTNER_PER_MIN: "5" } });
    const k = await createKey(h);
    await signedJson(h, k, "POST", "/api/partner/users", { body: { external_id: "a" } });
    await signedJson(h, k, "GET", "/api/partner/users");
    await signedJson(h, k, "GET", "/api/partner/users/1");
    await signedJson(h, k, "GET", "/api/partner/capabilities");
    await signedJson(h, k, "GET", "/api/partner/webhooks/event-types"); // public catalog: not this key's
    await signedJson(h, k, "GET", "/api/partner/capabilities");
    expect((await signedJson(h, k, "GET", "/api/partner/capabilities")).status).toBe(429);
    await h.json("/api/partner/capabilities", signedInit(h, { ...k, secret: "hsk_live_wrong" }, "GET", "/api/partner/capabilities"));
    // each answered request is buffered by its after-response hook: wait for all eight, bounded
    await afterResponses(10);
    for (let i = 0; i < 200 && h.ctx.requestLog.pending < 8; i++) await Bun.sleep(5);
    h.clock.advanceSeconds(61);
    const r = await signedJson(h, k, "GET", "/api/partner/analytics/usage?hours=1");
    expect(r.body.request_metrics).toEqual({
      total_requests: 6,
      success_requests: 5,
      error_requests: 1,
      rate_limited_requests: 1,
      endpoint_breakdown: [
        { path: "/api/partner/capabilities", requests: 3, errors: 1, error_rate_pct: 33.33 },
        { path: "/api/partner/users", requests: 2, errors: 0, error_rate_pct: 0 },
        { path: "/api/partner/users/:user_id", requests: 1, errors: 0, error_rate_pct: 0 },
      ],
    });
  });
});

describe("partner status", () => {
  // docs/partner-status.md:38-39, :43-44 — the window is this hour and the one before; delivered_events counts the
  // deliveries delivered since start_utc, the other counts are now
  test("window start and delivered_events follow the clock's hours", async () => {
    const ok = startReceiver({ status: 204 });
    receivers.push(ok);
    h = await openTestApp({ env: { WEBHOOK_ALLOW_PRIVATE_TARGETS: "1" } });
    const k = await createKey(h);
    h.clock.advanceSeconds(1); // 00:00:01, off the hour's first instant
    const w = await signedJson(h, k, "POST", "/api/partner/webhooks", { body: { event_type: "webhook.test", target_url: ok.url() } });
    expect((await signedJson(h, k, "POST", `/api/partner/webhooks/${w.body.webhook.id}/test`)).status).toBe(200);
    const health = async () => (await signedJson(h, k, "GET", "/api/partner/status")).body;
    // the test route nudged a pass: run passes until the delivery is recorded as delivered (bounded)
    let body = await health();
    for (let i = 0; i < 100 && body.webhook_delivery_health.delivered_events < 1; i++) {
      await h.ctx.dispatcher.runOnce();
      await Bun.sleep(20);
      body = await health();
    }
    expect(body.webhook_delivery_health).toEqual({ dead_letter_events: 0, failed_events: 0, pending_events: 0, delivered_events: 1 });
    expect(body.window.start_utc).toBe("2025-12-31T23:00:00.000Z");
    h.clock.advanceSeconds(80 * 60); // 01:20:01: the window starts at 00:00, the delivery (00:00:01) is in it
    body = await health();
    expect([body.window.start_utc, body.webhook_delivery_health.delivered_events]).toEqual(["2026-01-01T00:00:00.000Z", 1]);
    h.clock.advanceSeconds(60 * 60); // 02:20:01: the window starts at 01:00
    body = await health();
    expect([body.window.start_utc, body.webhook_delivery_health.delivered_events, body.overall_status]).toEqual(["2026-01-01T01:00:00.000Z", 0, "ok"]);
  });
});
