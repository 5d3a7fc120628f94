// Docs audit: the examples and tables of docs/webhooks.md against the real app.
import { afterEach, describe, expect, test } from "bun:test";
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
  h = undefined as unknown as TestApp;
});
const ENV = { WEBHOOK_ALLOW_PRIVATE_TARGETS: "1", WEBHOOK_TIMEOUT_SECONDS: "1", WEBHOOK_MAX_ATTEMPTS: "2" };

async function creditUser(k: Awaited<ReturnType<typeof createKey>>, amount = 12.5) {
  const u = (await signedJson(h, k, "POST", "/api/partner/users", { body: { external_id: "x1", username: "xuser", display_name: "X" } })).body.user;
  await signedJson(h, k, "POST", "/api/salutes/credit", { body: { user_id: String(u.id), amount, reason: "quest", source: "partner-app" } });
  return u;
}

describe("docs/webhooks.md", () => {
  // docs/webhooks.md:20-33, 37-60 — delivery headers (User-Agent, Standard Webhooks) and the envelope's data
  test("a delivery carries the documented headers, the evt_ id form and the salutes.credit data fields", async () => {
    h = await openTestApp({ env: ENV });
    rx = startReceiver();
    const k = await createKey(h);
    const w = (await signedJson(h, k, "POST", "/api/partner/webhooks", { body: { event_type: "salutes.credit", target_url: rx.url() } })).body.webhook;
    const u = await creditUser(k);
    await h.ctx.dispatcher.runOnce();
    const got = rx.received[0]!;
    const env = JSON.parse(got.rawBody);
    expect(env.event_id).toMatch(/^evt_[0-9a-f]{24}$/);
    expect(env.sandbox).toBeUndefined();
    expect(Object.keys(env.data).sort()).toEqual(["balance", "delta", "ledger_entry_id", "reason", "source", "user_id"]);
    expect(env.data).toMatchObject({ user_id: String(u.id), delta: 12.5, balance: 12.5, reason: "quest", source: "partner-app" });
    expect(got.headers["user-agent"]).toBe("Herald-Webhooks/1");
    expect(got.headers["content-type"]).toBe("application/json");
    expect(got.headers["webhook-id"]).toBe(env.event_id);
    expect(got.headers["webhook-timestamp"]).toBe(got.headers["x-webhook-timestamp"]);
    const std = createHmac("sha256", w.secret).update(`${env.event_id}.${got.headers["webhook-timestamp"]}.${got.rawBody}`).digest("base64");
    expect(got.headers["webhook-signature"]).toBe(`v1,${std}`);
  });

  // docs/webhooks.md:141-156 — event types list; GET /api/partner/webhooks/event-types is public
  test("event-types is public and lists the documented types", async () => {
    h = await openTestApp();
    const r = await h.json("/api/partner/webhooks/event-types");
    expect(r.status).toBe(200);
    const names = JSON.stringify(r.body);
    for (const t of [
      "salutes.credit",
      "salutes.debit",
      "donation.claim",
      "donation.claimed",
      "donation.claim_redeemed",
      "users.updated",
      "webhook.delivery_failed",
      "webhook.disabled",
      "webhook.test",
    ])
      expect(names).toContain(`"${t}"`);
    expect(r.headers.get("x-ratelimit-limit")).toBe("90");
  });

  // docs/webhooks.md:293-306 — create: 201, documented webhook fields, description ≤ 500, unknown fields refused
  test("create answers 201 with the documented webhook fields", async () => {
    h = await openTestApp();
    const k = await createKey(h);
    const c = await signedJson(h, k, "POST", "/api/partner/webhooks", {
      body: { event_type: "salutes.credit", target_url: "https://hooks.example.com/herald", description: "ledger sync" },
    });
    expect(c.status).toBe(201);
    expect(Object.keys(c.body.webhook).sort()).toEqual(
      [
        "id",
        "event_type",
        "target_url",
        "description",
        "is_active",
        "disabled_reason",
        "failing_since",
        "previous_secret_valid_until",
        "created_at",
        "updated_at",
        "secret",
      ].sort(),
    );
    expect(c.body.webhook).toMatchObject({
      is_active: true,
      disabled_reason: null,
      failing_since: null,
      previous_secret_valid_until: null,
      description: "ledger sync",
    });
    expect(c.body.webhook.secret).toMatch(/^whsec_/);
    const long = await signedJson(h, k, "POST", "/api/partner/webhooks", {
      body: { event_type: "salutes.credit", target_url: "https://hooks.example.com/h", description: "d".repeat(501) },
    });
    expect([long.status, long.body.error]).toEqual([400, "invalid_payload"]);
    const extra = await signedJson(h, k, "POST", "/api/partner/webhooks", {
      body: { event_type: "salutes.credit", target_url: "https://hooks.example.com/h", extra: 1 },
    });
    expect([extra.status, extra.body.error]).toEqual([400, "invalid_payload"]);
    const badType = await signedJson(h, k, "POST", "/api/partner/webhooks", { body: { event_type: "nope", target_url: "https://hooks.example.com/h" } });
    expect([badType.status, badType.body.error]).toEqual([400, "invalid_payload"]);
    const creds = await signedJson(h, k, "POST", "/api/partner/webhooks", {
      body: { event_type: "salutes.credit", target_url: "https://user:pass@hooks.example.com/h" },
    });
    expect([creds.status, creds.body.error]).toEqual([400, "invalid_payload"]);
    const local = await signedJson(h, k, "POST", "/api/partner/webhooks", { body: { event_type: "salutes.credit", target_url: "http://localhost./h" } });
    expect([local.status, local.body.error]).toEqual([400, "invalid_payload"]);
  });

  // docs/webhooks.md:310-314 — list: limit 1–200 default 50, offset > 10,000 → 400 offset_too_large
  test("list bounds", async () => {
    h = await openTestApp();
    const k = await createKey(h);
    expect((await signedJson(h, k, "GET", "/api/partner/webhooks")).body.query.limit).toBe(50);
    expect((await signedJson(h, k, "GET", "/api/partner/webhooks?limit=201")).status).toBe(400);
    expect((await signedJson(h, k, "GET", "/api/partner/webhooks?limit=200")).status).toBe(200);
    expect((await signedJson(h, k, "GET", "/api/partner/webhooks?offset=10000")).status).toBe(200);
    const deep = await signedJson(h, k, "GET", "/api/partner/webhooks?offset=10001");
    expect([deep.status, deep.body.error]).toEqual([400, "offset_too_large"]);
    const ev = await signedJson(h, k, "GET", "/api/partner/webhook-events?offset=10001");
    expect([ev.status, ev.body.error]).toEqual([400, "offset_too_large"]);
    expect((await signedJson(h, k, "GET", "/api/partner/webhook-events")).body.query.limit).toBe(50);
  });

  // docs/webhooks.md:322-326 and 338-341 — delete answer with cancelled_deliveries; test answer with event_type and delivery_id
  test("delete and test answer the documented fields; a retrying delivery is cancelled", async () => {
    h = await openTestApp({ env: { ...ENV, WEBHOOK_MAX_ATTEMPTS: "5" } });
    rx = startReceiver({ status: 500 });
    const k = await createKey(h);
    const w = (await signedJson(h, k, "POST", "/api/partner/webhooks", { body: { event_type: "salutes.credit", target_url: rx.url() } })).body.webhook;
    const t = await signedJson(h, k, "POST", `/api/partner/webhooks/${w.id}/test`);
    expect(t.body).toMatchObject({ success: true, queued: true, webhook_id: w.id, event_type: "webhook.test" });
    expect(typeof t.body.delivery_id).toBe("number");
    await h.ctx.dispatcher.runOnce();
    const before = (await signedJson(h, k, "GET", "/api/partner/webhook-events")).body.events[0];
    expect(before).toMatchObject({ status: "failed", is_dead_letter: false });
    const d = await signedJson(h, k, "DELETE", `/api/partner/webhooks/${w.id}`);
    expect(d.body).toEqual({ success: true, deleted: true, webhook_id: w.id, cancelled_deliveries: 1 });
    const after = (await signedJson(h, k, "GET", "/api/partner/webhook-events?status=cancelled")).body.events;
    expect(after.length).toBe(1);
    const again = await signedJson(h, k, "DELETE", `/api/partner/webhooks/${w.id}`);
    expect(again.status).toBe(404);
  });

  // docs/webhooks.md:345-352 — rotate-secret: overlap_hours 0–24 default 24; X-Webhook-Signature-Previous during overlap
  test("rotate-secret: default overlap 24 h and both signatures on deliveries", async () => {
    h = await openTestApp({ env: ENV });
    rx = startReceiver();
    const k = await createKey(h);
    const w = (await signedJson(h, k, "POST", "/api/partner/webhooks", { body: { event_type: "webhook.test", target_url: rx.url() } })).body.webhook;
    const r = await signedJson(h, k, "POST", `/api/partner/webhooks/${w.id}/rotate-secret`);
    expect(r.status).toBe(200);
    expect(r.body.webhook.secret).toMatch(/^whsec_/);
    expect(r.body.webhook.previous_secret_valid_until).toBe("2026-01-02T00:00:00.000Z");
    expect((await signedJson(h, k, "POST", `/api/partner/webhooks/${w.id}/rotate-secret`, { body: { overlap_hours: 25 } })).status).toBe(400);
    const w2 = (await signedJson(h, k, "POST", "/api/partner/webhooks", { body: { event_type: "webhook.test", target_url: rx.url("/two") } })).body.webhook;
    const r2 = await signedJson(h, k, "POST", `/api/partner/webhooks/${w2.id}/rotate-secret`, { body: { overlap_hours: 24 } });
    await signedJson(h, k, "POST", `/api/partner/webhooks/${w2.id}/test`);
    await h.ctx.dispatcher.runOnce();
    const got = rx.received.find((x) => x.path === "/two")!;
    const ts = got.headers["x-webhook-timestamp"];
    expect(got.headers["x-webhook-signature"]).toBe(createHmac("sha256", r2.body.webhook.secret).update(`${ts}.${got.rawBody}`).digest("hex"));
    expect(got.headers["x-webhook-signature-previous"]).toBe(createHmac("sha256", w2.secret).update(`${ts}.${got.rawBody}`).digest("hex"));
    expect(got.headers["webhook-signature"]!.split(" ").length).toBe(2);
    const z = await signedJson(h, k, "POST", `/api/partner/webhooks/${w.id}/rotate-secret`, { body: { overlap_hours: 0 } });
    expect(z.status).toBe(200);
  });

  // docs/webhooks.md:371-378 — recover: since required, reason_tag default recover
  test("recover requires since and tags with recover by default", async () => {
    h = await openTestApp({ env: ENV });
    rx = startReceiver({ status: 500 });
    const k = await createKey(h);
    const w = (await signedJson(h, k, "POST", "/api/partner/webhooks", { body: { event_type: "webhook.test", target_url: rx.url() } })).body.webhook;
    await signedJson(h, k, "POST", `/api/partner/webhooks/${w.id}/test`);
    await h.ctx.dispatcher.runOnce();
    const none = await signedJson(h, k, "POST", `/api/partner/webhooks/${w.id}/recover`, { body: {} });
    expect([none.status, none.body.error]).toEqual([400, "invalid_payload"]);
    h.clock.advanceSeconds(1);
    const r = await signedJson(h, k, "POST", `/api/partner/webhooks/${w.id}/recover`, { body: { since: "2025-12-31T00:00:00Z" } });
    expect(r.status).toBe(200);
    expect(r.body).toMatchObject({ success: true, reason_tag: "recover" });
    expect(typeof r.body.count).toBe("number");
  });

  // docs/webhooks.md:384-388 — dlq: hours 1–2160 default 24; events[].event_id is the delivery id, public_event_id the evt_ id
  test("dlq defaults and event ids", async () => {
    h = await openTestApp({ env: ENV });
    rx = startReceiver({ status: 500 });
    const k = await createKey(h);
    const w = (await signedJson(h, k, "POST", "/api/partner/webhooks", { body: { event_type: "webhook.test", target_url: rx.url() } })).body.webhook;
    const t = (await signedJson(h, k, "POST", `/api/partner/webhooks/${w.id}/test`)).body;
    await h.ctx.dispatcher.runOnce();
    h.clock.advanceSeconds(3600);
    await h.ctx.dispatcher.runOnce();
    const d = await signedJson(h, k, "GET", "/api/partner/webhooks/dlq");
    expect(d.status).toBe(200);
    expect(d.body).toMatchObject({ window_hours: 24, dead_letter_count: 1, max_attempts: 2 });
    expect(d.body.events[0]).toMatchObject({ event_id: t.delivery_id, public_event_id: t.event_id, reason_tag: "http_error" });
    expect((await signedJson(h, k, "GET", "/api/partner/webhooks/dlq?hours=2161")).status).toBe(400);
    expect((await signedJson(h, k, "GET", "/api/partner/webhooks/dlq?hours=2160")).status).toBe(200);
    const ev = await signedJson(h, k, "GET", "/api/partner/webhook-events?status=dead_letter");
    const rec = ev.body.events[0];
    for (const f of [
      "id",
      "event_id",
      "webhook_id",
      "event_type",
      "status",
      "attempts",
      "is_dead_letter",
      "reason_tag",
      "last_error",
      "last_status_code",
      "target_url",
      "created_at",
      "last_attempt_at",
      "next_attempt_at",
      "delivered_at",
      "replays",
    ])
      expect(Object.keys(rec)).toContain(f);
    expect(rec).toMatchObject({ status: "failed", is_dead_letter: true, attempts: 2, last_status_code: 500, replays: [] });
  });

  // docs/webhooks.md:448-470 — replay: mixed ids (delivery id, unknown id, evt_ id) answer per id with delivery_id
  test("replay reports each id as given with its delivery_id; history in replays; reason_tag filter", async () => {
    // The replay nudges the dispatcher: the receiver holds the replayed sends (within a 10 s timeout), so the
    // second replay finds them pending whether or not that pass has leased them yet.
    h = await openTestApp({ env: { ...ENV, WEBHOOK_TIMEOUT_SECONDS: "10" } });
    rx = startReceiver({ status: 500 });
    const k = await createKey(h);
    const w = (await signedJson(h, k, "POST", "/api/partner/webhooks", { body: { event_type: "webhook.test", target_url: rx.url() } })).body.webhook;
    const t1 = (await signedJson(h, k, "POST", `/api/partner/webhooks/${w.id}/test`)).body;
    const t2 = (await signedJson(h, k, "POST", `/api/partner/webhooks/${w.id}/test`)).body;
    await h.ctx.dispatcher.runOnce();
    h.clock.advanceSeconds(3600);
    await h.ctx.dispatcher.runOnce();
    rx.then({ hang: true }, { hang: true });
    const r = await signedJson(h, k, "POST", "/api/partner/webhook-events/replay", {
      body: { event_ids: [t1.delivery_id, 999999, t2.event_id], reason_tag: "receiver_fix", note: "fixed TLS" },
    });
    expect(r.status).toBe(200);
    expect(r.body).toMatchObject({ success: true, count: 3, replayed_count: 2, failed_count: 1, reason_tag: "receiver_fix", note: "fixed TLS" });
    expect(r.body.results).toEqual([
      { event_id: t1.delivery_id, delivery_id: t1.delivery_id, replayed: true, error: null, reason_tag: "receiver_fix" },
      { event_id: 999999, delivery_id: null, replayed: false, error: "not_found", reason_tag: "receiver_fix" },
      { event_id: t2.event_id, delivery_id: t2.delivery_id, replayed: true, error: null, reason_tag: "receiver_fix" },
    ]);
    const pending = await signedJson(h, k, "POST", "/api/partner/webhook-events/replay", { body: { event_ids: [t1.delivery_id] } });
    expect(pending.body.results[0]).toMatchObject({ replayed: false, error: "already_pending", reason_tag: "manual_replay" });
    const ev = await signedJson(h, k, "GET", "/api/partner/webhook-events?reason_tag=receiver_fix");
    expect(ev.body.events.length).toBe(2);
    expect(ev.body.events[0].replays[0]).toMatchObject({ reason_tag: "receiver_fix", note: "fixed TLS" });
    const noKey = await signedJson(h, k, "POST", "/api/partner/webhook-events/replay", { body: { event_ids: [t1.delivery_id] }, idempotencyKey: null });
    expect(noKey.status).toBe(400);
    const tooMany = await signedJson(h, k, "POST", "/api/partner/webhook-events/replay", { body: { event_ids: Array.from({ length: 101 }, (_, i) => i + 1) } });
    expect(tooMany.status).toBe(400);
  });

  // docs/webhooks.md:482-495 — signature/verify with the documented test vector
  test("signature/verify reproduces the documented vector", async () => {
    h = await openTestApp();
    const k = await createKey(h);
    const payload = '{"event_id":"evt_01","event_type":"salutes.credit","data":{"user_id":"42","delta":12.5}}';
    const v = await signedJson(h, k, "POST", "/api/partner/webhooks/signature/verify", {
      body: {
        signature: "63bbdaa4257d74150db2b2fd269934b1d09d24f4e4b7b4376bd9afcf17c97d81",
        timestamp: "1767225600",
        payload,
        secret: "whsec_test_0123456789",
      },
    });
    expect(v.status).toBe(200);
    expect(v.body).toMatchObject({
      valid: true,
      expected_signature: "63bbdaa4257d74150db2b2fd269934b1d09d24f4e4b7b4376bd9afcf17c97d81",
      canonical_body: `1767225600.${payload}`,
    });
    const obj = await signedJson(h, k, "POST", "/api/partner/webhooks/signature/verify", {
      body: { signature: "00", timestamp: "1767225600", payload: JSON.parse(payload), secret: "whsec_test_0123456789" },
    });
    expect(obj.status).toBe(200);
    expect(obj.body.payload_was_object).toBe(true);
  });

  // docs/webhooks.md:505-513 — operator replay by evt_ id: success, event_id, requeued, results
  test("operator replay by event id", async () => {
    h = await openTestApp({ env: ENV });
    rx = startReceiver({ status: 500 });
    const k = await createKey(h);
    const admin = await createAdminToken(h);
    const w = (await signedJson(h, k, "POST", "/api/partner/webhooks", { body: { event_type: "webhook.test", target_url: rx.url() } })).body.webhook;
    const t = (await signedJson(h, k, "POST", `/api/partner/webhooks/${w.id}/test`)).body;
    await h.ctx.dispatcher.runOnce();
    h.clock.advanceSeconds(3600);
    await h.ctx.dispatcher.runOnce();
    const r = await h.json(`/admin/partners/webhook-events/${t.event_id}/replay`, { method: "POST", headers: { authorization: `Bearer ${admin}` } });
    expect(r.status).toBe(200);
    expect(r.body).toMatchObject({ success: true, event_id: t.event_id, requeued: 1 });
    expect(r.body.results[0]).toMatchObject({ event_id: t.delivery_id, replayed: true, error: null, reason_tag: "operator_replay" });
    const nf = await h.json("/admin/partners/webhook-events/evt_000000000000000000000000/replay", {
      method: "POST",
      headers: { authorization: `Bearer ${admin}` },
    });
    expect(nf.status).toBe(404);
  });

  // docs/webhooks.md:204-206 — a 410 dead-letters at once and disables the webhook; test on a disabled webhook → 409 conflict (:341)
  test("410 Gone disables the webhook; test on it is 409 conflict", async () => {
    h = await openTestApp({ env: { ...ENV, WEBHOOK_MAX_ATTEMPTS: "5" } });
    rx = startReceiver({ status: 410 });
    const k = await createKey(h);
    const w = (await signedJson(h, k, "POST", "/api/partner/webhooks", { body: { event_type: "webhook.test", target_url: rx.url() } })).body.webhook;
    await signedJson(h, k, "POST", `/api/partner/webhooks/${w.id}/test`);
    await h.ctx.dispatcher.runOnce();
    const ev = await signedJson(h, k, "GET", "/api/partner/webhook-events");
    expect(ev.body.events[0]).toMatchObject({ status: "failed", is_dead_letter: true, attempts: 1 });
    const list = await signedJson(h, k, "GET", "/api/partner/webhooks");
    expect(list.body.webhooks[0]).toMatchObject({ is_active: 0, disabled_reason: "the receiver answered 410 Gone" });
    const t = await signedJson(h, k, "POST", `/api/partner/webhooks/${w.id}/test`);
    expect([t.status, t.body.error]).toEqual([409, "conflict"]);
  });
});
