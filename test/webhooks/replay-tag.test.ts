// A replay's reason_tag stays on the delivery record after the replayed delivery succeeds, every replay is kept
// in the record's `replays` history, and GET /api/partner/webhook-events?reason_tag=… finds deliveries by the
// reason they were replayed for (the spec lists receiver_fix among the values seen).
import { afterEach, expect, test } from "bun:test";
import { createAdminToken, createKey, signedJson, type TestKey } from "../support/partner";
import { openTestApp, type TestApp } from "../support/app";
import { startReceiver, type Receiver } from "../support/receiver";

let h: TestApp;
let rx: Receiver;
afterEach(async () => {
  rx?.stop();
  await h?.close();
});

const ENV = { WEBHOOK_ALLOW_PRIVATE_TARGETS: "1", WEBHOOK_TIMEOUT_SECONDS: "1", WEBHOOK_MAX_ATTEMPTS: "1" };

async function deadLetter(): Promise<{ key: TestKey; deliveryId: number }> {
  h = await openTestApp({ env: ENV });
  rx = startReceiver();
  const key = await createKey(h);
  const w = await signedJson(h, key, "POST", "/api/partner/webhooks", { body: { event_type: "webhook.test", target_url: rx.url() } });
  const t = await signedJson(h, key, "POST", `/api/partner/webhooks/${w.body.webhook.id}/test`);
  rx.then({ status: 500 });
  await h.ctx.dispatcher.runOnce();
  const deliveryId = t.body.delivery_id as number;
  expect(await record(deliveryId)).toMatchObject({ status: "dead_letter", reason_tag: "http_error" });
  return { key, deliveryId };
}

const record = (id: number) => h.ctx.store.get<Record<string, unknown>>("SELECT status, attempts, reason_tag FROM webhook_deliveries WHERE id = ?", [id]);

async function replay(key: TestKey, id: number, reason_tag: string, note?: string) {
  const r = await signedJson(h, key, "POST", "/api/partner/webhook-events/replay", { body: { event_ids: [id], reason_tag, ...(note ? { note } : {}) } });
  expect(r.body.results[0]).toMatchObject({ event_id: id, replayed: true });
}

const listed = async (key: TestKey, query: string) =>
  (await signedJson(h, key, "GET", `/api/partner/webhook-events?${query}`)).body as { count: number; events: Array<Record<string, any>> };

test("after a replayed delivery succeeds, it keeps the replay's reason_tag and reason_tag=receiver_fix lists it", async () => {
  const { key, deliveryId } = await deadLetter();
  h.clock.advanceSeconds(3600);
  await replay(key, deliveryId, "receiver_fix", "fixed TLS");
  await h.ctx.dispatcher.runOnce();
  expect(await record(deliveryId)).toMatchObject({ status: "succeeded", attempts: 1, reason_tag: "receiver_fix" });

  const found = await listed(key, "reason_tag=receiver_fix");
  expect(found.count).toBe(1);
  expect(found.events[0]).toMatchObject({
    id: deliveryId,
    status: "succeeded",
    reason_tag: "receiver_fix",
    replays: [{ reason_tag: "receiver_fix", note: "fixed TLS", replayed_at: "2026-01-01T01:00:00.000Z" }],
  });
  expect((await listed(key, "reason_tag=receiver_fix&status=succeeded")).count).toBe(1);
  // The failure that led to the replay is history now: the record no longer answers to it.
  expect((await listed(key, "reason_tag=http_error")).count).toBe(0);
  // Another partner's filter finds nothing of it.
  expect((await listed(await createKey(h, { partner: "Other" }), "reason_tag=receiver_fix")).count).toBe(0);
});

