// Spec conformance: the partner API against concrete statements of the service interface. Each test names
// the spec lines it checks.
import { afterEach, describe, expect, test } from "bun:test";
import { openTestApp, type TestApp } from "../support/app";
import { createKey, signedInit, signedJson, type TestKey } from "../support/partner";

let h: TestApp;
afterEach(async () => {
  await h?.close();
  h = undefined as unknown as TestApp;
});

const newUser = async (k: TestKey, ext = "ext-1") =>
  (await signedJson(h, k, "POST", "/api/partner/users", { body: { external_id: ext, username: `user${ext.replace(/[^a-z0-9]/gi, "")}`, display_name: "U" } }))
    .body.user.id as number;

describe("capabilities, status, usage, errors.json", () => {
  test("capabilities: fields, query_support.include_meta, meta block, If-Modified-Since → 304", async () => {
    h = await openTestApp();
    const k = await createKey(h);
    const r = await signedJson(h, k, "GET", "/api/partner/capabilities?include_meta=1");
    expect(r.status).toBe(200);
    expect(r.body).toMatchObject({ success: true, partner: "Acme", key_id: k.keyId, key_mode: "live", query_support: { include_meta: true } });
    expect(Object.keys(r.body.sandbox)).toEqual(
      expect.arrayContaining(["enabled_for_key", "verify_endpoint", "promotion_report_endpoint", "supports_deterministic_fixtures", "fixture_endpoints"]),
    );
    expect(r.body.sandbox.promotion_policy).toBe("sandbox_to_live_manual_approval");
    // Discovery order: capabilities → status → token-status → errors.json, all linked from docs.
    expect(r.body.docs).toMatchObject({ status: "/api/partner/status", token_status: "/api/partner/token-status", errors: "/api/partner/errors.json" });
    expect(r.body.meta.request_id).toBe(r.headers.get("x-request-id")!);
    expect(r.body.meta.generated_at_utc).toMatch(/Z$/);
    const lm = r.headers.get("last-modified")!;
    const again = await h.request("/api/partner/capabilities", signedInit(h, k, "GET", "/api/partner/capabilities", { headers: { "If-Modified-Since": lm } }));
    expect(again.status).toBe(304);
  });

  test("status, usage analytics and the error catalog carry the spec's fields", async () => {
    h = await openTestApp();
    const k = await createKey(h);
    const s = (await signedJson(h, k, "GET", "/api/partner/status")).body;
    expect(s.overall_status).toBe("ok");
    expect(typeof s.endpoint_percentiles_available).toBe("boolean");
    expect(Object.keys(s.endpoint_percentiles_ms).sort()).toEqual(["p50_ms", "p95_ms", "p99_ms"]);
    expect(Object.keys(s.request_metrics)).toEqual(expect.arrayContaining(["total_requests", "error_requests"]));
    expect(Object.keys(s.webhook_delivery_health).sort()).toEqual(["dead_letter_events", "delivered_events", "failed_events", "pending_events"]);
    expect(Object.keys(s.delivery_slo_controls)).toEqual(
      expect.arrayContaining(["max_attempts", "timeout_seconds", "retry_base_seconds", "retry_max_seconds"]),
    );

    const u = (await signedJson(h, k, "GET", "/api/partner/analytics/usage?hours=24")).body;
    expect(Object.keys(u.window).sort()).toEqual(["end_utc", "hours", "start_utc"]);
    expect(u.window.hours).toBe(24);
    expect(Object.keys(u.request_metrics)).toEqual(
      expect.arrayContaining(["total_requests", "success_requests", "error_requests", "rate_limited_requests", "endpoint_breakdown"]),
    );
    expect(Object.keys(u.request_metrics.endpoint_breakdown[0]).sort()).toEqual(["error_rate_pct", "errors", "path", "requests"]);
    expect(Object.keys(u.latency_metrics_ms.overall)).toEqual(expect.arrayContaining(["samples", "p50_ms", "p95_ms", "p99_ms"]));

    const cat = (await signedJson(h, k, "GET", "/api/partner/errors.json")).body;
    expect(cat.count).toBe(cat.entries.length);
    const rl = cat.entries.find((e: any) => e.error_code === "rate_limited");
    expect(rl).toMatchObject({ http_status: 429, category: "throttling", retry_class: "retry_after" });
    for (const e of cat.entries) {
      expect(Object.keys(e)).toEqual(
        expect.arrayContaining([
          "error_code",
          "title",
          "category",
          "http_status",
          "retry_class",
          "retry_behavior",
          "retry_after_seconds",
          "available_in_modes",
          "endpoint_groups",
          "recovery_links",
        ]),
      );
    }
    const table: Record<string, number> = {
      rate_limited: 429,
      replay_detected: 409,
      idempotency_replay: 409,
      unauthorized: 401,
      forbidden: 403,
      db_unavailable: 503,
      server_error: 500,
    };
    for (const [code, status] of Object.entries(table)) expect(cat.by_code[code].http_status).toBe(status);
    const dev = (await h.json("/developers/api-errors.json")).body;
    expect(Object.keys(dev.by_code).length).toBe(dev.count);
  });
});

