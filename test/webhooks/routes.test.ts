import { afterEach, describe, expect, test } from "bun:test";
import { createHmac } from "node:crypto";
import { join } from "node:path";
import { openContextAsync } from "../../src/bootstrap";
import { loadConfig } from "../../src/config";
import { createLogger } from "../../src/log";
import { isPublicAddress } from "../../src/webhooks/target-policy";
import { openTestApp, type TestApp } from "../support/app";
import { seededRng } from "../support/clock";
import { createAdminToken, createKey, signedJson } from "../support/partner";
import { startReceiver, type Receiver } from "../support/receiver";

let h = undefined as unknown as TestApp;
let rx: Receiver | undefined;
afterEach(async () => {
  rx?.stop();
  rx = undefined;
  await h?.close();
  h = undefined as unknown as TestApp;
});

const create = (key: Awaited<ReturnType<typeof createKey>>, body: Record<string, unknown>) => signedJson(h, key, "POST", "/api/partner/webhooks", { body });

describe("creating webhooks", () => {
  test("answers the webhook with its secret once; lists never show it; secrets are encrypted at rest", async () => {
    h = await openTestApp({ env: { WEBHOOK_ALLOW_PRIVATE_TARGETS: "1" } });
    const key = await createKey(h);
    const r = await create(key, { event_type: "salutes.credit", target_url: "https://hooks.example.com/herald", description: "ledger sync" });
    expect(r.status).toBe(201);
    expect(r.body.webhook).toMatchObject({
      event_type: "salutes.credit",
      target_url: "https://hooks.example.com/herald",
      is_active: true,
      description: "ledger sync",
    });
    expect(r.body.webhook.secret).toMatch(/^whsec_/);
    const list = await signedJson(h, key, "GET", "/api/partner/webhooks?include_meta=1");
    expect(list.body.webhooks[0]).toMatchObject({ id: r.body.webhook.id, is_active: 1 });
    expect(JSON.stringify(list.body)).not.toContain(r.body.webhook.secret);
    expect(JSON.stringify(await h.ctx.store.all("SELECT * FROM webhooks"))).not.toContain(r.body.webhook.secret);
    expect(list.body.meta).toBeDefined();
  });

  test("an unknown event type is 400 listing the valid ones", async () => {
    h = await openTestApp();
    const r = await create(await createKey(h), { event_type: "salutes.stolen", target_url: "https://hooks.example.com/x" });
    expect(r.status).toBe(400);
    expect(r.body.details[0]).toMatchObject({ field: "event_type" });
    expect(r.body.details[0].problem).toContain("salutes.credit");
    expect(r.body.details[0].problem).toContain("webhook.delivery_failed");
  });

  // PostgreSQL's text cannot hold U+0000 and the SQLite engine refuses it alike: the client's 400 on both engines,
  // never a 500 (found by the OpenAPI fuzz on PostgreSQL; src/http/errors/error-answers.ts).
  test("a description holding U+0000 is refused with 400 on either engine, in the body or the query", async () => {
    h = await openTestApp();
    const key = await createKey(h);
    const r = await create(key, { event_type: "webhook.test", target_url: "https://hooks.example.com/x", description: "a\u0000b" });
    const list = await signedJson(h, key, "GET", "/api/partner/webhooks?event_type=a%00b");
    expect({ status: r.status, error: r.body.error, details: r.body.details }).toEqual({
      status: 400,
      error: "invalid_payload",
      details: [{ field: "body", problem: "contains U+0000 (NUL), which Herald cannot store" }],
    });
    expect({ status: list.status, error: list.body.error }).toEqual({ status: 400, error: "invalid_query" });
    expect(await h.ctx.store.get("SELECT count(*) AS n FROM webhooks")).toEqual({ n: 0 });
  });

  test("a time that is not ISO 8601 is refused as the part it came in: recover's body, the event list's query", async () => {
    h = await openTestApp();
    const key = await createKey(h);
    const id = (await create(key, { event_type: "webhook.test", target_url: "https://hooks.example.com/x" })).body.webhook.id;
    const recover = await signedJson(h, key, "POST", `/api/partner/webhooks/${id}/recover`, { body: { since: "yesterday" } });
    expect({ status: recover.status, error: recover.body.error, details: recover.body.details }).toEqual({
      status: 400,
      error: "invalid_payload",
      details: [{ field: "since", problem: "must be an ISO 8601 time such as 2026-01-01T00:00:00Z" }],
    });
    const list = await signedJson(h, key, "GET", "/api/partner/webhook-events?from=yesterday");
    expect({ status: list.status, error: list.body.error, details: list.body.details }).toEqual({
      status: 400,
      error: "invalid_query",
      details: [{ field: "query.from", problem: "must be an ISO 8601 time such as 2026-01-01T00:00:00Z" }],
    });
  });

  test.each([
    ["http://127.0.0.1:9/x", "non-public address"],
    ["http://169.254.169.254/latest/meta-data", "non-public address"],
    ["http://[::1]/x", "non-public address"],
    ["http://10.1.2.3/x", "non-public address"],
    ["http://localhost/x", "local host name"],
    ["http://metadata.google.internal/x", "local host name"],
    ["https://user:pw@hooks.example.com/x", "credentials"],
    ["ftp://hooks.example.com/x", "https"],
    ["hooks.example.com/x", "absolute URL"],
    ["https://hooks.example.com/" + "a".repeat(2048), "2048"],
  ])("target %s is refused (%s)", async (url, why) => {
    h = await openTestApp();
    const r = await create(await createKey(h), { event_type: "webhook.test", target_url: url });
    expect(r.status).toBe(400);
    expect(JSON.stringify(r.body.details)).toContain(why);
  });

  test("production requires https", async () => {
    h = await openTestApp({ env: { NODE_ENV: "production", HERALD_MASTER_KEY: "cd".repeat(32), PUBLIC_BASE_URL: "https://herald.example.com" } });
    const r = await create(await createKey(h), { event_type: "webhook.test", target_url: "http://hooks.example.com/x" });
    expect(r.status).toBe(400);
    expect(r.body.details[0].problem).toBe("must use https");
    expect(() => loadConfig({ NODE_ENV: "production", HERALD_MASTER_KEY: "cd".repeat(32), WEBHOOK_ALLOW_PRIVATE_TARGETS: "1" })).toThrow(
      /WEBHOOK_ALLOW_PRIVATE_TARGETS/,
    );
  });

  test("only public unicast addresses pass", () => {
    for (const ip of ["8.8.8.8", "2606:4700::1111", "::ffff:8.8.8.8"]) expect(isPublicAddress(ip)).toBe(true);
    for (const ip of [
      "127.0.0.1",
      "10.0.0.1",
      "172.16.0.1",
      "192.168.1.1",
      "169.254.169.254",
      "100.64.0.1",
      "0.0.0.0",
      "::1",
      "fd00:ec2::254",
      "fe80::1",
      "::ffff:127.0.0.1",
      "224.0.0.1",
      "255.255.255.255",
    ]) {
      expect({ ip, public: isPublicAddress(ip) }).toEqual({ ip, public: false });
    }
  });

  test("targets are checked again at send time: a private target is blocked even if stored", async () => {
    rx = startReceiver();
    h = await openTestApp({ env: { WEBHOOK_ALLOW_PRIVATE_TARGETS: "1" } });
    const key = await createKey(h);
    const w = await create(key, { event_type: "webhook.test", target_url: rx.url() });
    h.ctx.dispatcher.runOnce = async () => {}; // keep this process from sending; the strict one below sends
    await signedJson(h, key, "POST", `/api/partner/webhooks/${w.body.webhook.id}/test`);
    // A second process over the same database (file, or PostgreSQL database), with the production-like policy.
    const url = h.ctx.config.database.url;
    const same = url ? { DATABASE_URL: url, DATABASE_POOL_MAX: "2" } : {};
    const strict = await openContextAsync(loadConfig({ HERALD_DB_PATH: join(h.dir, "herald.db"), JOBS_ENABLED: "0", LOG_LEVEL: "silent", ...same }), {
      clock: h.clock,
      rng: seededRng("strict"),
      log: createLogger("silent"),
    });
    try {
      await strict.dispatcher.runOnce();
      const d = await strict.store.get<any>("SELECT status, reason_tag, last_error FROM webhook_deliveries");
      expect(d).toMatchObject({ status: "failed", reason_tag: "blocked_target" });
      expect(d.last_error).toContain("non-public address");
      expect(rx.received).toHaveLength(0);
    } finally {
      await strict.store.close();
    }
  });
});

