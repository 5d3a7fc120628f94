import { afterEach, describe, expect, test } from "bun:test";
import { SANDBOX_FIXTURE_ENDPOINTS } from "../../src/partner/capabilities";
import type { TestApp } from "../support/app";
import { createKey, signedJson } from "../support/partner";
import { countWhere, expectSandboxFields, fixtureUsers, rows, SANDBOX, sandboxApp, sandboxKey, sb } from "./support";

let h = undefined as unknown as TestApp;
afterEach(async () => {
  await h?.close();
  h = undefined as unknown as TestApp;
});

describe("GET /api/partner/sandbox/verify", () => {
  test("a signed round trip: the key, the sandbox policy and the fixtures seeded on this first use", async () => {
    h = await sandboxApp();
    const key = await sandboxKey(h);
    expect(await countWhere(h, "sandbox_fixtures")).toBe(0);
    const r = await sb(h, key, "GET", "/verify?include_meta=1");
    expect(r.status).toBe(200);
    expectSandboxFields(r.body, "sandbox_fixture");
    expect(r.body).toMatchObject({
      verified: true,
      partner: "Acme",
      key_id: key.keyId,
      key_mode: "sandbox",
      signature: { valid: true, timestamp_skew_seconds: 300 },
      policy: { nonce_required_on_mutations: false, idempotency_key_required: true, rate_limit_per_minute: 0 },
      fixtures: { profile: "herald-sandbox-v1", seed_key_id: key.keyId, reset_count: 0 },
    });
    expect(r.body.fixtures.users.map((u: { external_id: string }) => u.external_id)).toEqual(["fx-alice", "fx-bob", "fx-carol"]);
    expect(r.body.meta.request_id).toBe(r.headers.get("x-request-id"));
    // Seeded once, recorded, all rows in sandbox mode.
    expect(await rows(h, "SELECT partner, seed_key_id FROM sandbox_fixtures")).toEqual([{ partner: "Acme", seed_key_id: key.keyId }]);
    expect(await countWhere(h, "partner_users", "mode = 'sandbox'")).toBe(3);
    expect(await countWhere(h, "partner_users", "mode = 'live'")).toBe(0);
    await sb(h, key, "GET", "/verify");
    expect(await countWhere(h, "partner_users")).toBe(3);
  });

  test("every sandbox key of a partner shares one practice state; another partner gets its own", async () => {
    h = await sandboxApp();
    const first = await sandboxKey(h);
    const second = await sandboxKey(h);
    const other = await sandboxKey(h, { partner: "Globex" });
    await sb(h, first, "GET", "/verify");
    const r = await sb(h, second, "GET", "/verify");
    expect(r.body.fixtures.seed_key_id).toBe(first.keyId);
    const g = await sb(h, other, "GET", "/verify");
    expect(g.body.fixtures.seed_key_id).toBe(other.keyId);
    expect(await countWhere(h, "partner_users", "partner = 'Acme'")).toBe(3);
    expect(await countWhere(h, "partner_users", "partner = 'Globex'")).toBe(3);
  });
});

describe("fixtures seeded once", () => {
  test("two concurrent first calls of a partner's sandbox routes seed the fixtures once and see the same users", async () => {
    h = await sandboxApp();
    const first = await sandboxKey(h);
    const second = await sandboxKey(h);
    // Both reach openSandbox before either has seeded: neither finds a record, both try to seed.
    const [a, b] = await Promise.all([sb(h, first, "GET", "/verify"), sb(h, second, "GET", "/users?limit=200")]);
    expect(a.status).toBe(200);
    expect(b.status).toBe(200);
    const ids = a.body.fixtures.user_ids as number[];
    expect(ids).toHaveLength(3);
    expect((b.body.users as Array<{ id: number }>).map((u) => u.id).sort((x, y) => x - y)).toEqual([...ids].sort((x, y) => x - y));
    expect(await rows(h, "SELECT partner FROM sandbox_fixtures")).toEqual([{ partner: "Acme" }]);
    expect(await countWhere(h, "partner_users", "partner = 'Acme' AND mode = 'sandbox'")).toBe(3);
    expect(await countWhere(h, "salutes_ledger", "partner = 'Acme' AND mode = 'sandbox'")).toBe(5);
    // A third key after the race sees the same record.
    const later = await sb(h, await sandboxKey(h), "GET", "/verify");
    expect(later.body.fixtures.user_ids).toEqual(ids);
  });

  test("many concurrent first calls over several keys: one seed", async () => {
    h = await sandboxApp();
    const keys = [await sandboxKey(h), await sandboxKey(h), await sandboxKey(h)];
    const answers = await Promise.all(keys.flatMap((k) => [sb(h, k, "GET", "/verify"), sb(h, k, "GET", "/verify")]));
    for (const r of answers) expect(r.status).toBe(200);
    const seeds = new Set(answers.map((r) => JSON.stringify([r.body.fixtures.seed_key_id, r.body.fixtures.user_ids])));
    expect(seeds.size).toBe(1);
    expect(await countWhere(h, "sandbox_fixtures")).toBe(1);
    expect(await countWhere(h, "partner_users")).toBe(3);
  });
});

