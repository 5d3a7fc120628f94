// Issue 4 re-verified as an outside check would: a real `herald serve` with its jobs on and a short retry base, a
// receiver on 127.0.0.1 that fails and then recovers, one that never does (a dead letter), and its replay.
import { afterAll, beforeAll, expect, test } from "bun:test";
import { openTestApp } from "../support/app";
import { createAdminToken, createKey, signedJson, type TestKey } from "../support/partner";
import { type Receiver, startReceiver } from "../support/receiver";
import { startTarget, type TargetApp } from "../support/target";

let h: TargetApp;
let key: TestKey;
let rx: Receiver;
let admin: string;
beforeAll(async () => {
  h = await startTarget({
    target: { kind: "source", binary: null, label: "bun src/main.ts serve" },
    env: {
      JOBS_ENABLED: "1",
      WEBHOOK_ALLOW_PRIVATE_TARGETS: "1",
      WEBHOOK_RETRY_BASE_SECONDS: "1",
      WEBHOOK_RETRY_JITTER_PCT: "0",
      WEBHOOK_MAX_ATTEMPTS: "3",
      WEBHOOK_TIMEOUT_SECONDS: "5",
    },
  });
  key = await createKey(h);
  admin = await createAdminToken(h);
  rx = startReceiver({ status: 204 });
});
afterAll(async () => {
  rx?.stop();
  await h?.stop();
});

async function until<T>(what: string, probe: () => Promise<T | undefined>, ms = 30_000): Promise<T> {
  const end = Date.now() + ms;
  while (Date.now() < end) {
    const v = await probe();
    if (v !== undefined) return v;
    await Bun.sleep(100);
  }
  throw new Error(`gave up waiting for ${what}\n${h.output().slice(-2000)}`);
}

const deadLetterGauge = async () => {
  const text = await (await h.request("/metrics", { headers: { authorization: `Bearer ${admin}` } })).text();
  return Number(/^herald_webhook_dead_letters (\d+)$/m.exec(text)?.[1]);
};
const eventsOf = async (query: string) => (await signedJson(h, key, "GET", `/api/partner/webhook-events?${query}`)).body.events as Array<Record<string, any>>;

test("issue 4: a receiver failing twice then recovering gets the event a third time, same X-Webhook-Id, and the delivery is succeeded (served, jobs on)", async () => {
  const w = (await signedJson(h, key, "POST", "/api/partner/webhooks", { body: { event_type: "webhook.test", target_url: rx.url("/flaky") } })).body.webhook;
  rx.then({ status: 500 }, { status: 503 });
  const t = await signedJson(h, key, "POST", `/api/partner/webhooks/${w.id}/test`);
  expect(t.status).toBe(200);
  const got = await until("three attempts", async () => {
    const mine = rx.received.filter((r) => r.path === "/flaky");
    return mine.length >= 3 ? mine : undefined;
  });
  expect(new Set(got.map((r) => r.headers["x-webhook-id"]))).toEqual(new Set([t.body.event_id]));
  const rec = await until("succeeded", async () => {
    const e = (await eventsOf(`webhook_id=${w.id}`)).find((x) => x.status === "succeeded");
    return e;
  });
  expect(rec).toMatchObject({ attempts: 3, is_dead_letter: false, delivered_at: expect.any(String) });
  await Bun.sleep(1500);
  expect(rx.received.filter((r) => r.path === "/flaky")).toHaveLength(3);
});

