// Design audit: events and webhooks (docs/design.md §6), delivered to a real receiver on 127.0.0.1.
import { afterEach, expect, test } from "bun:test";
import { createHmac } from "node:crypto";
import { openTestApp, type TestApp } from "../support/app";
import { createKey, signedJson, type TestKey } from "../support/partner";
import { startReceiver } from "../support/receiver";

let h: TestApp;
let rx: ReturnType<typeof startReceiver> | undefined;
afterEach(async () => {
  rx?.stop();
  rx = undefined;
  await h?.close();
  h = undefined as unknown as TestApp;
});

const newUser = async (k: TestKey, ext: string) =>
  (await signedJson(h, k, "POST", "/api/partner/users", { body: { external_id: ext, username: `u${ext}`, display_name: "U" } })).body.user.id as number;
const move = (k: TestKey, uid: number, amount: number, path = "/api/salutes/credit") =>
  signedJson(h, k, "POST", path, { body: { user_id: String(uid), amount, reason: "r", source: "s" } });

// "retries with capped exponential backoff and jitter until max_attempts, then dead-letters"; docs/webhooks.md
// "Retry schedule": 180 s × 2^(n−1), ±20 %.
test("retry delays follow base × 2^(n−1) within ±20 %, and the retry carries the same event id", async () => {
  h = await openTestApp({ env: { WEBHOOK_ALLOW_PRIVATE_TARGETS: "1", WEBHOOK_TIMEOUT_SECONDS: "2" } });
  rx = startReceiver({ status: 500 });
  const k = await createKey(h);
  await signedJson(h, k, "POST", "/api/partner/webhooks", { body: { event_type: "salutes.credit", target_url: rx.url() } });
  const uid = await newUser(k, "w1");
  await move(k, uid, 1);
  await h.ctx.dispatcher.runOnce();
  expect(rx.received.length).toBe(1);
  // Attempt 2: 180 s ± 20 % → not before 144 s, by 216 s.
  h.clock.advanceSeconds(143);
  await h.ctx.dispatcher.runOnce();
  expect(rx.received.length).toBe(1);
  h.clock.advanceSeconds(216 - 143);
  await h.ctx.dispatcher.runOnce();
  expect(rx.received.length).toBe(2);
  // Attempt 3: 360 s ± 20 % → not before 288 s, by 432 s.
  h.clock.advanceSeconds(287);
  await h.ctx.dispatcher.runOnce();
  expect(rx.received.length).toBe(2);
  h.clock.advanceSeconds(432 - 287);
  await h.ctx.dispatcher.runOnce();
  expect(rx.received.length).toBe(3);
  const ids = new Set(rx.received.map((r) => r.headers["x-webhook-id"]));
  expect(ids.size).toBe(1);
  expect(new Set(rx.received.map((r) => JSON.parse(r.rawBody).event_id)).size).toBe(1);
});

// "the event id is stable across retries and replays"; the delivery signed as §3/§6 say, checked by hand.
test("a replayed dead letter is delivered with the original event id, re-signed over the new timestamp", async () => {
  h = await openTestApp({ env: { WEBHOOK_ALLOW_PRIVATE_TARGETS: "1", WEBHOOK_TIMEOUT_SECONDS: "2", WEBHOOK_MAX_ATTEMPTS: "1" } });
  rx = startReceiver({ status: 204 });
  rx.then({ status: 500 });
  const k = await createKey(h);
  const w = (await signedJson(h, k, "POST", "/api/partner/webhooks", { body: { event_type: "salutes.credit", target_url: rx.url() } })).body.webhook;
  const uid = await newUser(k, "w2");
  await move(k, uid, 1);
  await h.ctx.dispatcher.runOnce();
  const dl = (await signedJson(h, k, "GET", "/api/partner/webhook-events?status=dead_letter")).body.events;
  expect(dl.length).toBe(1);
  h.clock.advanceSeconds(60);
  const rp = await signedJson(h, k, "POST", "/api/partner/webhook-events/replay", { body: { event_ids: [dl[0].id] } });
  expect(rp.body.replayed_count).toBe(1);
  await h.ctx.dispatcher.runOnce();
  expect(rx.received.length).toBe(2);
  const [first, again] = rx.received;
  expect(again!.headers["x-webhook-id"]).toBe(first!.headers["x-webhook-id"]);
  expect(JSON.parse(again!.rawBody).event_id).toBe(JSON.parse(first!.rawBody).event_id);
  const ts = again!.headers["x-webhook-timestamp"]!;
  expect(again!.headers["x-webhook-signature"]).toBe(createHmac("sha256", w.secret).update(`${ts}.${again!.rawBody}`).digest("hex"));
  expect(Object.keys(JSON.parse(again!.rawBody)).sort()).toEqual(["data", "event_id", "event_type"]);
});

// "Domain events are written to an outbox table in the SAME transaction as the change that caused them";
// "fans each event out to the active webhooks subscribed to its type"
test("a refused debit emits nothing; a deleted webhook and one of another type receive nothing", async () => {
  h = await openTestApp({ env: { WEBHOOK_ALLOW_PRIVATE_TARGETS: "1", WEBHOOK_TIMEOUT_SECONDS: "2" } });
  rx = startReceiver({ status: 204 });
  const k = await createKey(h);
  await signedJson(h, k, "POST", "/api/partner/webhooks", { body: { event_type: "salutes.debit", target_url: rx.url("/debit") } });
  const gone = (await signedJson(h, k, "POST", "/api/partner/webhooks", { body: { event_type: "salutes.credit", target_url: rx.url("/gone") } })).body.webhook;
  expect((await signedJson(h, k, "DELETE", `/api/partner/webhooks/${gone.id}`)).status).toBe(200);
  const uid = await newUser(k, "w3");
  const refused = await move(k, uid, 5, "/api/salutes/debit");
  expect(refused.status).toBe(409);
  await move(k, uid, 2);
  await move(k, uid, 1, "/api/salutes/debit");
  await h.ctx.dispatcher.runOnce();
  expect(rx.received.map((r) => r.path)).toEqual(["/debit"]);
  const env = JSON.parse(rx.received[0]!.rawBody);
  expect(env.event_type).toBe("salutes.debit");
  expect(rx.received[0]!.headers["x-webhook-event"]).toBe("salutes.debit");
});