describe("GET /api/partner/sandbox/token-status", () => {
  test("a fixed fixture profile with exact decimal strings and a placeholder rpc_url", async () => {
    h = await sandboxApp();
    const r = await sb(h, await sandboxKey(h), "GET", "/token-status");
    expect(r.status).toBe(200);
    expectSandboxFields(r.body, "sandbox_fixture");
    expect(r.body).toMatchObject({
      decimals: 6,
      rpc_url: "sandbox://fixture",
      chain: {
        total_supply: "1000000000",
        treasury_balance: "150000000",
        reserve_balance: "100000000",
        tracked_treasury_balance: "250000000",
        circulating_supply: "750000000",
        holders: 4242,
        holders_source: "sandbox_fixture",
      },
      raw: { total_supply: "1000000000000000", circulating_supply: "750000000000000" },
    });
    expect(r.body.mint).toMatch(/^[1-9A-HJ-NP-Za-km-z]{32,44}$/);
    const again = await sb(h, await sandboxKey(h, { partner: "Globex" }), "GET", "/token-status");
    expect(again.body.mint).toBe(r.body.mint);
  });

  test("needs the read scope", async () => {
    h = await sandboxApp();
    const r = await sb(h, await sandboxKey(h, { scopes: ["users"] }), "GET", "/token-status");
    expect(r.status).toBe(403);
    expect(r.body.message).toContain('"read" scope');
  });
});

describe("POST /api/partner/sandbox/donation-claim", () => {
  const claim = { campaign_id: "spring-drive", amount: "012.50", recipient: { email: "Someone@Example.com" } };

  test("stores a sandbox claim, emits donation.claim to sandbox webhooks, never queues an email", async () => {
    h = await sandboxApp();
    const key = await sandboxKey(h);
    const { alice } = await fixtureUsers(h, key);
    const r = await sb(h, key, "POST", "/donation-claim", { body: { ...claim, user_id: alice.id } });
    expect(r.status).toBe(200);
    expectSandboxFields(r.body, "sandbox_state", true);
    expect(r.body).toMatchObject({
      status: "sandbox_preview",
      claim_status: "sandbox_preview",
      partner_key_id: key.keyId,
      email_sent: false,
      email_status: "not_sent_sandbox",
      claim_campaign_id: "spring-drive",
      requested_claim: {
        campaign_id: "spring-drive",
        amount: "12.5",
        recipient: { email: "Someone@Example.com", wallet_address: null },
        user_id: String(alice.id),
      },
    });
    expect(r.body.claim_code).toMatch(/^dc_[a-z2-7]{32}$/);
    expect(r.body.claim_url).toBe(`http://localhost:3000/claim/${r.body.claim_code}?sandbox=1`);
    expect(await rows(h, "SELECT mode, partner, key_id, amount FROM donation_claims")).toEqual([
      { mode: "sandbox", partner: "Acme", key_id: key.keyId, amount: "12.5" },
    ]);
    expect(await countWhere(h, "email_outbox")).toBe(0);
    expect(await rows(h, "SELECT mode FROM events WHERE event_type = 'donation.claim'")).toEqual([{ mode: "sandbox" }]);
    // The sandbox claim is invisible to a live key of the same partner.
    const live = await createKey(h, { partner: "Acme" });
    const seen = await signedJson(h, live, "GET", `/api/partner/donation-claims/${r.body.claim_code}`);
    expect(seen.status).toBe(404);
  });

  test("bad input is 400 and stores nothing; a suspended user is 409; the same Idempotency-Key replays", async () => {
    h = await sandboxApp();
    const key = await sandboxKey(h);
    const { carol } = await fixtureUsers(h, key);
    for (const body of [{ ...claim, amount: "-1" }, { ...claim, recipient: {} }, { ...claim, campaign_id: "bad id!" }, { ...claim, extra: 1 }, "not json"]) {
      const bad = await sb(h, key, "POST", "/donation-claim", { body });
      expect(bad.status).toBe(400);
      expect(bad.body.error).toBe("invalid_payload");
    }
    const suspended = await sb(h, key, "POST", "/donation-claim", { body: { ...claim, user_id: carol.id } });
    expect(suspended.status).toBe(409);
    expect((await sb(h, key, "POST", "/donation-claim", { body: { ...claim, user_id: 999999 } })).status).toBe(404);
    expect(await countWhere(h, "donation_claims")).toBe(0);
    const first = await sb(h, key, "POST", "/donation-claim", { body: claim, idempotencyKey: "claim-1" });
    const again = await sb(h, key, "POST", "/donation-claim", { body: claim, idempotencyKey: "claim-1" });
    expect(again.status).toBe(409);
    expect(again.body).toMatchObject({
      error: "idempotency_replay",
      original_response: { claim_code: first.body.claim_code, live_side_effects_performed: false },
    });
    expect((await sb(h, key, "POST", "/donation-claim", { body: claim, idempotencyKey: null })).body.error).toBe("idempotency_key_required");
    expect(await countWhere(h, "donation_claims")).toBe(1);
  });

  test("needs the donation scope", async () => {
    h = await sandboxApp();
    const r = await sb(h, await sandboxKey(h, { scopes: ["read"] }), "POST", "/donation-claim", { body: claim });
    expect(r.status).toBe(403);
    expect(r.body.message).toContain('"donation" scope');
  });
});

