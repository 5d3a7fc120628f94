import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { createHmac } from "node:crypto";
import { signedJson } from "../support/partner";
import { type Received, type Receiver, startReceiver } from "../support/receiver";
import { TARGET } from "../support/target";
import { eventually, expectRefusal, row, startE2E, type E2E } from "./support";

// Webhooks end to end (docs/webhooks.md): register webhooks aimed at real receivers on 127.0.0.1, cause events,
// and check what the receivers got — signed per docs/design.md §6 — then the dead-letter queue and a replay.
//
// How delivery happens in a served process: every producer commits its event, then nudges the dispatcher
// (src/webhooks/dispatcher.ts, created for every context in src/bootstrap.ts), which sends at once in that
// process. The `webhook-dispatch` Croner job only picks up retries that fall due later, so the target's default
// JOBS_ENABLED=0 is enough here; WEBHOOK_ALLOW_PRIVATE_TARGETS=1 lets a webhook aim at 127.0.0.1, and
// WEBHOOK_MAX_ATTEMPTS=1 dead-letters a failed delivery at once, with no retry to wait for.

let e: E2E;
let rx: Receiver;
let flaky: Receiver;
beforeAll(async () => {
  e = await startE2E({ WEBHOOK_ALLOW_PRIVATE_TARGETS: "1", WEBHOOK_MAX_ATTEMPTS: "1", WEBHOOK_TIMEOUT_SECONDS: "5" });
  rx = startReceiver({ status: 204 });
  flaky = startReceiver({ status: 204 });
});
afterAll(async () => {
  rx?.stop();
  flaky?.stop();
  await e?.stop();
});

interface Hook {
  id: number;
  secret: string;
}
async function register(eventType: string, url: string): Promise<Hook> {
  const r = await signedJson(e.h, e.live, "POST", "/api/partner/webhooks", { body: { event_type: eventType, target_url: url, description: "e2e" } });
  expect(r.status).toBe(201);
  expect(r.body.webhook).toMatchObject({ event_type: eventType, target_url: url, is_active: true });
  expect(r.body.webhook.secret).toMatch(/^whsec_/);
  return r.body.webhook;
}

/** What a receiver does: the raw body under the secret, with the timestamp header, is the signature. */
function expectSigned(got: Received, secret: string) {
  const ts = got.headers["x-webhook-timestamp"]!;
  expect(ts).toMatch(/^\d+$/);
  // Within the ±300 s a receiver allows, against the target's clock (the wall clock when served).
  expect(Math.abs(Number(ts) - Math.floor(e.h.clock.now().getTime() / 1000))).toBeLessThanOrEqual(300);
  expect(got.headers["x-webhook-signature"]).toBe(createHmac("sha256", secret).update(`${ts}.${got.rawBody}`).digest("hex"));
  // The Standard Webhooks headers, with the same secret as raw key bytes.
  const id = got.headers["webhook-id"]!;
  expect(id).toBe(got.headers["x-webhook-id"]!);
  expect(got.headers["webhook-signature"]).toBe(`v1,${createHmac("sha256", secret).update(`${id}.${ts}.${got.rawBody}`).digest("base64")}`);
  expect(got.headers["content-type"]).toContain("application/json");
  const envelope = JSON.parse(got.rawBody);
  expect(envelope.event_id).toBe(got.headers["x-webhook-id"]!);
  expect(envelope.event_type).toBe(got.headers["x-webhook-event"]!);
  return envelope;
}

const receivedAt = (r: Receiver, path: string, n = 1) =>
  eventually(`${n} deliveries at ${path}`, () =>
    r.received.filter((x) => x.path === path).length >= n ? r.received.filter((x) => x.path === path) : undefined,
  );
const deliveryStatus = (id: number) =>
  row<{ status: string; attempts: number; last_status_code: number | null }>(
    e.h,
    "SELECT status, attempts, last_status_code FROM webhook_deliveries WHERE id = ?",
    id,
  );