test("issue 4: a receiver that never recovers is dead-lettered after WEBHOOK_MAX_ATTEMPTS, in the DLQ, announced, and a replay after the fix delivers it once", async () => {
  const w = (await signedJson(h, key, "POST", "/api/partner/webhooks", { body: { event_type: "webhook.test", target_url: rx.url("/down") } })).body.webhook;
  await signedJson(h, key, "POST", "/api/partner/webhooks", { body: { event_type: "webhook.delivery_failed", target_url: rx.url("/alerts") } });
  rx.then({ status: 500 }, { status: 500 }, { status: 500 });
  const t = await signedJson(h, key, "POST", `/api/partner/webhooks/${w.id}/test`);
  const dead = await until("the dead letter", async () => (await eventsOf(`status=dead_letter&webhook_id=${w.id}`))[0]);
  expect(dead).toMatchObject({ attempts: 3, is_dead_letter: true, reason_tag: "http_error" });
  const dlq = (await signedJson(h, key, "GET", "/api/partner/webhooks/dlq?hours=1")).body;
  expect(dlq).toMatchObject({ window_hours: 1, max_attempts: 3 });
  expect(dlq.by_event_type).toEqual(expect.arrayContaining([{ event_type: "webhook.test", count: 1 }]));
  expect(dlq.by_reason_tag).toEqual(expect.arrayContaining([{ reason_tag: "http_error", count: 1 }]));
  await until("herald_webhook_dead_letters 1", async () => ((await deadLetterGauge()) === 1 ? true : undefined), 5_000);
  const alert = await until("webhook.delivery_failed", async () => rx.received.find((r) => r.path === "/alerts"));
  expect(JSON.parse(alert.rawBody)).toMatchObject({ event_type: "webhook.delivery_failed", data: { event_id: t.body.event_id } });

  const before = rx.received.filter((r) => r.path === "/down").length;
  expect(before).toBe(3);
  const replay = await signedJson(h, key, "POST", "/api/partner/webhook-events/replay", { body: { event_ids: [dead.id], reason_tag: "receiver_fix" } });
  expect(replay.body).toMatchObject({ count: 1, replayed_count: 1, failed_count: 0, reason_tag: "receiver_fix" });
  expect(replay.body.results).toEqual([expect.objectContaining({ event_id: dead.id, replayed: true, error: null })]);
  const again = await until("the replayed delivery", async () => rx.received.filter((r) => r.path === "/down")[3]);
  expect(again.headers["x-webhook-id"]).toBe(t.body.event_id);
  await until("succeeded after replay", async () => (await eventsOf(`webhook_id=${w.id}`)).find((x) => x.status === "succeeded"));
  expect((await signedJson(h, key, "GET", "/api/partner/webhooks/dlq?hours=1")).body.dead_letter_count).toBe(0);
  await until("herald_webhook_dead_letters 0", async () => ((await deadLetterGauge()) === 0 ? true : undefined), 5_000);
});

test("issue 4 retention: webhook-prune deletes a succeeded delivery after WEBHOOK_RETENTION_DAYS but keeps a dead letter until 90 days", async () => {
  const a = await openTestApp({ env: { WEBHOOK_ALLOW_PRIVATE_TARGETS: "1", WEBHOOK_MAX_ATTEMPTS: "1" } });
  try {
    const k = await createKey(a);
    const ok = (await signedJson(a, k, "POST", "/api/partner/webhooks", { body: { event_type: "webhook.test", target_url: rx.url("/ok") } })).body.webhook;
    const bad = (await signedJson(a, k, "POST", "/api/partner/webhooks", { body: { event_type: "webhook.test", target_url: rx.url("/bad") } })).body.webhook;
    await signedJson(a, k, "POST", `/api/partner/webhooks/${ok.id}/test`);
    rx.then({ status: 500 });
    await signedJson(a, k, "POST", `/api/partner/webhooks/${bad.id}/test`);
    await a.ctx.dispatcher.runOnce();
    const count = async (status: string) =>
      (await a.ctx.store.get<{ n: number }>("SELECT count(*) AS n FROM webhook_deliveries WHERE status = ?", [status]))!.n;
    expect([await count("succeeded"), await count("dead_letter")]).toEqual([1, 1]);
    a.clock.advanceSeconds(31 * 86_400);
    expect((await a.ctx.jobs.runNow("webhook-prune")).ok).toBe(true);
    expect([await count("succeeded"), await count("dead_letter")]).toEqual([0, 1]);
    expect((await signedJson(a, k, "GET", "/api/partner/webhook-events?status=dead_letter")).body.events).toHaveLength(1);
    a.clock.advanceSeconds(60 * 86_400);
    await a.ctx.jobs.runNow("webhook-prune");
    expect(await count("dead_letter")).toBe(0);
  } finally {
    await a.close();
  }
});

