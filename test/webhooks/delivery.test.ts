import { afterEach, describe, expect, test } from "bun:test";
import { createHmac } from "node:crypto";
import { emitEvent } from "../../src/webhooks/outbox";
import { openTestApp, type TestApp } from "../support/app";
import { createKey, signedJson, type TestKey } from "../support/partner";
import { startReceiver, type Receiver } from "../support/receiver";

let h: TestApp;
let rx: Receiver;
afterEach(async () => {
  rx?.stop();
  await h?.close();
});

const ENV = {
  WEBHOOK_ALLOW_PRIVATE_TARGETS: "1",
  WEBHOOK_TIMEOUT_SECONDS: "1",
  WEBHOOK_MAX_ATTEMPTS: "4",
  WEBHOOK_RETRY_BASE_SECONDS: "60",
  WEBHOOK_RETRY_MAX_SECONDS: "600",
  WEBHOOK_RETRY_JITTER_PCT: "0",
};

async function setup(env: Record<string, string> = {}) {
  h = await openTestApp({ env: { ...ENV, ...env } });
  rx = startReceiver();
  const key = await createKey(h);
  const created = await signedJson(h, key, "POST", "/api/partner/webhooks", { body: { event_type: "webhook.test", target_url: rx.url() } });
  expect(created.status).toBe(201);
  return { key, webhook: created.body.webhook as { id: number; secret: string } };
}

const test_ = async (key: TestKey, id: number) => {
  const r = await signedJson(h, key, "POST", `/api/partner/webhooks/${id}/test`);
  expect(r.status).toBe(200);
  return r.body as { event_id: string; delivery_id: number };
};

const delivery = async (id: number) =>
  (await h.ctx.store.get<any>("SELECT status, attempts, next_attempt_at, reason_tag, last_status_code, last_error FROM webhook_deliveries WHERE id = ?", [
    id,
  ]))!;
const attempts = (id: number) =>
  h.ctx.store.all<any>("SELECT attempt_no, status_code, reason_tag, response_excerpt FROM webhook_attempts WHERE delivery_id = ? ORDER BY id", [id]);

describe("event ids", () => {
  // evt_ + the event's time in ms (12 hex digits) + 48 random bits: ids made one after another sort together, so
  // each lands on the last page of events_public_id_idx (src/webhooks/outbox.ts, eventPublicId).
  test("an id names its event's time and sorts after the ids made before it; same-instant ids differ", async () => {
    const { key, webhook } = await setup();
    const made: string[] = [];
    for (let i = 0; i < 3; i++) {
      made.push((await test_(key, webhook.id)).event_id);
      made.push((await test_(key, webhook.id)).event_id);
      h.clock.advanceSeconds(1);
    }
    for (const id of made) expect(id).toMatch(/^evt_[0-9a-f]{24}$/);
    expect(new Set(made).size).toBe(6);
    const rows = await h.ctx.store.all<{ public_id: string; created_at: string }>("SELECT public_id, created_at FROM events ORDER BY id");
    expect(rows.map((r) => r.public_id)).toEqual(made);
    for (const r of rows) expect(Number.parseInt(r.public_id.slice(4, 16), 16)).toBe(Date.parse(r.created_at));
    expect(made.filter((_, i) => i % 2 === 1).every((id, i) => id.slice(0, 16) === made[2 * i]!.slice(0, 16))).toBe(true);
    expect([...made].sort((a, b) => a.slice(0, 16).localeCompare(b.slice(0, 16)))).toEqual(made);
  });
});

