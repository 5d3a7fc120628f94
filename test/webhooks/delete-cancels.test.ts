// Issue 71: deleting a webhook cancels its pending deliveries without one statement over all of them. The delete's
// transaction cancels a bounded batch; the rest go in batches after its commit (and by the webhook-prune job's sweep
// after a crash). None of them is sent meanwhile, and no other webhook's delivery is touched. Both engines
// (HERALD_TEST_ENGINE=postgres); the receiver is a real one on 127.0.0.1.
import { afterEach, expect, test } from "bun:test";
import type { Queryable } from "../../src/db/port";
import { cancellationsAfterDelete } from "../../src/webhooks/service";
import { CANCEL_BATCH_ROWS, cancelPendingDeliveries, softDeleteWebhook } from "../../src/webhooks/store";
import { openTestApp, type TestApp } from "../support/app";
import { CountingStore } from "../support/counting-store";
import { testEngine } from "../support/engine";
import { createKey, signedJson } from "../support/partner";
import { fullReads, planOf } from "../support/query-plans";
import { type Receiver, startReceiver } from "../support/receiver";
import { acmeWebhook, queueEvents } from "./queued";

let h: TestApp;
let rx: Receiver;
afterEach(async () => {
  rx?.stop();
  await h?.close();
});

const OWNER = { partner: "Acme", mode: "live" as const };
const ENV = { WEBHOOK_ALLOW_PRIVATE_TARGETS: "1", WEBHOOK_TIMEOUT_SECONDS: "1", WEBHOOK_MAX_ATTEMPTS: "4", WEBHOOK_RETRY_JITTER_PCT: "0" };

async function setup() {
  h = await openTestApp({ env: ENV });
  rx = startReceiver();
  const key = await createKey(h);
  const doomed = await acmeWebhook(h, key, rx.url("/doomed"));
  const other = await acmeWebhook(h, key, rx.url("/other"));
  return { key, doomed, other };
}

/** Pending deliveries of `webhookId` on one event, in one statement: `queued` due now, `failed` due for a retry at `failedDueIso`. */
async function seedPending(webhookId: number, queued: number, failed: number, failedDueIso: string): Promise<void> {
  const now = h.clock.now().toISOString();
  const event = (await h.ctx.store.get<{ id: number }>(
    "INSERT INTO events (public_id, partner, mode, event_type, data, created_at) VALUES (?, 'Acme', 'live', 'webhook.test', '{}', ?) RETURNING id",
    [`evt_seed${webhookId}`, now],
  ))!.id;
  await h.ctx.store.run(
    `WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < ${queued + failed})
     INSERT INTO webhook_deliveries (event_id, webhook_id, partner, mode, status, attempts, next_attempt_at, created_at, updated_at)
     SELECT ${event}, ${webhookId}, 'Acme', 'live', CASE WHEN i <= ${failed} THEN 'failed' ELSE 'queued' END, CASE WHEN i <= ${failed} THEN 1 ELSE 0 END,
       CASE WHEN i <= ${failed} THEN CAST(? AS text) ELSE CAST(? AS text) END, CAST(? AS text), CAST(? AS text) FROM n`,
    [failedDueIso, now, now, now],
  );
}

const statuses = async (webhookId: number) =>
  Object.fromEntries(
    (
      await h.ctx.store.all<{ status: string; n: number }>("SELECT status, count(*) AS n FROM webhook_deliveries WHERE webhook_id = ? GROUP BY status", [
        webhookId,
      ])
    ).map((r) => [r.status, Number(r.n)]),
  );
const attemptsOf = async (webhookId: number) =>
  Number(
    (await h.ctx.store.get<{ n: number }>(
      "SELECT count(*) AS n FROM webhook_attempts a JOIN webhook_deliveries d ON d.id = a.delivery_id WHERE d.webhook_id = ?",
      [webhookId],
    ))!.n,
  );
const paths = () => rx.received.map((r) => r.path);

test("DELETE cancels a full batch in its transaction and the rest right after its answer; none is sent, another webhook's go out", async () => {
  const { key, doomed, other } = await setup();
  const inAnHour = new Date(h.clock.now().getTime() + 3_600_000).toISOString();
  const pending = CANCEL_BATCH_ROWS + 700;
  await seedPending(doomed, pending - 500, 500, inAnHour);
  await queueEvents(h, other, 3);
  const del = await signedJson(h, key, "DELETE", `/api/partner/webhooks/${doomed}`);
  expect(del.status).toBe(200);
  // What the delete's own transaction cancelled; the answer says no more than that.
  expect(del.body).toMatchObject({ deleted: true, webhook_id: doomed, cancelled_deliveries: CANCEL_BATCH_ROWS });
  // The dispatcher runs while the rest are being cancelled, then again once every retry is due.
  await Promise.all([h.ctx.dispatcher.runOnce(), cancellationsAfterDelete(h.ctx)]);
  h.clock.advanceSeconds(7200);
  await h.ctx.dispatcher.runOnce();
  expect(await statuses(doomed)).toEqual({ cancelled: pending });
  expect(await attemptsOf(doomed)).toBe(0);
  expect(await statuses(other)).toEqual({ succeeded: 3 });
  expect(paths()).toEqual(["/other", "/other", "/other"]);
});

