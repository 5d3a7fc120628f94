import { afterEach, describe, expect, test } from "bun:test";
import { createAdminToken, createKey, signedInit, type TestKey } from "../support/partner";
import { guardedApp, type GuardedApp } from "./support";

let g: GuardedApp;
afterEach(async () => {
  await g?.h.close();
});

const credit = (key: TestKey, opts: Parameters<typeof signedInit>[4] = {}) =>
  g.json("/t/credit", signedInit(g.h, key, "POST", "/t/credit", { body: { amount: 5 }, ...opts }));

describe("IP allow-lists", () => {
  const from = (key: TestKey, ip: string) => g.json("/t/read", signedInit(g.h, key, "GET", "/t/read", { headers: { "x-forwarded-for": ip } }));

  test("IPv4 CIDR edges", async () => {
    g = await guardedApp();
    const key = await createKey(g.h, { ips: "203.0.113.0/25, 198.51.100.7" });
    expect((await from(key, "203.0.113.0")).status).toBe(200);
    expect((await from(key, "203.0.113.127")).status).toBe(200);
    const outside = await from(key, "203.0.113.128");
    expect(outside.status).toBe(403);
    expect(outside.body.message).toContain("203.0.113.128");
    expect((await from(key, "198.51.100.7")).status).toBe(200);
    expect((await from(key, "198.51.100.8")).status).toBe(403);
    // IPv4-mapped IPv6, as a dual-stack socket reports an IPv4 client.
    expect((await from(key, "::ffff:203.0.113.5")).status).toBe(200);
  });

  test("IPv6 ranges, and garbage addresses are refused", async () => {
    g = await guardedApp();
    const key = await createKey(g.h, { ips: "2001:db8:abcd::/48" });
    expect((await from(key, "2001:db8:abcd:ffff::1")).status).toBe(200);
    expect((await from(key, "2001:db8:abce::1")).status).toBe(403);
    expect((await from(key, "203.0.113.1")).status).toBe(403);
    expect((await from(key, "not-an-ip")).status).toBe(403);
  });

  test("keys with unparseable allow-list entries are refused at creation", async () => {
    g = await guardedApp();
    expect(async () => await createKey(g.h, { ips: "10.0.0.0/33" })).toThrow(/not an IP address or CIDR range: 10.0.0.0\/33/);
    expect(async () => await createKey(g.h, { ips: "example.com" })).toThrow(/example.com/);
  });

  test("the socket address is used over a real connection when no proxy is trusted", async () => {
    g = await guardedApp({ env: { TRUST_PROXY: "0" } });
    const allowed = await createKey(g.h, { ips: "127.0.0.1/32, ::1/128" });
    const denied = await createKey(g.h, { ips: "10.0.0.0/8" });
    g.app.listen({ hostname: "127.0.0.1", port: 0 });
    try {
      const url = `http://127.0.0.1:${g.app.server!.port}/t/read`;
      const ok = await fetch(url, signedInit(g.h, allowed, "GET", "/t/read", { headers: { "x-forwarded-for": "10.1.2.3" } }));
      expect(ok.status).toBe(200);
      const no = await fetch(url, signedInit(g.h, denied, "GET", "/t/read", { headers: { "x-forwarded-for": "10.1.2.3" } }));
      expect(no.status).toBe(403);
    } finally {
      await g.app.stop(true);
    }
  });
});

describe("mode and scope", () => {
  test("a missing scope is 403 naming the scope", async () => {
    g = await guardedApp();
    const key = await createKey(g.h, { scopes: ["read"] });
    const res = await credit(key);
    expect(res.status).toBe(403);
    expect(res.body.message).toContain('"credit" scope');
    expect(await g.effects()).toBe(0);
  });

  test("a sandbox key on a live route and a live key on a sandbox route are 403 naming the mode", async () => {
    g = await guardedApp();
    const sandbox = await createKey(g.h, { mode: "sandbox" });
    const live = await createKey(g.h, { mode: "live" });
    const a = await g.json("/t/read", signedInit(g.h, sandbox, "GET", "/t/read"));
    expect(a.status).toBe(403);
    expect(a.body.message).toContain("needs a live key");
    const b = await g.json("/t/sandbox", signedInit(g.h, live, "GET", "/t/sandbox"));
    expect(b.status).toBe(403);
    expect(b.body.message).toContain("needs a sandbox key");
    // Each names where the key does work and the exact command that makes the other kind.
    expect(a.body.message).toContain(
      "works on the sandbox routes under /api/partner/sandbox/ (docs/sandbox.md lists them) and on /api/partner/capabilities, /api/partner/status, /api/partner/analytics/usage.",
    );
    expect(a.body.message).toMatch(/herald keys create --partner '[^']+' --mode live --scopes [a-z,]+$/);
    expect(b.body.message).toContain("works on the live routes under /api/partner/ and /api/salutes/");
    expect(b.body.message).toMatch(/herald keys create --partner '[^']+' --mode sandbox --scopes [a-z,]+$/);
    expect((await g.json("/t/sandbox", signedInit(g.h, sandbox, "GET", "/t/sandbox"))).status).toBe(200);
  });
});