describe("isolation, scopes and modes", () => {
  test("a partner never sees, tests, deletes or replays another partner's webhooks or events", async () => {
    rx = startReceiver({ status: 500 });
    h = await openTestApp({ env: { WEBHOOK_ALLOW_PRIVATE_TARGETS: "1", WEBHOOK_MAX_ATTEMPTS: "1" } });
    const a = await createKey(h, { partner: "Alpha" });
    const b = await createKey(h, { partner: "Beta" });
    const w = await create(a, { event_type: "webhook.test", target_url: rx.url() });
    const id = w.body.webhook.id;
    const t = await signedJson(h, a, "POST", `/api/partner/webhooks/${id}/test`);
    await h.ctx.dispatcher.runOnce();

    expect((await signedJson(h, b, "GET", "/api/partner/webhooks")).body.count).toBe(0);
    expect((await signedJson(h, b, "GET", "/api/partner/webhook-events")).body.count).toBe(0);
    expect((await signedJson(h, b, "GET", "/api/partner/webhooks/dlq")).body.dead_letter_count).toBe(0);
    expect((await signedJson(h, b, "POST", `/api/partner/webhooks/${id}/test`)).status).toBe(404);
    expect((await signedJson(h, b, "DELETE", `/api/partner/webhooks/${id}`)).status).toBe(404);
    const replay = await signedJson(h, b, "POST", "/api/partner/webhook-events/replay", { body: { event_ids: [t.body.delivery_id] } });
    expect(replay.body.results[0]).toMatchObject({ replayed: false, error: "not_found" });
    // The owner still can.
    expect((await signedJson(h, a, "GET", "/api/partner/webhook-events")).body.count).toBe(1);
    // Another key of the SAME partner shares its webhooks.
    const a2 = await createKey(h, { partner: "Alpha" });
    expect((await signedJson(h, a2, "GET", "/api/partner/webhooks")).body.count).toBe(1);
  });

  test("the webhooks scope is required; sandbox keys are refused on live webhook routes", async () => {
    h = await openTestApp();
    const noScope = await createKey(h, { scopes: ["read"] });
    expect((await signedJson(h, noScope, "GET", "/api/partner/webhooks")).status).toBe(403);
    const sandbox = await createKey(h, { mode: "sandbox" });
    const r = await signedJson(h, sandbox, "GET", "/api/partner/webhooks");
    expect(r.status).toBe(403);
    expect(r.body.message).toContain("live key");
  });

  test("replay needs an Idempotency-Key, and a repeat with the same key does not requeue twice", async () => {
    rx = startReceiver({ status: 500 });
    h = await openTestApp({ env: { WEBHOOK_ALLOW_PRIVATE_TARGETS: "1", WEBHOOK_MAX_ATTEMPTS: "1" } });
    const key = await createKey(h);
    const w = await create(key, { event_type: "webhook.test", target_url: rx.url() });
    const t = await signedJson(h, key, "POST", `/api/partner/webhooks/${w.body.webhook.id}/test`);
    await h.ctx.dispatcher.runOnce();
    const missing = await signedJson(h, key, "POST", "/api/partner/webhook-events/replay", { body: { event_ids: [t.body.delivery_id] }, idempotencyKey: null });
    expect(missing.status).toBe(400);
    expect(missing.body.error).toBe("idempotency_key_required");
    const first = await signedJson(h, key, "POST", "/api/partner/webhook-events/replay", {
      body: { event_ids: [t.body.delivery_id] },
      idempotencyKey: "replay-1",
    });
    expect(first.body.replayed_count).toBe(1);
    const again = await signedJson(h, key, "POST", "/api/partner/webhook-events/replay", {
      body: { event_ids: [t.body.delivery_id] },
      idempotencyKey: "replay-1",
    });
    expect(again.status).toBe(409);
    expect(again.body.original_response.replayed_count).toBe(1);
    const bad = await signedJson(h, key, "POST", "/api/partner/webhook-events/replay", { body: { event_ids: [] } });
    expect(bad.status).toBe(400);
  });
});

