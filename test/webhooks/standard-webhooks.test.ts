// Real deliveries from the dispatcher to a real receiver on 127.0.0.1, verified with the standardwebhooks npm
// package (the reference library of the Standard Webhooks spec): on a first attempt, on a retry, on a replay,
// and during a secret rotation, where either secret verifies. The X-Webhook-* headers are still sent.
import { afterEach, describe, expect, test } from "bun:test";
import { createHmac } from "node:crypto";
import { Webhook, WebhookVerificationError } from "standardwebhooks";
import { standardWebhooksSecret } from "../../src/client";
import { openTestApp, type TestApp } from "../support/app";
import { FakeClock } from "../support/clock";
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
  WEBHOOK_TIMEOUT_SECONDS: "2",
  WEBHOOK_MAX_ATTEMPTS: "4",
  WEBHOOK_RETRY_BASE_SECONDS: "60",
  WEBHOOK_RETRY_JITTER_PCT: "0",
};

// The library checks webhook-timestamp against the real clock (±5 min), so the app's clock starts at the real
// time; the tests move it by at most a minute or two, never past the library's tolerance, except where noted.
async function setup() {
  h = await openTestApp({ env: ENV, clock: new FakeClock(new Date()) });
  rx = startReceiver();
  const key = await createKey(h);
  const created = await signedJson(h, key, "POST", "/api/partner/webhooks", { body: { event_type: "webhook.test", target_url: rx.url() } });
  expect(created.status).toBe(201);
  return { key, webhook: created.body.webhook as { id: number; secret: string } };
}

async function sendTest(key: TestKey, id: number) {
  const r = await signedJson(h, key, "POST", `/api/partner/webhooks/${id}/test`);
  expect(r.status).toBe(200);
  await h.ctx.dispatcher.runOnce();
  return r.body as { event_id: string; delivery_id: number };
}

/** Verifies one received request with the library, as a partner's receiver would; returns the parsed payload. */
const verifyWith = (secret: string, i: number) => new Webhook(standardWebhooksSecret(secret)).verify(rx.received[i]!.rawBody, rx.received[i]!.headers);

describe("Standard Webhooks headers on real deliveries", () => {
  test("the standardwebhooks library verifies a delivery, with the secret base64-encoded or raw; X-Webhook-* are kept", async () => {
    const { key, webhook } = await setup();
    const t = await sendTest(key, webhook.id);
    const got = rx.received[0]!;
    expect(verifyWith(webhook.secret, 0)).toMatchObject({ event_id: t.event_id, event_type: "webhook.test" });
    expect(new Webhook(webhook.secret, { format: "raw" }).verify(got.rawBody, got.headers)).toMatchObject({ event_id: t.event_id });
    expect(got.headers["webhook-id"]).toBe(t.event_id);
    expect(got.headers["webhook-timestamp"]).toBe(got.headers["x-webhook-timestamp"]!);
    expect(got.headers["webhook-signature"]).toMatch(/^v1,[A-Za-z0-9+/]{43}=$/);
    // Herald's own signature (docs/design.md §6) is unchanged beside it.
    expect(got.headers["x-webhook-id"]).toBe(t.event_id);
    expect(got.headers["x-webhook-signature"]).toBe(
      createHmac("sha256", webhook.secret).update(`${got.headers["x-webhook-timestamp"]}.${got.rawBody}`).digest("hex"),
    );
  });

  test("a wrong secret, a changed body or a changed id is refused by the library", async () => {
    const { key, webhook } = await setup();
    await sendTest(key, webhook.id);
    const got = rx.received[0]!;
    expect(() => new Webhook(standardWebhooksSecret("whsec_wrong")).verify(got.rawBody, got.headers)).toThrow(WebhookVerificationError);
    expect(() => new Webhook(standardWebhooksSecret(webhook.secret)).verify(got.rawBody.replace("webhook.test", "webhook.tesT"), got.headers)).toThrow(
      WebhookVerificationError,
    );
    expect(() => new Webhook(standardWebhooksSecret(webhook.secret)).verify(got.rawBody, { ...got.headers, "webhook-id": "evt_other" })).toThrow(
      WebhookVerificationError,
    );
  });

  test("a retry and a replay keep webhook-id (the event id) and carry a fresh timestamp and signature that verify", async () => {
    const { key, webhook } = await setup();
    rx.then({ status: 500 });
    const t = await sendTest(key, webhook.id);
    h.clock.advanceSeconds(60);
    await h.ctx.dispatcher.runOnce();
    h.clock.advanceSeconds(30);
    const replay = await signedJson(h, key, "POST", "/api/partner/webhook-events/replay", { body: { event_ids: [t.delivery_id], reason_tag: "receiver_fix" } });
    expect(replay.body.replayed_count).toBe(1);
    // The replay nudges the dispatcher; runOnce joins that pass (the clock stays put while a send is in flight).
    await h.ctx.dispatcher.runOnce();
    expect(rx.received).toHaveLength(3);
    for (let i = 0; i < 3; i++) {
      expect(rx.received[i]!.headers["webhook-id"]).toBe(t.event_id);
      expect(verifyWith(webhook.secret, i)).toMatchObject({ event_id: t.event_id });
    }
    const stamps = rx.received.map((r) => Number(r.headers["webhook-timestamp"]));
    expect(stamps[1]! - stamps[0]!).toBe(60);
    expect(stamps[2]! - stamps[1]!).toBe(30);
  });

  test("during a rotation both secrets sign (two space-separated v1 entries) and each verifies; after the overlap only the new", async () => {
    const { key, webhook } = await setup();
    const rotated = await signedJson(h, key, "POST", `/api/partner/webhooks/${webhook.id}/rotate-secret`, { body: { overlap_hours: 1 } });
    const secret2 = rotated.body.webhook.secret as string;
    await sendTest(key, webhook.id);
    const entries = rx.received[0]!.headers["webhook-signature"]!.split(" ");
    expect(entries).toHaveLength(2);
    expect(verifyWith(secret2, 0)).toMatchObject({ event_type: "webhook.test" });
    expect(verifyWith(webhook.secret, 0)).toMatchObject({ event_type: "webhook.test" });
    expect(() => verifyWith("whsec_neither", 0)).toThrow(WebhookVerificationError);

    // Past the overlap the clock is an hour ahead of the library's, so compare with the library's sign() instead.
    h.clock.advanceSeconds(3600 + 1);
    await sendTest(key, webhook.id);
    const got = rx.received[1]!;
    const at = new Date(Number(got.headers["webhook-timestamp"]) * 1000);
    const sign = (secret: string) => new Webhook(standardWebhooksSecret(secret)).sign(got.headers["webhook-id"]!, at, got.rawBody);
    expect(got.headers["webhook-signature"]).toBe(sign(secret2));
    expect(got.headers["webhook-signature"]).not.toContain(sign(webhook.secret));
  });
});