describe("POST /api/partner/sandbox/reset", () => {
  test("wipes every sandbox row of the partner in one go and restores the same fixtures", async () => {
    h = await sandboxApp();
    const key = await sandboxKey(h);
    const before = await fixtureUsers(h, key);
    await sb(h, key, "POST", "/users", { body: { external_id: "mine" } });
    await sb(h, key, "POST", "/salutes/credit", { body: { user_id: String(before.bob.id), amount: 5, reason: "quest", source: "test" } });
    await sb(h, key, "POST", "/donation-claim", { body: { campaign_id: "c", amount: 1, recipient: { email: "a@example.com" } } });
    await sb(h, key, "POST", "/webhooks", { body: { event_type: "salutes.credit", target_url: "http://127.0.0.1:9/x" } });
    const other = await sandboxKey(h, { partner: "Globex" });
    await sb(h, other, "GET", "/verify");

    const r = await sb(h, key, "POST", "/reset");
    expect(r.status).toBe(200);
    expectSandboxFields(r.body, "sandbox_fixture", true);
    expect(r.body.deleted).toMatchObject({ users: 4, wallets: 4, balances: 3, donation_claims: 1, webhooks: 1 });
    expect(r.body.fixtures).toMatchObject({ seed_key_id: key.keyId, reset_count: 1 });
    for (const table of ["webhooks", "donation_claims", "webhook_deliveries"]) expect(await countWhere(h, table, "partner = 'Acme'")).toBe(0);
    expect(await countWhere(h, "partner_users", "partner = 'Acme'")).toBe(3);
    expect(await countWhere(h, "partner_users", "partner = 'Globex'")).toBe(3); // another partner untouched

    // Same fixture content (ids are new: address fixtures by external_id after a reset).
    const after = await fixtureUsers(h, key);
    for (const name of ["alice", "bob", "carol"] as const) {
      const { id: _a, created_at: _b, updated_at: _c, wallets: wa, ...restA } = before[name];
      const { id: _d, created_at: _e, updated_at: _f, wallets: wb, ...restB } = after[name];
      expect(restB).toEqual(restA);
      expect(wb.map((w: { wallet_address: string; label: string }) => [w.wallet_address, w.label])).toEqual(
        wa.map((w: { wallet_address: string; label: string }) => [w.wallet_address, w.label]),
      );
    }
    const bal = await sb(h, key, "GET", `/salutes/balance?user_id=${after.bob.id}`);
    expect(bal.body.balance).toBeGreaterThan(0);
    expect((await sb(h, key, "GET", `/salutes/balance?user_id=${before.bob.id}`)).status).toBe(404);
  });

  test("two resets at once take turns: both succeed and one set of fixtures remains", async () => {
    h = await sandboxApp();
    const a = await sandboxKey(h);
    const b = await sandboxKey(h);
    await sb(h, a, "POST", "/users", { body: { external_id: "mine" } });
    const [ra, rb] = await Promise.all([sb(h, a, "POST", "/reset"), sb(h, b, "POST", "/reset")]);
    expect([ra.status, rb.status]).toEqual([200, 200]);
    expect([ra.body.fixtures.reset_count, rb.body.fixtures.reset_count].sort()).toEqual([1, 2]);
    const last = ra.body.fixtures.reset_count === 2 ? ra : rb;
    expect(await rows(h, "SELECT seed_key_id, reset_count FROM sandbox_fixtures")).toEqual([{ seed_key_id: last.body.fixtures.seed_key_id, reset_count: 2 }]);
    expect(await countWhere(h, "partner_users", "partner = 'Acme' AND mode = 'sandbox'")).toBe(3);
    expect((await sb(h, a, "GET", "/verify")).body.fixtures.user_ids).toEqual(last.body.fixtures.user_ids);
  });

  test("a reset with another key of the partner reseeds from that key; unknown body fields are 400", async () => {
    h = await sandboxApp();
    const a = await sandboxKey(h);
    const b = await sandboxKey(h);
    const seededByA = (await sb(h, a, "GET", "/verify")).body.fixtures;
    const bad = await sb(h, b, "POST", "/reset", { body: { everything: true } });
    expect(bad.status).toBe(400);
    expect(bad.body.details[0]).toMatchObject({ field: "everything" });
    const r = await sb(h, b, "POST", "/reset", { body: {} });
    expect(r.body.fixtures.seed_key_id).toBe(b.keyId);
    // Another seed, other wallets and amounts: the digest of the generated plan differs.
    expect(r.body.fixtures.plan_digest).not.toBe(seededByA.plan_digest);
    expect((await sb(h, a, "GET", "/verify")).body.fixtures.seed_key_id).toBe(b.keyId);
  });
});