test("issue 4: a hanging receiver holds at most WEBHOOK_PER_TARGET_CONCURRENCY sends, and another receiver's delivery does not wait for it", async () => {
  const a = await openTestApp({ env: { WEBHOOK_ALLOW_PRIVATE_TARGETS: "1", WEBHOOK_TIMEOUT_SECONDS: "20", WEBHOOK_PER_TARGET_CONCURRENCY: "2" } });
  const slow = startReceiver({ hang: true });
  const fast = startReceiver({ status: 204 });
  try {
    const k = await createKey(a);
    const s = (await signedJson(a, k, "POST", "/api/partner/webhooks", { body: { event_type: "webhook.test", target_url: slow.url() } })).body.webhook;
    const f = (await signedJson(a, k, "POST", "/api/partner/webhooks", { body: { event_type: "webhook.test", target_url: fast.url() } })).body.webhook;
    for (let i = 0; i < 5; i++) await signedJson(a, k, "POST", `/api/partner/webhooks/${s.id}/test`);
    await signedJson(a, k, "POST", `/api/partner/webhooks/${f.id}/test`);
    const pass = a.ctx.dispatcher.runOnce();
    const started = Date.now();
    while (fast.received.length === 0 && Date.now() - started < 5_000) await Bun.sleep(20);
    expect(fast.received).toHaveLength(1);
    await Bun.sleep(200);
    expect(slow.received.length).toBe(2);
    slow.stop();
    await pass;
  } finally {
    fast.stop();
    await a.close();
  }
});

test("issue 4 / spec Webhook event: a delivery record over HTTP carries every field of the spec, last_attempt_at set once tried", async () => {
  const a = await openTestApp({ env: { WEBHOOK_ALLOW_PRIVATE_TARGETS: "1" } });
  try {
    const k = await createKey(a);
    const w = (await signedJson(a, k, "POST", "/api/partner/webhooks", { body: { event_type: "webhook.test", target_url: rx.url("/rec") } })).body.webhook;
    rx.then({ status: 502 });
    await signedJson(a, k, "POST", `/api/partner/webhooks/${w.id}/test`);
    await a.ctx.dispatcher.runOnce();
    const [rec] = (await signedJson(a, k, "GET", `/api/partner/webhook-events?webhook_id=${w.id}&status=failed`)).body.events;
    expect(rec).toMatchObject({
      id: expect.any(Number),
      webhook_id: w.id,
      event_type: "webhook.test",
      status: "failed",
      attempts: 1,
      is_dead_letter: false,
      reason_tag: "http_error",
      last_error: expect.any(String),
      target_url: rx.url("/rec"),
      created_at: expect.any(String),
      last_attempt_at: expect.any(String),
      delivered_at: null,
    });
  } finally {
    await a.close();
  }
});

test("issue 4: webhook.delivery_failed is never raised about a webhook.delivery_failed delivery (no recursion between two failing watchers)", async () => {
  const a = await openTestApp({ env: { WEBHOOK_ALLOW_PRIVATE_TARGETS: "1", WEBHOOK_MAX_ATTEMPTS: "1" } });
  const down = startReceiver({ status: 500 });
  try {
    const k = await createKey(a);
    const hook = (body: object) => signedJson(a, k, "POST", "/api/partner/webhooks", { body });
    const w = (await hook({ event_type: "webhook.test", target_url: down.url("/t") })).body.webhook;
    await hook({ event_type: "webhook.delivery_failed", target_url: down.url("/w1") });
    await hook({ event_type: "webhook.delivery_failed", target_url: down.url("/w2") });
    await signedJson(a, k, "POST", `/api/partner/webhooks/${w.id}/test`);
    for (let i = 0; i < 5; i++) await a.ctx.dispatcher.runOnce();
    const n = async (sql: string) => (await a.ctx.store.get<{ n: number }>(sql, []))!.n;
    expect(await n("SELECT count(*) AS n FROM webhook_deliveries")).toBe(3);
    expect(await n("SELECT count(*) AS n FROM webhook_deliveries WHERE status = 'dead_letter'")).toBe(3);
    expect(down.received.map((r) => r.path).sort()).toEqual(["/t", "/w1", "/w2"]);
  } finally {
    down.stop();
    await a.close();
  }
});