describe("the outbox's fan-out", () => {
  // Each engine has its plan (SQLite reads for a subscriber first; PostgreSQL fans out in one statement): the same
  // deliveries either way, exactly one per active, undeleted webhook of this owner subscribed to the event type.
  test("an event reaches exactly its owner's active subscribers of its type, and no one when none subscribes", async () => {
    h = await openTestApp({ env: ENV });
    const now = h.clock.now().toISOString();
    const hook = (partner: string, mode: string, type: string, active: number, deleted: string | null) =>
      h.ctx.store.get<{ id: number }>(
        "INSERT INTO webhooks (partner, mode, event_type, target_url, description, secret_ciphertext, is_active, deleted_at, created_at, updated_at) VALUES (?, ?, ?, 'https://hooks.example.com/x', NULL, '', ?, ?, ?, ?) RETURNING id",
        [partner, mode, type, active, deleted, now, now],
      );
    const emit = (type: "salutes.credit" | "salutes.debit") =>
      h.ctx.store.tx((t) => emitEvent(t, h.ctx, { partner: "Acme", mode: "live" }, type, { user_id: "1" }));
    const none = await emit("salutes.credit");
    expect(none.deliveryIds).toEqual([]);
    const wanted = (await hook("Acme", "live", "salutes.credit", 1, null))!.id;
    await hook("Acme", "live", "salutes.credit", 0, null);
    await hook("Acme", "live", "salutes.credit", 1, now);
    await hook("Acme", "live", "salutes.debit", 1, null);
    await hook("Acme", "sandbox", "salutes.credit", 1, null);
    await hook("Other", "live", "salutes.credit", 1, null);
    const one = await emit("salutes.credit");
    const rows = await h.ctx.store.all<{ id: number; event_id: number; webhook_id: number }>(
      "SELECT id, event_id, webhook_id FROM webhook_deliveries ORDER BY id",
    );
    expect(rows).toEqual([{ id: one.deliveryIds[0]!, event_id: one.id, webhook_id: wanted }]);
    expect((await emit("salutes.debit")).deliveryIds).toHaveLength(1);
    expect(await h.ctx.store.get("SELECT count(*) AS n FROM webhook_deliveries WHERE event_id = ?", [none.id])).toEqual({ n: 0 });
  });
});

