// Spec conformance: partner webhooks, deliveries, dead letters and replay against the service interface.
import { afterEach, expect, test } from "bun:test";
import { createHmac } from "node:crypto";
import { openTestApp, type TestApp } from "../support/app";
import { createAdminToken, createKey, signedJson } from "../support/partner";
import { startReceiver } from "../support/receiver";

let h: TestApp;
let rx: ReturnType<typeof startReceiver> | undefined;
afterEach(async () => {
  rx?.stop();
  rx = undefined;
  await h?.close();
});
const ENV = { WEBHOOK_ALLOW_PRIVATE_TARGETS: "1", WEBHOOK_TIMEOUT_SECONDS: "1", WEBHOOK_MAX_ATTEMPTS: "2" };

test("webhook CRUD shapes: secret on create, is_active boolean on create and 0/1 in lists, delete and test answers", async () => {
  h = await openTestApp();
  const k = await createKey(h);
  const c = await signedJson(h, k, "POST", "/api/partner/webhooks", { body: { event_type: "salutes.credit", target_url: "https://example.com/h" } });
  expect(c.status).toBe(201);
  expect(c.body.webhook).toMatchObject({ event_type: "salutes.credit", target_url: "https://example.com/h", is_active: true });
  expect(typeof c.body.webhook.secret).toBe("string");
  const list = (await signedJson(h, k, "GET", "/api/partner/webhooks?event_type=salutes.credit&is_active=1")).body;
  expect(list.webhooks[0].is_active).toBe(1);
  expect(list.webhooks[0].secret).toBeUndefined();
  expect(list.query).toMatchObject({ limit: 50, offset: 0, cursor: null, event_type: "salutes.credit" });
  const t = (await signedJson(h, k, "POST", `/api/partner/webhooks/${c.body.webhook.id}/test`)).body;
  expect(t).toMatchObject({ success: true, queued: true, webhook_id: c.body.webhook.id });
  expect(t.event_id).toMatch(/^evt_/);
  const d = (await signedJson(h, k, "DELETE", `/api/partner/webhooks/${c.body.webhook.id}`)).body;
  expect(d).toMatchObject({ success: true, deleted: true, webhook_id: c.body.webhook.id });
});

test("a delivery: envelope {event_id, event_type, data}, X-Webhook-* headers, signature over timestamp + '.' + raw body", async () => {
  h = await openTestApp({ env: ENV });
  rx = startReceiver();
  const k = await createKey(h);
  const w = (await signedJson(h, k, "POST", "/api/partner/webhooks", { body: { event_type: "salutes.credit", target_url: rx.url() } })).body.webhook;
  const u = (await signedJson(h, k, "POST", "/api/partner/users", { body: { external_id: "x1", username: "xuser", display_name: "X" } })).body.user;
  await signedJson(h, k, "POST", "/api/salutes/credit", { body: { user_id: String(u.id), amount: 2, reason: "r", source: "s" } });
  await h.ctx.dispatcher.runOnce();
  const got = rx.received[0]!;
  const env = JSON.parse(got.rawBody);
  expect(Object.keys(env)).toEqual(expect.arrayContaining(["event_id", "event_type", "data"]));
  expect(env.event_type).toBe("salutes.credit");
  expect(got.headers["x-webhook-id"]).toBe(env.event_id);
  expect(got.headers["x-webhook-event"]).toBe("salutes.credit");
  const expected = createHmac("sha256", w.secret).update(`${got.headers["x-webhook-timestamp"]}.${got.rawBody}`).digest("hex");
  expect(got.headers["x-webhook-signature"]).toBe(expected);
  const v = (
    await signedJson(h, k, "POST", "/api/partner/webhooks/signature/verify", {
      body: { signature: expected, timestamp: got.headers["x-webhook-timestamp"], payload: got.rawBody, secret: w.secret },
    })
  ).body;
  expect(v).toMatchObject({ success: true, valid: true, provided_signature: expected, expected_signature: expected });
  expect(Object.keys(v)).toEqual(expect.arrayContaining(["timestamp", "canonical_body", "validator_example"]));
});

