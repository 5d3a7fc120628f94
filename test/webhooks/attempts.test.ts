// An attempt is counted when the request leaves, not when its answer is recorded: `attempts` counts what a
// receiver may have seen. The retry budget, max_attempts, counts only the attempts whose outcome was recorded: an
// attempt cut off by a crash — after its lease was committed, whether or not its request had left — is marked
// `interrupted` when the delivery is taken over and sent again, and does not use up the budget; interrupted
// attempts have a bound of their own (max_attempts of them). A "crash" here is either a lease taken and never
// followed by a send (what a process killed between the two leaves behind: DeliveryLeases.take alone), or a second
// app over the same database (another process, as far as the engine is concerned: its own connections) whose
// clock is past the first one's lease while the first app's own send is still hanging at a real receiver, so
// whatever it does later is what a stale sender would do. The SIGKILL version runs real processes in crash.test.ts.
import { afterEach, describe, expect, test } from "bun:test";
import { openTestApp, type TestApp } from "../support/app";
import { FakeClock } from "../support/clock";
import { createKey, signedJson, type TestKey } from "../support/partner";
import { type Behavior, startReceiver, type Receiver } from "../support/receiver";
import { DeliveryLeases } from "../../src/webhooks/leases";
import { emitEvent } from "../../src/webhooks/outbox";

// The timeout ends the first sender's hanging request (real time): the state under test is read well before.
const ENV = {
  WEBHOOK_ALLOW_PRIVATE_TARGETS: "1",
  WEBHOOK_TIMEOUT_SECONDS: "2",
  WEBHOOK_RETRY_BASE_SECONDS: "60",
  WEBHOOK_RETRY_MAX_SECONDS: "600",
  WEBHOOK_RETRY_JITTER_PCT: "0",
};
/** The dispatcher's lease: 2 × WEBHOOK_TIMEOUT_SECONDS + 10 s. */
const LEASE_SECONDS = 14;

const open: TestApp[] = [];
const receivers: Receiver[] = [];
afterEach(async () => {
  for (const r of receivers.splice(0)) r.stop();
  // The later app first: the first one owns the database.
  for (const a of open.splice(0).reverse()) await a.close();
});

async function app(env: Record<string, string>, clock?: FakeClock): Promise<TestApp> {
  const a = await openTestApp({ env: { ...ENV, ...env }, clock });
  open.push(a);
  return a;
}

function receiver(fallback?: Behavior): Receiver {
  const r = startReceiver(fallback);
  receivers.push(r);
  return r;
}

/** Polls until `check` holds; bounded in count and time. Waiting only — nothing is asserted about how long. */
async function until(what: string, check: () => boolean | Promise<boolean>, timeoutMs = 10_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  for (let i = 0; i < timeoutMs / 5 && Date.now() < deadline; i++) {
    if (await check()) return;
    await Bun.sleep(5);
  }
  throw new Error(`timed out waiting for ${what}`);
}

async function webhookTo(h: TestApp, key: TestKey, url: string, eventType = "webhook.test"): Promise<number> {
  const r = await signedJson(h, key, "POST", "/api/partner/webhooks", { body: { event_type: eventType, target_url: url } });
  expect(r.status).toBe(201);
  return r.body.webhook.id;
}

async function queueTest(h: TestApp, key: TestKey, webhookId: number) {
  const r = await signedJson(h, key, "POST", `/api/partner/webhooks/${webhookId}/test`);
  expect(r.status).toBe(200);
  return r.body as { event_id: string; delivery_id: number };
}

/** A test event written as the outbox writes it, without the route's nudge: nothing is sent until the test says so. */
async function queueQuietly(h: TestApp, webhookId: number) {
  const e = await h.ctx.store.tx((t) => emitEvent(t, h.ctx, { partner: "Acme", mode: "live" }, "webhook.test", { webhook_id: webhookId }, { webhookId }));
  expect(e.deliveryIds).toHaveLength(1);
  return { event_id: e.publicId, delivery_id: e.deliveryIds[0]! };
}

const deliveryOf = async (h: TestApp, id: number) =>
  (await h.ctx.store.get<Record<string, any>>(
    "SELECT status, attempts, reason_tag, last_error, last_status_code, last_attempt_at, lease_token FROM webhook_deliveries WHERE id = ?",
    [id],
  ))!;