describe("lists, users, salutes", () => {
  test("users list: count, query echo (limit, offset, cursor + filters), pagination {has_more, next_offset, next_cursor}", async () => {
    h = await openTestApp();
    const k = await createKey(h);
    for (const e of ["a1", "a2", "a3"]) await newUser(k, e);
    const p1 = (await signedJson(h, k, "GET", "/api/partner/users?limit=2&status=active")).body;
    expect(p1.count).toBe(2);
    expect(p1.query).toMatchObject({ limit: 2, offset: 0, cursor: null, status: "active" });
    expect(p1.pagination).toMatchObject({ has_more: true, next_offset: 2 });
    expect(typeof p1.pagination.next_cursor).toBe("string");
    const p2 = (await signedJson(h, k, "GET", `/api/partner/users?limit=2&cursor=${p1.pagination.next_cursor}`)).body;
    expect(p2.count).toBe(1);
    expect(p2.pagination).toEqual({ has_more: false, next_offset: null, next_cursor: null });
    const withWallets = (await signedJson(h, k, "GET", "/api/partner/user-lookup?q=a1&include_wallets=1")).body;
    expect(Array.isArray(withWallets.users[0].wallets)).toBe(true);
  });

  test("user and wallet link fields: is_primary and verified are 0/1 integers; wallet verification shape", async () => {
    h = await openTestApp();
    const k = await createKey(h);
    const W = "So11111111111111111111111111111111111111112";
    const c = await signedJson(h, k, "POST", "/api/partner/users", { body: { external_id: "w1", username: "walley", display_name: "W", wallet_address: W } });
    expect(c.status).toBe(201);
    expect(c.body.external_id).toBe("w1");
    expect(c.body.user).toMatchObject({ external_id: "w1", status: "active", is_verified: false, wallet_address: W });
    expect(c.body.user.wallets[0]).toMatchObject({ blockchain: "solana", wallet_address: W, is_primary: 1, verified: 0 });
    const v = (await signedJson(h, k, "GET", `/api/partner/wallet-verification/${W}`)).body;
    expect(Object.keys(v.wallet_states).sort()).toEqual(["connected_session", "hidden", "linked", "stale_verification", "verified"]);
    expect(Object.keys(v.verification)).toEqual(
      expect.arrayContaining(["verified", "verified_at_utc", "verification_age_days", "freshness", "status_text", "reverify_days"]),
    );
    expect(v.owner).toMatchObject({ user_id: c.body.user.id, external_id: "w1", is_primary: true, is_hidden: false });
    expect(v.state_model).toEqual(["linked", "connected_session", "verified", "stale_verification", "hidden"]);
  });

  test("salutes: credit/debit result, balance (user_id string, partner_key_id), ledger query and pagination", async () => {
    h = await openTestApp();
    const k = await createKey(h);
    const id = String(await newUser(k));
    const cr = await signedJson(h, k, "POST", "/api/salutes/credit", {
      body: { user_id: id, amount: 12.5, reason: "quest", source: "app" },
      idempotencyKey: "idem-1",
    });
    expect(cr.body).toMatchObject({ success: true, user_id: id, balance: 12.5, delta: 12.5, idempotency_key: "idem-1" });
    expect(Number.isInteger(cr.body.ledger_entry_id)).toBe(true);
    const db = await signedJson(h, k, "POST", "/api/salutes/debit", { body: { user_id: id, amount: 2.25, reason: "shop", source: "app" } });
    expect(db.body).toMatchObject({ user_id: id, balance: 10.25, delta: -2.25 });
    const bal = (await signedJson(h, k, "GET", `/api/salutes/balance?user_id=${id}`)).body;
    expect(bal).toEqual({ success: true, user_id: id, balance: 10.25, partner_key_id: k.keyId });
    const led = (await signedJson(h, k, "GET", `/api/salutes/ledger?user_id=${id}&limit=1`)).body;
    expect(led.query).toMatchObject({ limit: 1, offset: 0, order: "desc", reason: null, source: null });
    expect(led.pagination).toMatchObject({ has_more: true, next_offset: 1 });
    expect(led.ledger[0]).toMatchObject({ user_id: id, delta: -2.25, balance_after: 10.25, reason: "shop", source: "app" });
    // Errors of the spec's table: a completed key replays 409 idempotency_replay; a reused nonce is 409 replay_detected.
    const again = await signedJson(h, k, "POST", "/api/salutes/credit", {
      body: { user_id: id, amount: 12.5, reason: "quest", source: "app" },
      idempotencyKey: "idem-1",
    });
    expect(again.status).toBe(409);
    expect(again.body.error).toBe("idempotency_replay");
    const nonce = "ab".repeat(16);
    await signedJson(h, k, "POST", "/api/salutes/credit", { body: { user_id: id, amount: 1, reason: "r", source: "s" }, nonce });
    const reused = await signedJson(h, k, "POST", "/api/salutes/credit", { body: { user_id: id, amount: 1, reason: "r", source: "s" }, nonce });
    expect([reused.status, reused.body.error]).toEqual([409, "replay_detected"]);
  });
});