describe("nonces", () => {
  test("mutations need a well-formed nonce", async () => {
    g = await guardedApp();
    const key = await createKey(g.h);
    const missing = await credit(key, { nonce: null });
    expect(missing.status).toBe(401);
    expect(missing.body.message).toContain("X-Partner-Nonce");
    expect((await credit(key, { nonce: "xyz" })).status).toBe(401);
    expect((await credit(key, { nonce: "0123456789abcde" })).status).toBe(401); // 15 chars
    expect((await credit(key, { nonce: "0123456789abcdef" })).status).toBe(200);
  });

  test("a reused nonce is 409 replay_detected and has no effect", async () => {
    g = await guardedApp();
    const key = await createKey(g.h);
    const nonce = "a1b2c3d4e5f60718293a4b5c6d7e8f90";
    expect((await credit(key, { nonce })).status).toBe(200);
    const again = await credit(key, { nonce });
    expect(again.status).toBe(409);
    expect(again.body.error).toBe("replay_detected");
    expect(await g.effects()).toBe(1);
  });

  test("two concurrent requests with one nonce: exactly one succeeds", async () => {
    g = await guardedApp();
    const key = await createKey(g.h);
    const nonce = "ffeeddccbbaa99887766554433221100";
    const results = await Promise.all([credit(key, { nonce }), credit(key, { nonce }), credit(key, { nonce })]);
    expect(results.map((r) => r.status).sort()).toEqual([200, 409, 409]);
    expect(await g.effects()).toBe(1);
  });

  test("sandbox mutations may omit the nonce unless SANDBOX_NONCE_REQUIRED=1", async () => {
    g = await guardedApp();
    const sandbox = await createKey(g.h, { mode: "sandbox" });
    expect((await g.json("/t/sandbox", signedInit(g.h, sandbox, "GET", "/t/sandbox"))).status).toBe(200);
    await g.h.close();
    g = await guardedApp({ env: { SANDBOX_NONCE_REQUIRED: "1" } });
    expect(g.h.ctx.config.sandboxNonceRequired).toBe(true);
  });

  test("expired nonces are pruned by the auth-prune job", async () => {
    g = await guardedApp();
    const key = await createKey(g.h);
    await credit(key, { nonce: "00000000000000000000000000000001" });
    const count = async () => (await g.h.ctx.store.get<{ n: number }>("SELECT count(*) AS n FROM partner_nonces"))!.n;
    expect(await count()).toBe(1);
    g.h.clock.advanceSeconds(601);
    await g.h.ctx.jobs.runNow("auth-prune");
    expect(await count()).toBe(0);
  });
});