const attemptRows = (h: TestApp, id: number) =>
  h.ctx.store.all<Record<string, any>>(
    "SELECT attempt_no, started_at, status_code, reason_tag, error FROM webhook_attempts WHERE delivery_id = ? ORDER BY id",
    [id],
  );

/** A second app over the first one's database (its file, or its PostgreSQL database), its clock `seconds` later: the process that takes over. */
function successor(first: TestApp, env: Record<string, string>, seconds: number): Promise<TestApp> {
  const clock = new FakeClock(first.clock.now());
  clock.advanceSeconds(seconds);
  // The file's directory also holds the development master key: the successor must open the same secrets.
  const url = first.ctx.config.database.url;
  const same: Record<string, string> = { HERALD_DB_PATH: first.ctx.config.dbPath, ...(url ? { DATABASE_URL: url } : {}) };
  return app({ ...env, ...same }, clock);
}

describe("attempts are counted when the request leaves", () => {
  test("while an attempt is at the receiver it is already counted and recorded; its outcome fills in the same row", async () => {
    const h = await app({ WEBHOOK_MAX_ATTEMPTS: "4" });
    const rx = receiver();
    const key = await createKey(h);
    const t = await queueTest(h, key, await webhookTo(h, key, rx.url()));
    rx.then({ hang: true });

    const pass = h.ctx.dispatcher.runOnce();
    await until("the request at the receiver", () => rx.received.length === 1);
    expect(await deliveryOf(h, t.delivery_id)).toMatchObject({ status: "processing", attempts: 1, last_attempt_at: "2026-01-01T00:00:00.000Z" });
    expect(await attemptRows(h, t.delivery_id)).toEqual([
      { attempt_no: 1, started_at: "2026-01-01T00:00:00.000Z", status_code: null, reason_tag: null, error: null },
    ]);

    await pass; // the 2 s timeout ends the attempt
    expect(await deliveryOf(h, t.delivery_id)).toMatchObject({ status: "failed", attempts: 1, reason_tag: "timeout" });
    const rows = await attemptRows(h, t.delivery_id);
    expect(rows).toHaveLength(1);
    expect(rows[0]).toMatchObject({ attempt_no: 1, status_code: null, reason_tag: "timeout" });
    expect(rows[0]!.error).toContain("no complete answer");
  });

  test("an attempt cut off during the last allowed one does not count: recovery sends it again, and the delivery is dead-lettered after max_attempts outcomes", async () => {
    const env = { WEBHOOK_MAX_ATTEMPTS: "2" };
    const first = await app(env);
    const rx = receiver();
    const watcher = receiver();
    const key = await createKey(first);
    const hook = await webhookTo(first, key, rx.url());
    await webhookTo(first, key, watcher.url(), "webhook.delivery_failed");
    const t = await queueTest(first, key, hook);
    rx.then({ status: 500 }, { hang: true }, { status: 503 });

    await first.ctx.dispatcher.runOnce();
    expect(await deliveryOf(first, t.delivery_id)).toMatchObject({ status: "failed", attempts: 1 });
    first.clock.advanceSeconds(60);
    const stale = first.ctx.dispatcher.runOnce();
    await until("attempt 2 at the receiver", () => rx.received.length === 2);
    expect(await deliveryOf(first, t.delivery_id)).toMatchObject({ status: "processing", attempts: 2 });

    // The first sender is gone as far as anyone can tell; its lease runs out and another process takes over.
    // Attempt 2 reached the receiver but its outcome was never recorded: it is not one of the two attempts
    // max_attempts allows, so the delivery is sent again, and only that attempt's failure dead-letters it.
    const second = await successor(first, env, 60 + LEASE_SECONDS + 1);
    await second.ctx.dispatcher.runOnce();

    expect(rx.received.map((r) => r.headers["x-webhook-id"])).toEqual([t.event_id, t.event_id, t.event_id]);
    const d = await deliveryOf(second, t.delivery_id);
    expect(d).toMatchObject({ status: "dead_letter", attempts: 3, reason_tag: "http_error", last_status_code: 503, lease_token: null });
    expect((await attemptRows(second, t.delivery_id)).map((a) => [a.attempt_no, a.status_code, a.reason_tag])).toEqual([
      [1, 500, "http_error"],
      [2, null, "interrupted"],
      [3, 503, "http_error"],
    ]);
    // Dead-lettered like any other: the partner's webhook.delivery_failed receiver hears of it.
    expect(watcher.received).toHaveLength(1);
    expect(JSON.parse(watcher.received[0]!.rawBody)).toMatchObject({
      event_type: "webhook.delivery_failed",
      data: { delivery_id: t.delivery_id, event_id: t.event_id, reason_tag: "http_error" },
    });
    const dlq = await signedJson(second, key, "GET", "/api/partner/webhooks/dlq?hours=1");
    expect(dlq.body).toMatchObject({ dead_letter_count: 1, by_reason_tag: [{ reason_tag: "http_error", count: 1 }] });

    // The stale sender's late answer (a timeout) goes on its own attempt row but changes nothing else.
    await stale;
    expect(await deliveryOf(second, t.delivery_id)).toMatchObject({ status: "dead_letter", attempts: 3, reason_tag: "http_error" });
    expect((await attemptRows(second, t.delivery_id)).map((a) => a.reason_tag)).toEqual(["http_error", "timeout", "http_error"]);
    expect(rx.received).toHaveLength(3);
  });

  test("an attempt cut off below max_attempts is marked interrupted and the delivery is sent again as the next attempt", async () => {
    const env = { WEBHOOK_MAX_ATTEMPTS: "4" };
    const first = await app(env);
    const rx = receiver();
    const key = await createKey(first);
    const t = await queueTest(first, key, await webhookTo(first, key, rx.url()));
    rx.then({ hang: true });

    const stale = first.ctx.dispatcher.runOnce();
    await until("attempt 1 at the receiver", () => rx.received.length === 1);

    const second = await successor(first, env, LEASE_SECONDS - 1);
    await second.ctx.dispatcher.runOnce();
    expect(rx.received).toHaveLength(1); // the lease still holds
    second.clock.advanceSeconds(2);
    await second.ctx.dispatcher.runOnce();

    expect(rx.received.map((r) => r.headers["x-webhook-id"])).toEqual([t.event_id, t.event_id]);
    expect(await deliveryOf(second, t.delivery_id)).toMatchObject({ status: "succeeded", attempts: 2, reason_tag: null, last_status_code: 204 });
    expect((await attemptRows(second, t.delivery_id)).map((a) => [a.attempt_no, a.status_code, a.reason_tag])).toEqual([
      [1, null, "interrupted"],
      [2, 204, null],
    ]);
    await stale;
    expect(await deliveryOf(second, t.delivery_id)).toMatchObject({ status: "succeeded", attempts: 2 });
  });

  test("a crash between counting an attempt and sending it spends nothing: with a failing receiver the delivery is dead-lettered after max_attempts requests with an outcome", async () => {
    const max = 3;
    const h = await app({ WEBHOOK_MAX_ATTEMPTS: String(max) });
    const rx = receiver({ status: 500 });
    const key = await createKey(h);
    const t = await queueQuietly(h, await webhookTo(h, key, rx.url()));
    const leases = new DeliveryLeases(h.ctx);
    const leaseEnd = () => new Date(h.clock.now().getTime() + LEASE_SECONDS * 1000);
    /** What a process killed right after its lease committed leaves: the attempt counted and recorded, no request sent. */
    const leaseThenDie = async () => {
      const taken = await leases.take(16, leaseEnd());
      expect(taken.leased.map((d) => d.id)).toEqual([t.delivery_id]);
      h.clock.advanceSeconds(LEASE_SECONDS + 1);
    };
    /** Moves the clock to the delivery's next attempt. */
    const toNextAttempt = async () => {
      const next = (await h.ctx.store.get<{ next_attempt_at: string }>("SELECT next_attempt_at FROM webhook_deliveries WHERE id = ?", [t.delivery_id]))!;
      h.clock.set(next.next_attempt_at);
    };

    // Cut off before the first request and again before the last one: max_attempts requests still go out.
    await leaseThenDie();
    await h.ctx.dispatcher.runOnce(); // takes the expired lease over: attempt 1 interrupted, attempt 2 sent
    expect(await deliveryOf(h, t.delivery_id)).toMatchObject({ status: "failed", attempts: 2, reason_tag: "http_error" });
    for (let sent = 2; sent < max; sent++) {
      await toNextAttempt();
      await h.ctx.dispatcher.runOnce();
      expect(await deliveryOf(h, t.delivery_id)).toMatchObject({ status: "failed", attempts: sent + 1 });
    }
    expect(rx.received).toHaveLength(max - 1);
    await toNextAttempt();
    await leaseThenDie();
    await h.ctx.dispatcher.runOnce();

    expect(rx.received.map((r) => r.headers["x-webhook-id"])).toEqual(Array.from({ length: max }, () => t.event_id));
    expect(await deliveryOf(h, t.delivery_id)).toMatchObject({ status: "dead_letter", attempts: max + 2, reason_tag: "http_error", last_status_code: 500 });
    expect((await attemptRows(h, t.delivery_id)).map((a) => [a.attempt_no, a.status_code, a.reason_tag])).toEqual([
      [1, null, "interrupted"],
      [2, 500, "http_error"],
      [3, 500, "http_error"],
      [4, null, "interrupted"],
      [5, 500, "http_error"],
    ]);
  });

  test("interrupted attempts have a bound of their own: the delivery is dead-lettered after max_attempts of them; a replay starts a new budget", async () => {
    const env = { WEBHOOK_MAX_ATTEMPTS: "2" };
    const h = await app(env);
    const rx = receiver({ status: 500 });
    const watcher = receiver();
    const key = await createKey(h);
    const t = await queueQuietly(h, await webhookTo(h, key, rx.url()));
    await webhookTo(h, key, watcher.url(), "webhook.delivery_failed");
    const leases = new DeliveryLeases(h.ctx);
    const take = () => leases.take(16, new Date(h.clock.now().getTime() + LEASE_SECONDS * 1000));

    // Every attempt is cut off before its request leaves (a send that kills the process, say).
    expect((await take()).leased.map((d) => [d.id, d.attempts, d.final_attempt])).toEqual([[t.delivery_id, 1, false]]);
    h.clock.advanceSeconds(LEASE_SECONDS + 1);
    expect((await take()).leased.map((d) => [d.id, d.attempts, d.final_attempt])).toEqual([[t.delivery_id, 2, false]]);
    h.clock.advanceSeconds(LEASE_SECONDS + 1);
    expect(await take()).toEqual({ leased: [], settled: 1 });

    const d = await deliveryOf(h, t.delivery_id);
    expect(d).toMatchObject({ status: "dead_letter", attempts: 2, reason_tag: "interrupted", last_status_code: null, lease_token: null });
    expect(d.last_error).toContain("2 attempts");
    expect((await attemptRows(h, t.delivery_id)).map((a) => [a.attempt_no, a.reason_tag])).toEqual([
      [1, "interrupted"],
      [2, "interrupted"],
    ]);
    expect(rx.received).toHaveLength(0);
    await h.ctx.dispatcher.runOnce(); // sends the webhook.delivery_failed event
    expect(watcher.received).toHaveLength(1);
    expect(JSON.parse(watcher.received[0]!.rawBody)).toMatchObject({
      event_type: "webhook.delivery_failed",
      data: { delivery_id: t.delivery_id, reason_tag: "interrupted" },
    });

    // A replay: the interrupted attempts before it are not this budget's. Two requests with an outcome, then the
    // dead letter again.
    const replay = await signedJson(h, key, "POST", "/api/partner/webhook-events/replay", { body: { event_ids: [t.delivery_id] } });
    expect(replay.status).toBe(200);
    await h.ctx.dispatcher.runOnce();
    expect(await deliveryOf(h, t.delivery_id)).toMatchObject({ status: "failed", attempts: 1 });
    h.clock.advanceSeconds(60);
    await h.ctx.dispatcher.runOnce();
    expect(rx.received).toHaveLength(2);
    expect(await deliveryOf(h, t.delivery_id)).toMatchObject({ status: "dead_letter", attempts: 2, reason_tag: "http_error" });
    expect((await attemptRows(h, t.delivery_id)).map((a) => [a.attempt_no, a.reason_tag])).toEqual([
      [1, "interrupted"],
      [2, "interrupted"],
      [3, "http_error"],
      [4, "http_error"],
    ]);
  });
});