describe("signed delivery", () => {
  test("the signature verifies byte for byte with an independent HMAC over the raw body", async () => {
    const { key, webhook } = await setup();
    const t = await test_(key, webhook.id);
    await h.ctx.dispatcher.runOnce();
    expect(rx.received).toHaveLength(1);
    const got = rx.received[0]!;
    expect(got.headers["x-webhook-id"]).toBe(t.event_id);
    expect(got.headers["x-webhook-event"]).toBe("webhook.test");
    expect(got.headers["x-webhook-timestamp"]).toBe(String(Date.parse("2026-01-01T00:00:00Z") / 1000));
    const expected = createHmac("sha256", webhook.secret).update(`${got.headers["x-webhook-timestamp"]}.${got.rawBody}`).digest("hex");
    expect(got.headers["x-webhook-signature"]).toBe(expected);
    const envelope = JSON.parse(got.rawBody);
    expect(envelope).toMatchObject({ event_id: t.event_id, event_type: "webhook.test", data: { webhook_id: webhook.id } });
    expect(Object.keys(envelope)).toEqual(["event_id", "event_type", "data"]);
    expect(await delivery(t.delivery_id)).toMatchObject({ status: "succeeded", attempts: 1, last_status_code: 204 });
  });

  test("500 n times then 200: succeeded after n+1 attempts, on the backoff schedule, same event id each time", async () => {
    const { key, webhook } = await setup();
    rx.then({ status: 500, body: "boom" }, { status: 502 }, { status: 200 });
    const t = await test_(key, webhook.id);
    await h.ctx.dispatcher.runOnce();
    expect(await delivery(t.delivery_id)).toMatchObject({
      status: "failed",
      attempts: 1,
      reason_tag: "http_error",
      next_attempt_at: "2026-01-01T00:01:00.000Z",
    });
    // Not due yet: nothing is sent.
    h.clock.advanceSeconds(59);
    await h.ctx.dispatcher.runOnce();
    expect(rx.received).toHaveLength(1);
    h.clock.advanceSeconds(1);
    await h.ctx.dispatcher.runOnce();
    expect(await delivery(t.delivery_id)).toMatchObject({ status: "failed", attempts: 2, next_attempt_at: "2026-01-01T00:03:00.000Z" }); // +120 s
    h.clock.advanceSeconds(120);
    await h.ctx.dispatcher.runOnce();
    expect(await delivery(t.delivery_id)).toMatchObject({ status: "succeeded", attempts: 3, reason_tag: null });
    expect(rx.received.map((r) => r.headers["x-webhook-id"])).toEqual([t.event_id, t.event_id, t.event_id]);
    expect((await attempts(t.delivery_id)).map((a) => a.status_code)).toEqual([500, 502, 200]);
    expect((await attempts(t.delivery_id))[0].response_excerpt).toBe("boom");
  });

  test("a receiver's Retry-After is honoured within the cap", async () => {
    const { key, webhook } = await setup();
    rx.then({ status: 503, headers: { "retry-after": "300" } }, { status: 429, headers: { "retry-after": "99999" } });
    const t = await test_(key, webhook.id);
    await h.ctx.dispatcher.runOnce();
    expect((await delivery(t.delivery_id)).next_attempt_at).toBe("2026-01-01T00:05:00.000Z");
    h.clock.advanceSeconds(300);
    await h.ctx.dispatcher.runOnce();
    expect((await delivery(t.delivery_id)).next_attempt_at).toBe("2026-01-01T00:15:00.000Z"); // capped at 600 s
  });

  test("timeouts, slow bodies and refused connections are retried with their reason", async () => {
    const { key, webhook } = await setup();
    rx.then({ hang: true }, { slowBody: true });
    const t = await test_(key, webhook.id);
    await h.ctx.dispatcher.runOnce();
    expect(await delivery(t.delivery_id)).toMatchObject({ status: "failed", reason_tag: "timeout" });
    h.clock.advanceSeconds(60);
    await h.ctx.dispatcher.runOnce();
    expect(await delivery(t.delivery_id)).toMatchObject({ status: "failed", reason_tag: "timeout", attempts: 2 });
    rx.stop();
    h.clock.advanceSeconds(120);
    await h.ctx.dispatcher.runOnce();
    expect(await delivery(t.delivery_id)).toMatchObject({ status: "failed", reason_tag: "connection_error", attempts: 3 });
  });

  test("redirects are not followed", async () => {
    const { key, webhook } = await setup();
    rx.then({ status: 302, headers: { location: rx.url("/elsewhere") } });
    const t = await test_(key, webhook.id);
    await h.ctx.dispatcher.runOnce();
    expect(rx.received.map((r) => r.path)).toEqual(["/hook"]);
    expect(await delivery(t.delivery_id)).toMatchObject({ status: "failed", last_status_code: 302, reason_tag: "http_error" });
    expect((await delivery(t.delivery_id)).last_error).toContain("redirects are not followed");
  });

  test("after max attempts: dead letter, in the DLQ summary and the events list, and webhook.delivery_failed to the partner's other receivers", async () => {
    const { key, webhook } = await setup();
    const watcher = startReceiver();
    try {
      const w2 = await signedJson(h, key, "POST", "/api/partner/webhooks", { body: { event_type: "webhook.delivery_failed", target_url: watcher.url() } });
      rx.then({ status: 500 }, { status: 500 }, { status: 500 }, { status: 500 });
      const t = await test_(key, webhook.id);
      for (let i = 0; i < 4; i++) {
        await h.ctx.dispatcher.runOnce();
        h.clock.advanceSeconds(600);
      }
      expect(await delivery(t.delivery_id)).toMatchObject({ status: "dead_letter", attempts: 4 });
      await h.ctx.dispatcher.runOnce();
      expect(watcher.received).toHaveLength(1);
      const note = JSON.parse(watcher.received[0]!.rawBody);
      expect(note).toMatchObject({
        event_type: "webhook.delivery_failed",
        data: { delivery_id: t.delivery_id, event_id: t.event_id, webhook_id: webhook.id, reason_tag: "http_error" },
      });
      expect(w2.status).toBe(201);

      const dlq = await signedJson(h, key, "GET", "/api/partner/webhooks/dlq?hours=24");
      expect(dlq.body).toMatchObject({
        window_hours: 24,
        dead_letter_count: 1,
        max_attempts: 4,
        by_event_type: [{ event_type: "webhook.test", count: 1 }],
        by_reason_tag: [{ reason_tag: "http_error", count: 1 }],
      });
      expect(dlq.body.events[0]).toMatchObject({ event_id: t.delivery_id, webhook_id: webhook.id, attempts: 4 });
      const list = await signedJson(h, key, "GET", "/api/partner/webhook-events?status=dead_letter");
      expect(list.body.count).toBe(1);
      // The record model's dead letter: status failed, is_dead_letter true; `failed` lists it too, and a
      // delivery still retrying is failed with is_dead_letter false.
      expect(list.body.events[0]).toMatchObject({ id: t.delivery_id, is_dead_letter: true, status: "failed" });
      rx.then({ status: 500 });
      const retrying = await test_(key, webhook.id);
      await h.ctx.dispatcher.runOnce();
      expect(await delivery(retrying.delivery_id)).toMatchObject({ status: "failed", attempts: 1 });
      const failed = await signedJson(h, key, "GET", "/api/partner/webhook-events?status=failed");
      expect(failed.body.events.map((e: { id: number; status: string; is_dead_letter: boolean }) => [e.id, e.status, e.is_dead_letter])).toEqual([
        [retrying.delivery_id, "failed", false],
        [t.delivery_id, "failed", true],
      ]);
      expect((await signedJson(h, key, "GET", "/api/partner/webhook-events?status=dead_letter")).body.events.map((e: { id: number }) => e.id)).toEqual([
        t.delivery_id,
      ]);
    } finally {
      watcher.stop();
    }
  });

  test("replay of a dead letter delivers again with the same event id and the caller's reason_tag", async () => {
    const { key, webhook } = await setup({ WEBHOOK_MAX_ATTEMPTS: "1" });
    rx.then({ status: 500 });
    const t = await test_(key, webhook.id);
    await h.ctx.dispatcher.runOnce();
    expect((await delivery(t.delivery_id)).status).toBe("dead_letter");
    const replay = await signedJson(h, key, "POST", "/api/partner/webhook-events/replay", {
      body: { event_ids: [t.delivery_id, 999999], reason_tag: "receiver_fix", note: "fixed TLS" },
    });
    expect(replay.status).toBe(200);
    expect(replay.body).toMatchObject({
      count: 2,
      replayed_count: 1,
      failed_count: 1,
      reason_tag: "receiver_fix",
      results: [
        { event_id: t.delivery_id, replayed: true, error: null, reason_tag: "receiver_fix" },
        { event_id: 999999, replayed: false, error: "not_found", reason_tag: "receiver_fix" },
      ],
    });
    await h.ctx.dispatcher.runOnce();
    expect((await delivery(t.delivery_id)).status).toBe("succeeded");
    expect(rx.received.map((r) => r.headers["x-webhook-id"])).toEqual([t.event_id, t.event_id]);
    // A second replay with the same Idempotency-Key is an idempotent replay, not a second requeue.
  });

  test("replay by the evt_ event id the test route answers: each of the owner's deliveries of it, named as given", async () => {
    const { key, webhook } = await setup({ WEBHOOK_MAX_ATTEMPTS: "1" });
    rx.then({ status: 500 });
    const t = await test_(key, webhook.id);
    expect(t.event_id).toMatch(/^evt_[0-9a-f]{24}$/);
    await h.ctx.dispatcher.runOnce();
    const other = await createKey(h, { partner: "Other", scopes: ["webhooks"] });
    const unknown = `evt_${"0".repeat(24)}`;
    const replay = await signedJson(h, key, "POST", "/api/partner/webhook-events/replay", {
      body: { event_ids: [t.event_id, unknown], reason_tag: "receiver_fix" },
    });
    expect(replay.status).toBe(200);
    expect(replay.body).toMatchObject({
      count: 2,
      replayed_count: 1,
      results: [
        { event_id: t.event_id, delivery_id: t.delivery_id, replayed: true, error: null, reason_tag: "receiver_fix" },
        { event_id: unknown, delivery_id: null, replayed: false, error: "not_found" },
      ],
    });
    await h.ctx.dispatcher.runOnce();
    expect((await delivery(t.delivery_id)).status).toBe("succeeded");
    // Another partner's replay of the same event id finds nothing of its own: not_found, nothing requeued.
    const foreign = await signedJson(h, other, "POST", "/api/partner/webhook-events/replay", { body: { event_ids: [t.event_id] } });
    expect(foreign.body.results).toEqual([{ event_id: t.event_id, delivery_id: null, replayed: false, error: "not_found", reason_tag: "manual_replay" }]);
    expect((await delivery(t.delivery_id)).status).toBe("succeeded");
    // Anything else than an integer or an evt_ id is refused before any effect.
    const bad = await signedJson(h, key, "POST", "/api/partner/webhook-events/replay", { body: { event_ids: ["evt_nothex"] } });
    expect([bad.status, bad.body.error]).toEqual([400, "invalid_payload"]);
  });

  test("a 410 Gone dead-letters at once and disables the webhook", async () => {
    const { key, webhook } = await setup();
    rx.then({ status: 410 });
    const t = await test_(key, webhook.id);
    await h.ctx.dispatcher.runOnce();
    expect((await delivery(t.delivery_id)).status).toBe("dead_letter");
    const list = await signedJson(h, key, "GET", "/api/partner/webhooks");
    expect(list.body.webhooks[0]).toMatchObject({ id: webhook.id, is_active: 0, disabled_reason: "the receiver answered 410 Gone" });
    expect((await signedJson(h, key, "POST", `/api/partner/webhooks/${webhook.id}/test`)).status).toBe(409);
  });

  test("a webhook failing for WEBHOOK_DISABLE_AFTER_HOURS is disabled", async () => {
    const { key, webhook } = await setup({ WEBHOOK_DISABLE_AFTER_HOURS: "1", WEBHOOK_MAX_ATTEMPTS: "10" });
    rx.then(...Array.from({ length: 10 }, () => ({ status: 500 })));
    await test_(key, webhook.id);
    for (let i = 0; i < 3; i++) {
      await h.ctx.dispatcher.runOnce();
      h.clock.advanceSeconds(1800);
    }
    const row = await h.ctx.store.get("SELECT is_active, disabled_reason FROM webhooks WHERE id = ?", [webhook.id]);
    expect(row).toEqual({ is_active: 0, disabled_reason: "every delivery failed for 1 h" });
  });

  test("deleting a webhook cancels its pending deliveries", async () => {
    const { key, webhook } = await setup();
    rx.then({ status: 500 });
    const t = await test_(key, webhook.id);
    await h.ctx.dispatcher.runOnce();
    const del = await signedJson(h, key, "DELETE", `/api/partner/webhooks/${webhook.id}`);
    expect(del.body).toMatchObject({ deleted: true, webhook_id: webhook.id, cancelled_deliveries: 1 });
    h.clock.advanceSeconds(3600);
    await h.ctx.dispatcher.runOnce();
    expect(rx.received).toHaveLength(1);
    expect((await delivery(t.delivery_id)).status).toBe("cancelled");
    expect((await signedJson(h, key, "DELETE", `/api/partner/webhooks/${webhook.id}`)).status).toBe(404);
  });

  test("secret rotation: both signatures during the overlap", async () => {
    const { key, webhook } = await setup();
    const rotated = await signedJson(h, key, "POST", `/api/partner/webhooks/${webhook.id}/rotate-secret`, { body: { overlap_hours: 2 } });
    const secret2 = rotated.body.webhook.secret;
    await test_(key, webhook.id);
    await h.ctx.dispatcher.runOnce();
    const got = rx.received[0]!;
    const sig = (s: string) => createHmac("sha256", s).update(`${got.headers["x-webhook-timestamp"]}.${got.rawBody}`).digest("hex");
    expect(got.headers["x-webhook-signature"]).toBe(sig(secret2));
    expect(got.headers["x-webhook-signature-previous"]).toBe(sig(webhook.secret));
    h.clock.advanceSeconds(2 * 3600 + 1);
    await test_(key, webhook.id);
    await h.ctx.dispatcher.runOnce();
    expect(rx.received[1]!.headers["x-webhook-signature-previous"]).toBeUndefined();
  });

  test("recover replays failed deliveries of one webhook in a time range", async () => {
    const { key, webhook } = await setup({ WEBHOOK_MAX_ATTEMPTS: "1" });
    rx.then({ status: 500 }, { status: 500 });
    const a = await test_(key, webhook.id);
    const b = await test_(key, webhook.id);
    await h.ctx.dispatcher.runOnce();
    const r = await signedJson(h, key, "POST", `/api/partner/webhooks/${webhook.id}/recover`, {
      body: { since: "2025-12-31T00:00:00Z", reason_tag: "receiver_fix" },
    });
    expect(r.body).toMatchObject({ count: 2, replayed_count: 2, reason_tag: "receiver_fix" });
    await h.ctx.dispatcher.runOnce();
    expect((await delivery(a.delivery_id)).status).toBe("succeeded");
    expect((await delivery(b.delivery_id)).status).toBe("succeeded");
    const bad = await signedJson(h, key, "POST", `/api/partner/webhooks/${webhook.id}/recover`, { body: { since: "yesterday" } });
    expect(bad.status).toBe(400);
  });

  test("a delivery whose lease expired (a crashed sender) is sent again", async () => {
    const { key, webhook } = await setup();
    const t = await test_(key, webhook.id);
    await h.ctx.dispatcher.runOnce();
    expect(rx.received).toHaveLength(1);
    // Simulate a process that leased the delivery (again) and died before recording the outcome.
    await h.ctx.store.run("UPDATE webhook_deliveries SET status = 'processing', lease_token = 'dead', lease_until = '2026-01-01T00:00:12.000Z' WHERE id = ?", [
      t.delivery_id,
    ]);
    await h.ctx.dispatcher.runOnce();
    expect(rx.received).toHaveLength(1); // lease still held
    h.clock.advanceSeconds(13);
    await h.ctx.dispatcher.runOnce();
    expect(rx.received).toHaveLength(2);
    expect(rx.received[1]!.headers["x-webhook-id"]).toBe(t.event_id);
    expect((await delivery(t.delivery_id)).status).toBe("succeeded");
  });
});

