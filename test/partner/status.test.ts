import { bucketOf, bucketValueUs } from "../../src/http/request-log/histogram";
import { afterEach, describe, expect, test } from "bun:test";
import { openTestApp, type TestApp } from "../support/app";
import { createKey, signedJson, type TestKey } from "../support/partner";
import { startReceiver, type Receiver } from "../support/receiver";
import { insertLog, minutesAgo, seedSample } from "./request-log-rows";

/** A latency as the histograms answer it: the middle of its bucket, in ms (src/http/request-log/histogram.ts). */
const bucketed = (us: number) => Math.round(bucketValueUs(bucketOf(us))) / 1000;

let h = undefined as unknown as TestApp;
const receivers: Receiver[] = [];
afterEach(async () => {
  for (const r of receivers.splice(0)) r.stop();
  await h?.close();
  h = undefined as unknown as TestApp;
});

const status = (t: TestApp, key: TestKey) => signedJson(t, key, "GET", "/api/partner/status");

describe("partner status", () => {
  test("the spec's shape, with last-hour percentiles of this key from the hand-computed sample", async () => {
    h = await openTestApp();
    const key = await createKey(h, { partner: "Acme" });
    await seedSample(h, key, await createKey(h, { partner: "Acme" }));
    // Two hours old: in usage's 24 h, never in status's last hour.
    await insertLog(h, key.keyId, [{ route: "/old", status: 500, latencyUs: 99_000_000 }], minutesAgo(h, 120));
    const r = await status(h, key);
    expect(r.status).toBe(200);
    expect(r.body).toEqual({
      success: true,
      overall_status: "ok",
      status_reasons: [],
      key_id: key.keyId,
      key_mode: "live",
      window: { hours: 1, start_utc: "2025-12-31T23:00:00.000Z", end_utc: "2026-01-01T00:00:00.000Z" },
      endpoint_percentiles_available: true,
      // Same 27 samples as test/partner/usage.test.ts: p50 rank 14 → 3141 µs, p95 rank 26 → 9937 µs, p99 rank 27 → 11121 µs,
      // each answered as the middle of its latency bucket (within 9.05 %).
      endpoint_percentiles_ms: { p50_ms: bucketed(3141), p95_ms: bucketed(9937), p99_ms: bucketed(11121) },
      request_metrics: { total_requests: 27, error_requests: 5 },
      webhook_delivery_health: { dead_letter_events: 0, failed_events: 0, pending_events: 0, delivered_events: 0 },
      delivery_slo_controls: { max_attempts: 10, timeout_seconds: 15, retry_base_seconds: 180, retry_max_seconds: 28800, retry_jitter_pct: 20 },
    });
  });

  test("without traffic: percentiles unavailable and null; its own earlier calls count once flushed", async () => {
    h = await openTestApp();
    const key = await createKey(h, { scopes: ["read"] });
    const first = await status(h, key);
    expect(first.body).toMatchObject({
      endpoint_percentiles_available: false,
      endpoint_percentiles_ms: { p50_ms: null, p95_ms: null, p99_ms: null },
      request_metrics: { total_requests: 0, error_requests: 0 },
    });
    // The after-response hook logs the first call once its response is sent: wait for it to be buffered, bounded.
    for (let i = 0; i < 200 && h.ctx.requestLog.pending === 0; i++) await Bun.sleep(5);
    expect(h.ctx.requestLog.pending).toBe(1);
    const second = await status(h, key);
    expect(second.body).toMatchObject({ endpoint_percentiles_available: true, request_metrics: { total_requests: 1, error_requests: 0 } });
  });

  test("webhook delivery health counts real deliveries; a dead letter in the last hour makes it degraded", async () => {
    const ok = startReceiver({ status: 204 });
    const failing = startReceiver({ status: 500 });
    receivers.push(ok, failing);
    h = await openTestApp({ env: { WEBHOOK_ALLOW_PRIVATE_TARGETS: "1", WEBHOOK_MAX_ATTEMPTS: "1" } });
    const key = await createKey(h, { partner: "Acme" });
    const other = await createKey(h, { partner: "Other" });
    for (const [k, url] of [
      [key, ok.url()],
      [key, failing.url()],
      [other, failing.url()],
    ] as const) {
      const w = await signedJson(h, k, "POST", "/api/partner/webhooks", { body: { event_type: "webhook.test", target_url: url } });
      expect((await signedJson(h, k, "POST", `/api/partner/webhooks/${w.body.webhook.id}/test`)).status).toBe(200);
    }
    await h.ctx.dispatcher.runOnce();
    const r = await status(h, key);
    expect(r.body.webhook_delivery_health).toEqual({ dead_letter_events: 1, failed_events: 0, pending_events: 0, delivered_events: 1 });
    expect(r.body.overall_status).toBe("degraded");
    expect(r.body.status_reasons[0]).toContain("1 webhook deliveries dead-lettered");
    expect(r.body.delivery_slo_controls.max_attempts).toBe(1);

    h.clock.advanceSeconds(3601);
    const later = await status(h, key);
    expect(later.body.overall_status).toBe("ok");
    expect(later.body.webhook_delivery_health.dead_letter_events).toBe(1);
  });

  test("unsigned 401; any key may call it, a sandbox key too (key_mode sandbox)", async () => {
    h = await openTestApp();
    expect((await h.json("/api/partner/status")).status).toBe(401);
    const sandboxKey = await createKey(h, { mode: "sandbox" });
    const sandbox = await status(h, sandboxKey);
    expect(sandbox.status).toBe(200);
    expect(sandbox.body).toMatchObject({ key_id: sandboxKey.keyId, key_mode: "sandbox" });
    expect((await status(h, await createKey(h, { scopes: ["webhooks"] }))).status).toBe(200);
    expect((await signedJson(h, await createKey(h), "GET", "/api/partner/status?include_meta=1")).body.meta).toBeDefined();
  });
});