describe("authentication and scopes", () => {
  test("401 without a signature, 403 for a missing scope, per the scope table", async () => {
    h = await openTestApp();
    expect((await h.json("/api/partner/capabilities")).status).toBe(401);
    const full = await createKey(h);
    const id = await newUser(full);
    const expectations: Array<[string, string, string, unknown?]> = [
      ["read", "GET", `/api/salutes/balance?user_id=${id}`],
      ["read", "GET", "/api/partner/user-lookup?q=x"],
      ["read", "GET", `/api/partner/users/${id}`],
      ["credit", "POST", "/api/salutes/credit", { user_id: String(id), amount: 1, reason: "r", source: "s" }],
      ["ledger", "GET", `/api/salutes/ledger?user_id=${id}`],
      ["users", "PATCH", `/api/partner/users/${id}`, { display_name: "Z" }],
      ["webhooks", "GET", "/api/partner/webhooks"],
    ];
    for (const [scope, method, path, body] of expectations) {
      const allowed = await createKey(h, { scopes: [scope as any] });
      const other = await createKey(h, { scopes: [scope === "read" ? "webhooks" : "read"] });
      expect((await signedJson(h, allowed, method, path, body ? { body } : {})).status).toBeLessThan(400);
      const refused = await signedJson(h, other, method, path, body ? { body } : {});
      expect([refused.status, refused.body.error]).toEqual([403, "forbidden"]);
    }
  });

  test("timestamps more than 300 s off are 401; a nonce is required on mutations", async () => {
    h = await openTestApp();
    const k = await createKey(h);
    const now = Math.floor(h.clock.now().getTime() / 1000);
    expect((await signedJson(h, k, "GET", "/api/partner/capabilities", { timestamp: now - 301 })).status).toBe(401);
    expect((await signedJson(h, k, "GET", "/api/partner/capabilities", { timestamp: now + 299 })).status).toBe(200);
    expect((await signedJson(h, k, "POST", "/api/partner/webhook-events/replay", { body: { event_ids: [1] }, nonce: null })).status).toBe(401);
  });

  test("quickstart preview order for a live and a sandbox key", async () => {
    h = await openTestApp();
    const live = await createKey(h);
    const sb = await createKey(h, { mode: "sandbox" });
    const order = async (k: TestKey) =>
      (await h.json(`/api/public/quickstart/verify-key?api_key=${k.keyId}&client=curl`)).body.onboarding_order.map((s: any) => s.path);
    expect(await order(live)).toEqual(["/api/partner/capabilities", "/api/partner/status", "/api/partner/token-status", "/api/partner/errors.json"]);
    expect(await order(sb)).toEqual([
      "/api/partner/capabilities",
      "/api/partner/sandbox/verify",
      "/api/partner/sandbox/token-status",
      "/api/partner/sandbox/promotion-report",
      "/api/partner/errors.json",
    ]);
  });
});