/** Every sandbox route, with the scope it needs (null: any sandbox key). */
const SANDBOX_ROUTES: Array<[method: string, path: string, scope: string | null]> = [
  ["GET", "/verify", null],
  ["GET", "/token-status", "read"],
  ["GET", "/promotion-report", null],
  ["POST", "/donation-claim", "donation"],
  ["POST", "/reset", null],
  ["GET", "/salutes/balance?user_id=1", "read"],
  ["POST", "/salutes/credit", "credit"],
  ["POST", "/salutes/debit", "debit"],
  ["GET", "/salutes/ledger?user_id=1", "ledger"],
  ["GET", "/users", "read"],
  ["POST", "/users", "users"],
  ["GET", "/users/1", "read"],
  ["PATCH", "/users/1", "users"],
  ["POST", "/users/1/wallets", "users"],
  ["GET", "/webhooks", "webhooks"],
  ["POST", "/webhooks", "webhooks"],
  ["DELETE", "/webhooks/1", "webhooks"],
  ["POST", "/webhooks/1/test", "webhooks"],
  ["GET", "/webhook-events", "webhooks"],
  ["POST", "/webhook-events/replay", "webhooks"],
  ["GET", "/webhook-simulator/scenarios", "webhooks"],
  ["GET", "/webhook-simulator/run", "webhooks"],
  ["POST", "/webhook-simulator/run", "webhooks"],
];

