// Spec conformance (second audit): "Events", "Errors" (partner error body, retry classes, the HTTP status guide),
// "Limits" and "Versioning" of the service interface.
import { afterEach, describe, expect, test } from "bun:test";
import { jsonInit, openTestApp, type TestApp } from "../support/app";
import { PartnerKeys } from "../../src/auth/keys";
import { createKey, signedInit, signedJson } from "../support/partner";
import { startReceiver } from "../support/receiver";

let h: TestApp;
afterEach(async () => {
  await h?.close();
  h = undefined as unknown as TestApp;
});

describe("events", () => {
  test("each listed event type can be subscribed to; the operations emit theirs with the envelope {event_id, event_type, data}", async () => {
    h = await openTestApp({ env: { WEBHOOK_ALLOW_PRIVATE_TARGETS: "1", WEBHOOK_TIMEOUT_SECONDS: "1", WEBHOOK_MAX_ATTEMPTS: "1" } });
    const rx = startReceiver();
    const bad = startReceiver({ status: 500 });
    try {
      const k = await createKey(h);
      const types = [
        "salutes.credit",
        "salutes.debit",
        "donation.claim",
        "donation.claimed",
        "donation.claim_redeemed",
        "webhook.delivery_failed",
        "users.updated",
      ];
      for (const event_type of types)
        expect((await signedJson(h, k, "POST", "/api/partner/webhooks", { body: { event_type, target_url: rx.url() } })).status).toBe(201);
      expect((await signedJson(h, k, "POST", "/api/partner/webhooks", { body: { event_type: "bogus.type", target_url: rx.url() } })).status).toBe(400);
      const u = (await signedJson(h, k, "POST", "/api/partner/users", { body: { external_id: "x1" } })).body.user;
      await signedJson(h, k, "POST", "/api/salutes/credit", { body: { user_id: String(u.id), amount: 2.5, reason: "r", source: "s" } });
      await signedJson(h, k, "POST", "/api/salutes/debit", { body: { user_id: String(u.id), amount: 1, reason: "r", source: "s" } });
      const c = (
        await signedJson(h, k, "POST", "/api/partner/donation-claim", { body: { campaign_id: "c", amount: "5", recipient: { email: "a@example.com" } } })
      ).body;
      await signedJson(h, k, "POST", `/api/partner/donation-claims/${c.claim_code}/redeem`, { body: {} });
      // A delivery that fails to its end raises webhook.delivery_failed for the same partner.
      const w = (await signedJson(h, k, "POST", "/api/partner/webhooks", { body: { event_type: "salutes.credit", target_url: bad.url() } })).body.webhook;
      await signedJson(h, k, "POST", `/api/partner/webhooks/${w.id}/test`);
      for (let i = 0; i < 4; i++) {
        await h.ctx.dispatcher.runOnce();
        h.clock.advance(120_000);
      }
      const got = rx.received.map((r) => JSON.parse(r.rawBody));
      for (const e of got) expect(Object.keys(e).sort()).toEqual(["data", "event_id", "event_type"]);
      const seen = new Set(got.map((e) => e.event_type));
      for (const t of ["users.updated", "salutes.credit", "salutes.debit", "donation.claim", "donation.claim_redeemed", "webhook.delivery_failed"])
        expect(seen.has(t)).toBe(true);
      expect(got.find((e) => e.event_type === "salutes.debit").data.delta).toBe(-1);
    } finally {
      rx.stop();
      bad.stop();
    }
  });
});

describe("errors", () => {
  test("retry classes of the spec's error table in the catalog", async () => {
    h = await openTestApp();
    const by = (await h.json("/developers/api-errors.json")).body.by_code;
    const want: Record<string, string> = {
      replay_detected: "retryable",
      idempotency_replay: "safe_noop",
      unauthorized: "fail_fast",
      forbidden: "fail_fast",
      db_unavailable: "retryable",
      server_error: "retryable",
    };
    for (const [code, cls] of Object.entries(want)) expect(`${code} ${by[code].retry_class}`).toBe(`${code} ${cls}`);
  });

  test("the status guide: 400, 401, 403, 409, 413 on a partner route, each with {success:false, error}", async () => {
    h = await openTestApp();
    const k = await createKey(h);
    const id = String((await signedJson(h, k, "POST", "/api/partner/users", { body: { external_id: "g1" } })).body.user.id);
    const credit = (body: unknown, o = {}) => signedJson(h, k, "POST", "/api/salutes/credit", { body, ...o });
    const cases: Array<[Promise<{ status: number; body: any }>, number, string]> = [
      [credit({ user_id: id }), 400, "invalid_payload"],
      [credit("{not json"), 400, "invalid_payload"],
      [h.json("/api/salutes/credit", jsonInit("POST", {})), 401, "unauthorized"],
      [
        signedJson(h, await createKey(h, { scopes: ["read"] }), "POST", "/api/salutes/credit", { body: { user_id: id, amount: 1, reason: "r", source: "s" } }),
        403,
        "forbidden",
      ],
      [signedJson(h, k, "POST", "/api/salutes/debit", { body: { user_id: id, amount: 1, reason: "r", source: "s" } }), 409, "insufficient_balance"],
      [credit({ user_id: id, amount: 1, reason: "r", source: "x".repeat(1_100_000) }), 413, "payload_too_large"],
    ];
    for (const [p, status, error] of cases) {
      const r = await p;
      expect([r.status, r.body.success, r.body.error]).toEqual([status, false, error]);
      expect(typeof r.body.request_id).toBe("string");
    }
    // A disabled key is 403 too (the guide: "scope missing, key disabled, or admin-only route").
    await new PartnerKeys(h.ctx).disable(k.keyId, "audit", { kind: "cli", user: "test" });
    const off = await signedJson(h, k, "GET", `/api/salutes/balance?user_id=${id}`);
    expect([off.status, off.body.error]).toEqual([403, "forbidden"]);
  });
});

describe("limits and versioning", () => {
  test("the partner general routes carry X-RateLimit-*; a 429 carries Retry-After and rate_limited", async () => {
    h = await openTestApp({ env: { RATE_LIMIT_PARTNER_PER_MIN: "3" } });
    const k = await createKey(h);
    let last: Response | undefined;
    for (let i = 0; i < 4; i++) last = await h.request("/api/partner/users", signedInit(h, k, "GET", "/api/partner/users"));
    expect(last!.status).toBe(429);
    expect(last!.headers.get("retry-after")).toMatch(/^\d+$/);
    for (const hd of ["x-ratelimit-limit", "x-ratelimit-remaining", "x-ratelimit-reset"]) expect(last!.headers.get(hd)).not.toBeNull();
    expect(((await last!.json()) as any).error).toBe("rate_limited");
  });

  test("v1 is implicit (no /api/v2/ yet); the calendar: no sunsets, 30 days' notice, reminders 7 and 1, webhook notices 30/14/7/1", async () => {
    h = await openTestApp();
    expect((await h.request("/api/v2/salutes/balance")).status).toBe(404);
    const d = (await h.json("/developers/deprecations.json")).body;
    expect(d).toMatchObject({ api_version: "v1", sunsets_scheduled: false, count: 0 });
    expect(d.policy).toMatchObject({ minimum_notice_days: 30, reminder_days_before_sunset: [7, 1], webhook_schema_notice_days: [30, 14, 7, 1] });
    for (const p of [
      "/developers/deprecations.rss",
      "/developers/deprecations-playbook.md",
      "/developers/deprecations-playbook.json",
      "/api/openapi.yaml",
      "/api/openapi-transparency.yaml",
    ])
      expect((await h.request(p)).status).toBe(200);
  });
});