describe("rate limits", () => {
  test("webhook endpoints: 120 per minute per key, X-RateLimit-* on answers and Retry-After on the 429", async () => {
    h = await openTestApp();
    const k = await createKey(h);
    let last: Awaited<ReturnType<typeof signedJson>> | undefined;
    for (let i = 0; i < 121; i++) last = await signedJson(h, k, "GET", i % 2 ? "/api/partner/webhooks" : "/api/partner/webhook-events");
    expect(last!.status).toBe(429);
    expect(last!.body.error).toBe("rate_limited");
    expect(last!.headers.get("x-ratelimit-limit")).toBe("120");
    expect(last!.headers.get("x-ratelimit-remaining")).toBe("0");
    expect(Number(last!.headers.get("x-ratelimit-reset"))).toBeGreaterThan(h.clock.now().getTime() / 1000);
    expect(Number(last!.headers.get("retry-after"))).toBeGreaterThan(0);
    // Another route group of the same key is not spent by it.
    expect((await signedJson(h, k, "GET", "/api/partner/capabilities")).status).toBe(200);
  });

  test("sandbox keys: 30 per minute", async () => {
    h = await openTestApp();
    const sb = await createKey(h, { mode: "sandbox" });
    const statuses: number[] = [];
    for (let i = 0; i < 31; i++) statuses.push((await signedJson(h, sb, "GET", "/api/partner/sandbox/verify")).status);
    expect(statuses.slice(0, 30).every((s) => s === 200)).toBe(true);
    expect(statuses[30]).toBe(429);
  });
});

describe("tenants and modes", () => {
  test("another partner, and the sandbox, never see or change a live partner's rows", async () => {
    h = await openTestApp();
    const a = await createKey(h);
    const b = await createKey(h, { partner: "Other" });
    const sb = await createKey(h, { mode: "sandbox" });
    const id = await newUser(a);
    await signedJson(h, a, "POST", "/api/salutes/credit", { body: { user_id: String(id), amount: 7, reason: "r", source: "s" } });
    const wh = (await signedJson(h, a, "POST", "/api/partner/webhooks", { body: { event_type: "salutes.credit", target_url: "https://example.com/h" } })).body
      .webhook.id;
    expect((await signedJson(h, b, "GET", `/api/partner/users/${id}`)).status).toBe(404);
    expect((await signedJson(h, b, "GET", `/api/salutes/balance?user_id=${id}`)).status).toBe(404);
    expect((await signedJson(h, b, "DELETE", `/api/partner/webhooks/${wh}`)).status).toBe(404);
    expect((await signedJson(h, b, "GET", "/api/partner/users")).body.count).toBe(0);
    expect((await signedJson(h, sb, "GET", `/api/partner/sandbox/users/${id}`)).status).toBe(404);
    expect(
      (await signedJson(h, sb, "POST", "/api/partner/sandbox/salutes/credit", { body: { user_id: String(id), amount: 1, reason: "r", source: "s" } })).status,
    ).toBe(404);
    expect((await signedJson(h, sb, "DELETE", `/api/partner/sandbox/webhooks/${wh}`)).status).toBe(404);
    expect((await signedJson(h, a, "GET", `/api/salutes/balance?user_id=${id}`)).body.balance).toBe(7);
    // A sandbox key on a live route, and a live key on a sandbox route: 403.
    expect((await signedJson(h, sb, "GET", "/api/partner/users")).status).toBe(403);
    expect((await signedJson(h, a, "GET", "/api/partner/sandbox/verify")).status).toBe(403);
  });
});