describe("idempotency (docs/design.md §4)", () => {
  test("missing or malformed Idempotency-Key on a mutation is 400 idempotency_key_required", async () => {
    g = await guardedApp();
    const key = await createKey(g.h);
    expect((await credit(key, { idempotencyKey: null })).body.error).toBe("idempotency_key_required");
    expect((await credit(key, { idempotencyKey: "has space" })).body.error).toBe("idempotency_key_required");
    expect((await credit(key, { idempotencyKey: "x".repeat(256) })).status).toBe(400);
    expect(await g.effects()).toBe(0);
  });

  test("IDEMPOTENCY_REQUIRED=0 lets a mutation through without a key", async () => {
    g = await guardedApp({ env: { IDEMPOTENCY_REQUIRED: "0" } });
    expect((await credit(await createKey(g.h), { idempotencyKey: null })).status).toBe(200);
  });

  test("a completed replay is 409 idempotency_replay with the original response and no second effect", async () => {
    g = await guardedApp();
    const key = await createKey(g.h);
    const first = await credit(key, { idempotencyKey: "order-1" });
    expect(first.status).toBe(200);
    const replay = await credit(key, { idempotencyKey: "order-1" });
    expect(replay.status).toBe(409);
    expect(replay.headers.get("idempotent-replayed")).toBe("true");
    expect(replay.body).toMatchObject({ error: "idempotency_replay", original_status: 200, original_response: first.body });
    expect(await g.effects()).toBe(1);
  });

  test("the same key with another payload is 422 idempotency_key_reused", async () => {
    g = await guardedApp();
    const key = await createKey(g.h);
    expect((await credit(key, { idempotencyKey: "order-2" })).status).toBe(200);
    const other = await g.json("/t/credit", signedInit(g.h, key, "POST", "/t/credit", { body: { amount: 6 }, idempotencyKey: "order-2" }));
    expect(other.status).toBe(422);
    expect(other.body.error).toBe("idempotency_key_reused");
    expect(await g.effects()).toBe(1);
  });

  test("keys are scoped per partner key: two keys may use the same Idempotency-Key", async () => {
    g = await guardedApp();
    expect((await credit(await createKey(g.h), { idempotencyKey: "shared" })).status).toBe(200);
    expect((await credit(await createKey(g.h), { idempotencyKey: "shared" })).status).toBe(200);
    expect(await g.effects()).toBe(2);
  });

  test("a request that fails validation stores nothing; the corrected retry with the same key works", async () => {
    g = await guardedApp();
    const key = await createKey(g.h);
    const bad = await g.json("/t/credit", signedInit(g.h, key, "POST", "/t/credit", { body: { amount: "five" }, idempotencyKey: "order-3" }));
    expect(bad.status).toBe(400);
    const good = await g.json("/t/credit", signedInit(g.h, key, "POST", "/t/credit", { body: { amount: 5 }, idempotencyKey: "order-3" }));
    expect(good.status).toBe(200);
  });

  test("concurrent duplicates: exactly one effect", async () => {
    g = await guardedApp();
    const key = await createKey(g.h);
    const results = await Promise.all(Array.from({ length: 10 }, () => credit(key, { idempotencyKey: "burst-1" })));
    const statuses = results.map((r) => r.status);
    expect(statuses.filter((s) => s === 200)).toHaveLength(1);
    expect(statuses.filter((s) => s === 409)).toHaveLength(9);
    expect(await g.effects()).toBe(1);
  });

  test("while the first request is still running a duplicate gets 409 idempotency_in_progress with Retry-After", async () => {
    g = await guardedApp();
    const key = await createKey(g.h);
    let open!: () => void;
    g.setGate(new Promise<void>((r) => (open = r)));
    const first = g.json("/t/slow", signedInit(g.h, key, "POST", "/t/slow", { body: { amount: 1 }, idempotencyKey: "slow-1" }));
    // Until the first request's claim is committed (its guard awaits the store a few times before it claims).
    const claimed = async () => (await g.h.ctx.store.get<{ state: string }>("SELECT state FROM idempotency_records WHERE idempotency_key = 'slow-1'"))?.state;
    for (let i = 0; i < 500 && (await claimed()) !== "in_progress"; i++) await Bun.sleep(5);
    expect(await claimed()).toBe("in_progress");
    const dup = await g.json("/t/slow", signedInit(g.h, key, "POST", "/t/slow", { body: { amount: 1 }, idempotencyKey: "slow-1" }));
    expect(dup.status).toBe(409);
    expect(dup.body.error).toBe("idempotency_in_progress");
    expect(Number(dup.headers.get("retry-after"))).toBeGreaterThanOrEqual(1);
    open();
    expect((await first).status).toBe(200);
    const after = await g.json("/t/slow", signedInit(g.h, key, "POST", "/t/slow", { body: { amount: 1 }, idempotencyKey: "slow-1" }));
    expect(after.body.error).toBe("idempotency_replay");
    expect(await g.effects()).toBe(1);
  });

  test("records expire after IDEMPOTENCY_TTL_HOURS and are pruned", async () => {
    g = await guardedApp({ env: { IDEMPOTENCY_TTL_HOURS: "1" } });
    const key = await createKey(g.h);
    expect((await credit(key, { idempotencyKey: "ttl-1" })).status).toBe(200);
    g.h.clock.advanceSeconds(3601);
    await g.h.ctx.jobs.runNow("auth-prune");
    expect(await g.h.ctx.store.get("SELECT count(*) AS n FROM idempotency_records")).toEqual({ n: 0 });
    expect((await credit(key, { idempotencyKey: "ttl-1" })).status).toBe(200);
  });
});