test("the batches after the commit are short statements down deliveries_webhook_idx; the dispatcher sends none meanwhile; other webhooks' rows stay", async () => {
  const { doomed, other } = await setup();
  const inAnHour = new Date(h.clock.now().getTime() + 3_600_000).toISOString();
  // 40 pending: 10 queued (due now), 30 failed (due in an hour). Another webhook has 6 queued and 2 failed.
  await seedPending(doomed, 10, 30, inAnHour);
  await seedPending(other, 6, 2, inAnHour);
  const otherBefore = await h.ctx.store.all("SELECT id, status, next_attempt_at, updated_at FROM webhook_deliveries WHERE webhook_id = ? ORDER BY id", [other]);
  h.clock.advanceSeconds(1);
  const now = h.clock.now().toISOString();
  const deleted = await h.ctx.store.tx((t: Queryable) => softDeleteWebhook(t, OWNER, doomed, now, 10));
  expect(deleted).toEqual({ cancelled: 10, more: true });
  // Between the delete's commit and the batches: the dispatcher takes the doomed webhook's due deliveries and
  // cancels them itself rather than send them (the other webhook's queued ones go out).
  await h.ctx.dispatcher.runOnce();
  expect(paths().filter((p) => p === "/doomed")).toEqual([]);
  const left = (await statuses(doomed)).failed ?? 0;
  expect(left).toBeGreaterThan(10);
  const store = new CountingStore(h.ctx.store);
  const r = await cancelPendingDeliveries(store, doomed, now, { batchRows: 4 });
  expect(r).toMatchObject({ cancelled: left, done: true });
  // Several statements, each of at most 4 rows, committed one by one: on SQLite alone, on PostgreSQL each in a
  // transaction of its own with its planner setting. There a short batch does not end the loop (a row the dispatcher
  // changed meanwhile is skipped), so one more finds none.
  const pg = testEngine() === "postgres";
  const batches = Math.ceil((left + 1) / 4) + (pg && left % 4 !== 0 ? 1 : 0);
  const updates = store.runs.filter((s) => s.sql.startsWith("UPDATE webhook_deliveries SET status = 'cancelled'"));
  expect(updates.map((s) => [s.params.at(-1), s.inTx])).toEqual(Array.from({ length: batches }, () => [4, pg]));
  expect(store.runs.length).toBe(pg ? 3 * batches : batches);
  expect(store.transactions).toBe(pg ? batches : 0);
  expect(r.statements).toBe(batches);
  // Each batch finds its rows down an index, never by reading the table.
  expect(fullReads(await planOf(h, updates[0]!.sql, updates[0]!.params))).toEqual([]);
  h.clock.advanceSeconds(7200);
  await h.ctx.dispatcher.runOnce();
  expect(await statuses(doomed)).toEqual({ cancelled: 40 });
  expect(await attemptsOf(doomed)).toBe(0);
  expect(paths().filter((p) => p === "/doomed")).toEqual([]);
  // The other webhook's rows: the 6 queued were sent, the 2 failed ones retried at their time, none cancelled.
  const otherAfter = await h.ctx.store.all<{ id: number; status: string }>("SELECT id, status FROM webhook_deliveries WHERE webhook_id = ? ORDER BY id", [
    other,
  ]);
  expect(otherAfter.map((d) => d.id)).toEqual(otherBefore.map((d: any) => d.id));
  expect(otherAfter.every((d) => d.status === "succeeded")).toBe(true);
});

test("after a crash between the batches, the webhook-prune job cancels what a deleted webhook left pending", async () => {
  const { doomed, other } = await setup();
  const inAnHour = new Date(h.clock.now().getTime() + 3_600_000).toISOString();
  await seedPending(doomed, 20, 10, inAnHour);
  await seedPending(other, 4, 1, inAnHour);
  const now = h.clock.now().toISOString();
  // The delete committed its first batch; the process stopped before the rest.
  expect(await h.ctx.store.tx((t: Queryable) => softDeleteWebhook(t, OWNER, doomed, now, 10))).toEqual({ cancelled: 10, more: true });
  const run = await h.ctx.jobs.runNow("webhook-prune");
  expect(run.ok).toBe(true);
  expect(await statuses(doomed)).toEqual({ cancelled: 30 });
  expect(await statuses(other)).toEqual({ queued: 4, failed: 1 });
  expect(rx.received).toEqual([]);
});