test("retries re-sign with a fresh timestamp and the same X-Webhook-Id; dead letter, summary, filters, replay", async () => {
  h = await openTestApp({ env: ENV });
  rx = startReceiver();
  const k = await createKey(h);
  await signedJson(h, k, "POST", "/api/partner/webhooks", { body: { event_type: "salutes.credit", target_url: rx.url() } });
  const u = (await signedJson(h, k, "POST", "/api/partner/users", { body: { external_id: "x1", username: "xuser", display_name: "X" } })).body.user;
  await signedJson(h, k, "POST", "/api/salutes/credit", { body: { user_id: String(u.id), amount: 2, reason: "r", source: "s" } });
  rx.then({ status: 500 }, { status: 500 });
  await h.ctx.dispatcher.runOnce();
  const first = (await signedJson(h, k, "GET", "/api/partner/webhook-events?status=failed")).body.events[0];
  expect(first).toMatchObject({ status: "failed", attempts: 1, is_dead_letter: false, reason_tag: "http_error" });
  h.clock.advanceSeconds(36_000);
  await h.ctx.dispatcher.runOnce();
  const [a1, a2] = rx.received;
  expect(a2!.headers["x-webhook-id"]).toBe(a1!.headers["x-webhook-id"]);
  expect(Number(a2!.headers["x-webhook-timestamp"]) - Number(a1!.headers["x-webhook-timestamp"])).toBe(36_000);

  const dl = (await signedJson(h, k, "GET", "/api/partner/webhook-events?status=dead_letter")).body.events;
  expect(dl).toHaveLength(1);
  expect(dl[0]).toMatchObject({ status: "failed", attempts: 2, is_dead_letter: true, last_error: expect.any(String), delivered_at: null });
  const sum = (await signedJson(h, k, "GET", "/api/partner/webhooks/dlq?hours=48")).body;
  expect(sum).toMatchObject({ window_hours: 48, dead_letter_count: 1, max_attempts: 2 });
  expect(sum.by_event_type).toEqual([{ event_type: "salutes.credit", count: 1 }]);
  expect(sum.by_reason_tag).toEqual([{ reason_tag: "http_error", count: 1 }]);
  expect(Object.keys(sum.events[0])).toEqual(
    expect.arrayContaining(["event_id", "webhook_id", "event_type", "target_url", "attempts", "reason_tag", "last_error", "created_at", "updated_at"]),
  );

  // Replay: Idempotency-Key required; the result has counts, reason_tag, note and per-event results with not_found.
  const noKey = await signedJson(h, k, "POST", "/api/partner/webhook-events/replay", { body: { event_ids: [dl[0].id] }, idempotencyKey: null });
  expect(noKey.status).toBe(400);
  const rp = (
    await signedJson(h, k, "POST", "/api/partner/webhook-events/replay", {
      body: { event_ids: [dl[0].id, 999_999], reason_tag: "receiver_fix", note: "fixed" },
    })
  ).body;
  expect(rp).toMatchObject({ success: true, count: 2, replayed_count: 1, failed_count: 1, reason_tag: "receiver_fix", note: "fixed" });
  expect(rp.results[0]).toMatchObject({ event_id: dl[0].id, replayed: true, error: null, reason_tag: "receiver_fix" });
  expect(rp.results[1]).toMatchObject({ event_id: 999_999, replayed: false, error: "not_found" });
  await h.ctx.dispatcher.runOnce();
  expect((await signedJson(h, k, "GET", "/api/partner/webhook-events?reason_tag=receiver_fix")).body.events[0].status).toBe("succeeded");

  // Another partner cannot replay it; the operator route answers success, event_id, requeued.
  const other = await createKey(h, { partner: "Other" });
  const foreign = (await signedJson(h, other, "POST", "/api/partner/webhook-events/replay", { body: { event_ids: [dl[0].id] } })).body;
  expect(foreign.results[0]).toMatchObject({ replayed: false, error: "not_found" });
  const admin = await createAdminToken(h);
  const op = await h.json(`/admin/partners/webhook-events/${dl[0].id}/replay`, { method: "POST", headers: { authorization: `Bearer ${admin}` } });
  expect(op.body.success).toBe(true);
  expect("event_id" in op.body && "requeued" in op.body).toBe(true);
});