describe("rate limits per key", () => {
  test("sandbox keys get PARTNER_SANDBOX_RATE_LIMIT_PER_MINUTE with headers and 429", async () => {
    g = await guardedApp({ env: { PARTNER_SANDBOX_RATE_LIMIT_PER_MINUTE: "2" } });
    const key = await createKey(g.h, { mode: "sandbox" });
    const r1 = await g.json("/t/sandbox", signedInit(g.h, key, "GET", "/t/sandbox"));
    expect(r1.headers.get("x-ratelimit-limit")).toBe("2");
    expect(r1.headers.get("x-ratelimit-remaining")).toBe("1");
    await g.json("/t/sandbox", signedInit(g.h, key, "GET", "/t/sandbox"));
    const r3 = await g.json("/t/sandbox", signedInit(g.h, key, "GET", "/t/sandbox"));
    expect(r3.status).toBe(429);
    expect(r3.body.error).toBe("rate_limited");
    expect(r3.headers.get("retry-after")).not.toBeNull();
  });
});

describe("rate limits cannot be spent by others", () => {
  test("unsigned requests naming a key do not use its quota; the key's own 429s are attributed to it", async () => {
    g = await guardedApp({ env: { PARTNER_SANDBOX_RATE_LIMIT_PER_MINUTE: "2" } });
    const key = await createKey(g.h, { mode: "sandbox" });
    for (let i = 0; i < 5; i++) {
      const forged = await g.json("/t/sandbox", { headers: { "x-partner-key": key.keyId, "x-partner-timestamp": "1", "x-partner-signature": "00" } });
      expect(forged.status).toBe(401);
    }
    expect((await g.json("/t/sandbox", signedInit(g.h, key, "GET", "/t/sandbox"))).status).toBe(200);
    expect((await g.json("/t/sandbox", signedInit(g.h, key, "GET", "/t/sandbox"))).status).toBe(200);
    expect((await g.json("/t/sandbox", signedInit(g.h, key, "GET", "/t/sandbox"))).status).toBe(429);
    // The request log records a request after its response is sent: wait for the 429's row, bounded.
    let limited: unknown[] = [];
    for (let i = 0; i < 200 && limited.length === 0; i++) {
      await Bun.sleep(5);
      await g.h.ctx.requestLog.flush();
      limited = await g.h.ctx.store.all(
        "SELECT k.key_id AS partner_key_id FROM request_log r JOIN request_log_keys k ON k.ref = r.key_ref WHERE r.status = 429",
      );
    }
    expect(limited).toEqual([{ partner_key_id: key.keyId }]);
  });

  test("a per-IP flood guard bounds unauthenticated partner traffic", async () => {
    g = await guardedApp({ env: { RATE_LIMIT_PARTNER_PER_MIN: "3" } });
    const statuses: number[] = [];
    for (let i = 0; i < 5; i++) statuses.push((await g.json("/t/read", { headers: { "x-forwarded-for": "198.51.100.9" } })).status);
    expect(statuses).toEqual([401, 401, 401, 429, 429]);
  });
});

describe("operator auth", () => {
  test("admin routes: no token, a wrong token and a partner credential are all 403", async () => {
    g = await guardedApp();
    const token = await createAdminToken(g.h);
    const key = await createKey(g.h);
    expect((await g.json("/t/admin")).status).toBe(403);
    expect((await g.json("/t/admin", { headers: { authorization: "Bearer " + "x".repeat(40) } })).status).toBe(403);
    expect((await g.json("/t/admin", { headers: { authorization: `Bearer ${key.secret}` } })).status).toBe(403);
    expect((await g.json("/t/admin", signedInit(g.h, key, "GET", "/t/admin"))).status).toBe(403);
    const ok = await g.json("/t/admin", { headers: { authorization: `Bearer ${token}` } });
    expect(ok.status).toBe(200);
    expect(ok.body.who).toBe("test-operator");
  });

  test("tokens are stored as SHA-256 hashes only", async () => {
    g = await guardedApp();
    const token = await createAdminToken(g.h);
    const rows = await g.h.ctx.store.all("SELECT * FROM admin_tokens");
    expect(JSON.stringify(rows)).not.toContain(token);
  });
});