describe(`webhooks over HTTP (${TARGET.label})`, () => {
  let userId: string;
  let creditHook: Hook;
  let flakyHook: Hook;
  let failedHook: Hook;

  test("the event types are public; an unknown event type is refused", async () => {
    const types = await e.h.json("/api/partner/webhooks/event-types");
    expect(types.status).toBe(200);
    expect(types.body.event_types.map((t: { event_type?: string; name?: string }) => t.event_type ?? t.name)).toEqual(
      expect.arrayContaining(["salutes.credit", "webhook.test", "webhook.delivery_failed"]),
    );
    const bad = await signedJson(e.h, e.live, "POST", "/api/partner/webhooks", { body: { event_type: "no.such_type", target_url: rx.url() } });
    expectRefusal(bad, 400, "invalid_payload");
  });

  test("a credit reaches the receiver once, signed, with the ledger entry in its data", async () => {
    creditHook = await register("salutes.credit", rx.url("/credit"));
    failedHook = await register("webhook.delivery_failed", rx.url("/failed"));
    userId = String((await signedJson(e.h, e.live, "POST", "/api/partner/users", { body: { external_id: "e2e-hooks" } })).body.user.id);
    const credit = await signedJson(e.h, e.live, "POST", "/api/salutes/credit", { body: { user_id: userId, amount: 12.5, reason: "quest", source: "e2e" } });
    expect(credit.status).toBe(200);

    const [got] = await receivedAt(rx, "/credit");
    expect(got!.method).toBe("POST");
    expect(got!.headers["user-agent"]).toBe("Herald-Webhooks/1");
    const envelope = expectSigned(got!, creditHook.secret);
    expect(envelope).toEqual({
      event_id: expect.stringMatching(/^evt_[0-9a-f]{24}$/),
      event_type: "salutes.credit",
      data: { user_id: userId, delta: 12.5, balance: 12.5, ledger_entry_id: credit.body.ledger_entry_id, reason: "quest", source: "e2e" },
    });
    const d = await row<{ id: number }>(
      e.h,
      "SELECT d.id FROM webhook_deliveries d JOIN events ev ON ev.id = d.event_id WHERE ev.public_id = ?",
      envelope.event_id,
    );
    await eventually("the delivery recorded as succeeded", async () => ((await deliveryStatus(d.id)).status === "succeeded" ? true : undefined));
    expect(await deliveryStatus(d.id)).toEqual({ status: "succeeded", attempts: 1, last_status_code: 204 });
  });

  test("POST …/test queues a real signed webhook.test delivery to that webhook only", async () => {
    const testHook = await register("webhook.test", rx.url("/test"));
    const t = await signedJson(e.h, e.live, "POST", `/api/partner/webhooks/${testHook.id}/test`);
    expect(t.status).toBe(200);
    expect(t.body).toMatchObject({ queued: true, webhook_id: testHook.id, event_type: "webhook.test" });
    expect(t.body.event_id).toMatch(/^evt_[0-9a-f]{24}$/);
    const [got] = await receivedAt(rx, "/test");
    expect(got!.headers["x-webhook-id"]).toBe(t.body.event_id);
    expect(expectSigned(got!, testHook.secret).data).toMatchObject({ webhook_id: testHook.id, message: expect.any(String) });
    expectRefusal(await signedJson(e.h, e.live, "POST", "/api/partner/webhooks/999999/test"), 404, "not_found");
  });

  test("a failed delivery is dead-lettered, listed in the DLQ, announced by webhook.delivery_failed, and replays with the same event id", async () => {
    flakyHook = await register("salutes.credit", flaky.url("/flaky"));
    flaky.then({ status: 500, body: "receiver down" });
    const credit = await signedJson(e.h, e.live, "POST", "/api/salutes/credit", { body: { user_id: userId, amount: 1, reason: "quest", source: "e2e" } });
    expect(credit.status).toBe(200);

    const [first] = await receivedAt(flaky, "/flaky");
    const eventId = expectSigned(first!, flakyHook.secret).event_id as string;
    const deliveryId = (
      await row<{ id: number }>(
        e.h,
        "SELECT d.id FROM webhook_deliveries d JOIN events ev ON ev.id = d.event_id WHERE ev.public_id = ? AND d.webhook_id = ?",
        eventId,
        flakyHook.id,
      )
    ).id;
    await eventually("the dead letter", async () => ((await deliveryStatus(deliveryId)).status === "dead_letter" ? true : undefined));
    expect(await deliveryStatus(deliveryId)).toEqual({ status: "dead_letter", attempts: 1, last_status_code: 500 });

    const dlq = await signedJson(e.h, e.live, "GET", "/api/partner/webhooks/dlq?hours=24");
    expect(dlq.status).toBe(200);
    expect(dlq.body).toMatchObject({ dead_letter_count: 1, max_attempts: 1 });
    expect(dlq.body.events).toEqual([expect.objectContaining({ event_id: deliveryId, public_event_id: eventId })]);
    const listed = await signedJson(e.h, e.live, "GET", "/api/partner/webhook-events?status=dead_letter");
    expect(listed.body.events.map((x: { id: number; is_dead_letter: boolean }) => [x.id, x.is_dead_letter])).toEqual([[deliveryId, true]]);

    // The dead letter is announced to the webhook.delivery_failed subscriber (never about itself).
    const [failed] = await receivedAt(rx, "/failed");
    expect(expectSigned(failed!, failedHook.secret)).toMatchObject({
      event_type: "webhook.delivery_failed",
      data: { delivery_id: deliveryId, event_id: eventId, event_type: "salutes.credit", webhook_id: flakyHook.id },
    });

    // The receiver is fixed (it answers 204 now): a replay sends the same event again.
    const replay = await signedJson(e.h, e.live, "POST", "/api/partner/webhook-events/replay", {
      body: { event_ids: [deliveryId, 999999], reason_tag: "receiver_fix" },
    });
    expect(replay.status).toBe(200);
    expect(replay.body).toMatchObject({ count: 2, replayed_count: 1, failed_count: 1 });
    const both = await receivedAt(flaky, "/flaky", 2);
    expect(both[1]!.headers["x-webhook-id"]).toBe(eventId);
    expectSigned(both[1]!, flakyHook.secret);
    await eventually("the replay delivered", async () => ((await deliveryStatus(deliveryId)).status === "succeeded" ? true : undefined));
    const after = await signedJson(e.h, e.live, "GET", "/api/partner/webhooks/dlq?hours=24");
    expect(after.body.dead_letter_count).toBe(0);
  });

  test("list and delete", async () => {
    const list = await signedJson(e.h, e.live, "GET", "/api/partner/webhooks?event_type=salutes.credit");
    expect(list.body.webhooks.map((w: { id: number }) => w.id).sort()).toEqual([creditHook.id, flakyHook.id].sort());
    expect(JSON.stringify(list.body)).not.toContain("whsec_");
    const del = await signedJson(e.h, e.live, "DELETE", `/api/partner/webhooks/${flakyHook.id}`);
    expect(del.body).toMatchObject({ success: true, deleted: true, webhook_id: flakyHook.id });
    expectRefusal(await signedJson(e.h, e.live, "DELETE", `/api/partner/webhooks/${flakyHook.id}`), 404, "not_found");
  });
});