describe("a backlog", () => {
  for (const concurrency of ["1", "3"]) {
    test(`drains whole in one pass with WEBHOOK_CONCURRENCY=${concurrency}: leases run ahead of the sends, each delivery sent once`, async () => {
      const { webhook } = await setup({ WEBHOOK_CONCURRENCY: concurrency });
      const N = 60;
      await h.ctx.store.tx(async (t) => {
        for (let i = 0; i < N; i++)
          await emitEvent(t, h.ctx, { partner: "Acme", mode: "live" }, "webhook.test", { webhook_id: webhook.id }, { webhookId: webhook.id });
      });
      let timer: ReturnType<typeof setTimeout> | undefined;
      const stalled = new Promise<string>((resolve) => (timer = setTimeout(() => resolve("stalled"), 20_000)));
      expect(await Promise.race([h.ctx.dispatcher.runOnce().then(() => "drained"), stalled])).toBe("drained");
      clearTimeout(timer);
      expect(rx.received).toHaveLength(N);
      expect(new Set(rx.received.map((r) => r.headers["x-webhook-id"])).size).toBe(N);
      const statuses = await h.ctx.store.all<{ status: string; n: number }>("SELECT status, COUNT(*) AS n FROM webhook_deliveries GROUP BY status");
      expect(statuses).toEqual([{ status: "succeeded", n: N }]);
    });
  }
});