describe("lists, signatures and operators", () => {
  test("webhook-events filters and cursor pagination", async () => {
    rx = startReceiver();
    h = await openTestApp({ env: { WEBHOOK_ALLOW_PRIVATE_TARGETS: "1" } });
    const key = await createKey(h);
    const w = await create(key, { event_type: "webhook.test", target_url: rx.url() });
    for (let i = 0; i < 5; i++) await signedJson(h, key, "POST", `/api/partner/webhooks/${w.body.webhook.id}/test`);
    await h.ctx.dispatcher.runOnce();
    const seen: number[] = [];
    let cursor: string | null = null;
    for (let i = 0; i < 5; i++) {
      const path: string = `/api/partner/webhook-events?limit=2&status=succeeded${cursor ? `&cursor=${cursor}` : ""}`;
      const page = await signedJson(h, key, "GET", path);
      seen.push(...page.body.events.map((e: { id: number }) => e.id));
      cursor = page.body.pagination.next_cursor;
      if (!cursor) break;
    }
    expect(seen).toHaveLength(5);
    expect(new Set(seen).size).toBe(5);
    expect((await signedJson(h, key, "GET", "/api/partner/webhook-events?status=bogus")).status).toBe(400);
    expect((await signedJson(h, key, "GET", "/api/partner/webhook-events?from=notatime")).status).toBe(400);
    expect((await signedJson(h, key, "GET", `/api/partner/webhook-events?webhook_id=${w.body.webhook.id}&from=2027-01-01T00:00:00Z`)).body.count).toBe(0);
  });

  test("signature/verify recomputes the signature and explains the canonical body", async () => {
    h = await openTestApp();
    const key = await createKey(h);
    const body = '{"event_id":"evt_01","event_type":"salutes.credit","data":{"user_id":"42","delta":12.5}}';
    const good = await signedJson(h, key, "POST", "/api/partner/webhooks/signature/verify", {
      body: {
        signature: "63bbdaa4257d74150db2b2fd269934b1d09d24f4e4b7b4376bd9afcf17c97d81",
        timestamp: "1767225600",
        payload: body,
        secret: "whsec_test_0123456789",
      },
    });
    expect(good.body).toMatchObject({
      valid: true,
      expected_signature: "63bbdaa4257d74150db2b2fd269934b1d09d24f4e4b7b4376bd9afcf17c97d81",
      canonical_body: `1767225600.${body}`,
    });
    expect(good.body.validator_example).toContain("timingSafeEqual");
    const bad = await signedJson(h, key, "POST", "/api/partner/webhooks/signature/verify", {
      body: { signature: "00", timestamp: 1767225600, payload: body, secret: "whsec_test_0123456789" },
    });
    expect(bad.body.valid).toBe(false);
    expect(createHmac("sha256", "whsec_test_0123456789").update(`1767225600.${body}`).digest("hex")).toBe(good.body.expected_signature);
  });

  test("event-type catalog lists the spec's types and the test type", async () => {
    h = await openTestApp();
    const r = await h.json("/api/partner/webhooks/event-types");
    const types = r.body.event_types.map((e: { event_type: string }) => e.event_type);
    for (const t of [
      "salutes.credit",
      "salutes.debit",
      "donation.claim",
      "donation.claimed",
      "donation.claim_redeemed",
      "webhook.delivery_failed",
      "users.updated",
      "webhook.test",
    ])
      expect(types).toContain(t);
  });

  test("operators replay by delivery id or event id, with an audit row; partners cannot", async () => {
    rx = startReceiver({ status: 500 });
    h = await openTestApp({ env: { WEBHOOK_ALLOW_PRIVATE_TARGETS: "1", WEBHOOK_MAX_ATTEMPTS: "1" } });
    const key = await createKey(h);
    const token = await createAdminToken(h);
    const w = await create(key, { event_type: "webhook.test", target_url: rx.url() });
    const t = await signedJson(h, key, "POST", `/api/partner/webhooks/${w.body.webhook.id}/test`);
    await h.ctx.dispatcher.runOnce();
    const auth = { headers: { authorization: `Bearer ${token}` }, method: "POST" };
    const byEvent = await h.json(`/admin/partners/webhook-events/${t.body.event_id}/replay`, auth);
    expect(byEvent.body).toMatchObject({ success: true, event_id: t.body.event_id, requeued: 1 });
    await h.ctx.dispatcher.runOnce();
    const byId = await h.json(`/admin/partners/webhook-events/${t.body.delivery_id}/replay`, auth);
    expect(byId.body.requeued).toBe(1);
    expect((await h.json("/admin/partners/webhook-events/evt_nope/replay", auth)).status).toBe(404);
    expect((await h.json(`/admin/partners/webhook-events/${t.body.delivery_id}/replay`, { method: "POST" })).status).toBe(403);
    const audit = await h.ctx.store.all("SELECT action, target FROM admin_audit WHERE action = 'webhook_event.replay'");
    expect(audit).toHaveLength(2);
  });
});

describe("strict bodies", () => {
  test("an unknown field is refused with 400 naming it, not silently dropped", async () => {
    h = await openTestApp();
    const r = await create(await createKey(h), { event_type: "webhook.test", target_url: "https://hooks.example.com/x", descripton: "typo" });
    expect(r.status).toBe(400);
    expect(r.body.error).toBe("invalid_payload");
    expect(r.body.details).toContainEqual({ field: "descripton", problem: "is not a known field" });
    // And an unsigned request with the same body learns nothing about it.
    const unsigned = await h.json("/api/partner/webhooks", { method: "POST", headers: { "content-type": "application/json" }, body: '{"descripton":1}' });
    expect(unsigned.status).toBe(401);
  });
});