describe("authentication and mode on every sandbox route", () => {
  test("the table above is every registered sandbox route", async () => {
    h = await sandboxApp();
    const registered = h.app.routes
      .filter((r) => r.path.startsWith(SANDBOX))
      .map((r) => `${r.method} ${r.path.slice(SANDBOX.length).replace(/:[a-z_]+/g, "1")}`)
      .sort();
    expect(registered).toEqual(SANDBOX_ROUTES.map(([m, p]) => `${m} ${p.split("?")[0]}`).sort());
    // Capabilities advertise only real sandbox paths.
    const paths = new Set(h.app.routes.map((r) => r.path));
    for (const p of SANDBOX_FIXTURE_ENDPOINTS) expect(paths.has(p)).toBe(true);
  });

  test.each(SANDBOX_ROUTES)("%s %s: unsigned 401, live key 403 naming the mode, missing scope 403", async (method, path, scope) => {
    h = await sandboxApp();
    const unsigned = await h.json(`${SANDBOX}${path}`, { method });
    expect(unsigned.status).toBe(401);
    expect(unsigned.body.error).toBe("unauthorized");
    const live = await sb(h, await createKey(h), method, path, { body: method === "GET" || method === "DELETE" ? undefined : {} });
    expect(live.status).toBe(403);
    expect(live.body.error).toBe("forbidden");
    expect(live.body.message).toContain("needs a sandbox key");
    expect(live.body.message).toContain("is a live key");
    if (scope) {
      const other = scope === "read" ? "users" : "read";
      const noScope = await sb(h, await sandboxKey(h, { scopes: [other as "read"] }), method, path, {
        body: method === "GET" || method === "DELETE" ? undefined : {},
      });
      expect(noScope.status).toBe(403);
      expect(noScope.body.message).toContain(`"${scope}" scope`);
    }
    // A refused live key never seeded or wrote anything.
    expect(await countWhere(h, "partner_users")).toBe(0);
  });

  test.each([
    ["GET", "/api/partner/users"],
    ["POST", "/api/partner/users"],
    ["GET", "/api/salutes/balance?user_id=1"],
    ["POST", "/api/salutes/credit"],
    ["POST", "/api/partner/donation-claim"],
    ["GET", "/api/partner/webhooks"],
    ["POST", "/api/partner/webhook-events/replay"],
    ["GET", "/api/partner/token-status"],
  ])("a sandbox key on the live route %s %s is 403 naming the mode", async (method, path) => {
    h = await sandboxApp();
    const r = await signedJson(h, await sandboxKey(h), method, path, { body: method === "POST" ? {} : undefined });
    expect(r.status).toBe(403);
    expect(r.body.message).toContain("needs a live key");
    expect(r.body.message).toContain("is a sandbox key");
    expect(await countWhere(h, "partner_users")).toBe(0);
  });

  test("a sandbox key's capabilities list the fixture endpoints and deterministic fixtures", async () => {
    h = await sandboxApp();
    const r = await signedJson(h, await sandboxKey(h), "GET", "/api/partner/capabilities");
    expect(r.body.key_mode).toBe("sandbox");
    expect(r.body.sandbox).toMatchObject({ enabled_for_key: true, supports_deterministic_fixtures: true, promotion_policy: "sandbox_to_live_manual_approval" });
    expect(r.body.sandbox.fixture_endpoints).toContain("/api/partner/sandbox/reset");
  });
});

describe("sandbox rate limit", () => {
  test("30 requests a minute per sandbox key with the standard headers, then 429 with Retry-After", async () => {
    h = await sandboxApp({ env: { PARTNER_SANDBOX_RATE_LIMIT_PER_MINUTE: "30" } });
    const key = await sandboxKey(h);
    for (let i = 1; i <= 30; i++) {
      const r = await sb(h, key, "GET", "/token-status");
      expect(r.status).toBe(200);
      expect(r.headers.get("x-ratelimit-limit")).toBe("30");
      expect(r.headers.get("x-ratelimit-remaining")).toBe(String(30 - i));
      expect(r.headers.get("x-ratelimit-reset")).not.toBeNull();
    }
    const limited = await sb(h, key, "GET", "/users");
    expect(limited.status).toBe(429);
    expect(limited.body.error).toBe("rate_limited");
    expect(limited.headers.get("retry-after")).not.toBeNull();
    expect(limited.headers.get("x-ratelimit-remaining")).toBe("0");
    // Per key: another sandbox key is not affected; after Retry-After the key may call again (a sliding window:
    // a minute after the burst it still weighs, so the wait is what the header says, not "the next minute").
    expect((await sb(h, await sandboxKey(h), "GET", "/token-status")).status).toBe(200);
    h.clock.advanceSeconds(Number(limited.headers.get("retry-after")));
    expect((await sb(h, key, "GET", "/token-status")).status).toBe(200);
  });
});