test("every replay stays in the history; the record shows the latest failure while failing and the latest replay once delivered", async () => {
  const { key, deliveryId } = await deadLetter();
  h.clock.advanceSeconds(60);
  await replay(key, deliveryId, "receiver_fix");
  rx.then({ status: 503 });
  await h.ctx.dispatcher.runOnce();
  // Failed again: reason_tag says why, and the filter by the replay's reason still finds it.
  expect(await record(deliveryId)).toMatchObject({ status: "dead_letter", reason_tag: "http_error" });
  expect((await listed(key, "reason_tag=receiver_fix")).events.map((e) => e.id)).toEqual([deliveryId]);
  expect((await listed(key, "reason_tag=http_error")).events.map((e) => e.id)).toEqual([deliveryId]);

  h.clock.advanceSeconds(60);
  const admin = await createAdminToken(h);
  const op = await h.json(`/admin/partners/webhook-events/${deliveryId}/replay`, { method: "POST", headers: { authorization: `Bearer ${admin}` } });
  expect(op.body).toMatchObject({ requeued: 1 });
  await h.ctx.dispatcher.runOnce();
  expect(await record(deliveryId)).toMatchObject({ status: "succeeded", reason_tag: "operator_replay" });

  const byFirst = await listed(key, "reason_tag=receiver_fix");
  expect(byFirst.events.map((e) => e.id)).toEqual([deliveryId]);
  expect(byFirst.events[0]!.replays).toEqual([
    { reason_tag: "receiver_fix", note: null, replayed_at: "2026-01-01T00:01:00.000Z" },
    { reason_tag: "operator_replay", note: null, replayed_at: "2026-01-01T00:02:00.000Z" },
  ]);
  expect((await listed(key, "reason_tag=operator_replay")).count).toBe(1);
  expect((await listed(key, "reason_tag=http_error")).count).toBe(0);
});

test("a delivery that was never replayed has an empty history and no reason_tag once delivered", async () => {
  h = await openTestApp({ env: ENV });
  rx = startReceiver();
  const key = await createKey(h);
  const w = await signedJson(h, key, "POST", "/api/partner/webhooks", { body: { event_type: "webhook.test", target_url: rx.url() } });
  await signedJson(h, key, "POST", `/api/partner/webhooks/${w.body.webhook.id}/test`);
  await h.ctx.dispatcher.runOnce();
  expect((await listed(key, "status=succeeded")).events).toMatchObject([{ reason_tag: null, replays: [] }]);
});

test("pruning a delivery after its retention removes its replay history with it", async () => {
  const { key, deliveryId } = await deadLetter();
  await replay(key, deliveryId, "receiver_fix");
  await h.ctx.dispatcher.runOnce();
  const replays = async () => (await h.ctx.store.get<{ n: number }>("SELECT count(*) AS n FROM webhook_replays WHERE delivery_id = ?", [deliveryId]))!.n;
  expect(await replays()).toBe(1);
  h.clock.advanceSeconds(31 * 86_400); // past WEBHOOK_RETENTION_DAYS (30) for a succeeded delivery
  const run = await h.ctx.jobs.runNow("webhook-prune");
  expect(run).toMatchObject({ ok: true });
  expect(await record(deliveryId)).toBeNull();
  expect(await replays()).toBe(0);
});

test("a sandbox replay's history is sandbox state: recorded with mode sandbox, deleted by a sandbox reset", async () => {
  h = await openTestApp({ env: { ...ENV, PARTNER_SANDBOX_RATE_LIMIT_PER_MINUTE: "0" } });
  rx = startReceiver();
  const key = await createKey(h, { mode: "sandbox" });
  const sb = (method: string, path: string, body?: unknown) => signedJson(h, key, method, `/api/partner/sandbox${path}`, body === undefined ? {} : { body });
  const w = await sb("POST", "/webhooks", { event_type: "webhook.test", target_url: rx.url() });
  const t = await sb("POST", `/webhooks/${w.body.webhook.id}/test`);
  await h.ctx.dispatcher.runOnce();
  expect((await sb("POST", "/webhook-events/replay", { event_ids: [t.body.delivery_id], reason_tag: "receiver_fix" })).body.replayed_count).toBe(1);
  await h.ctx.dispatcher.runOnce();
  expect(await record(t.body.delivery_id)).toMatchObject({ status: "succeeded", reason_tag: "receiver_fix" });
  const history = () => h.ctx.store.all("SELECT partner, mode, reason_tag FROM webhook_replays");
  expect(await history()).toEqual([{ partner: "Acme", mode: "sandbox", reason_tag: "receiver_fix" }]);
  expect((await sb("POST", "/reset", {})).status).toBe(200);
  expect(await history()).toEqual([]);
});
