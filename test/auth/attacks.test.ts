import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { newNonce } from "../../src/client/sign";
import { createAdminToken, createKey, signedInit, signedJson, type SignOptions, type TestKey } from "../support/partner";
import { startTarget, TARGET, type TargetApp } from "../support/target";

// Attacks on partner authentication (docs/partner-auth.md §2–§9, docs/design.md §3–§4) against the REAL signed routes —
// POST /api/salutes/credit (an effect we can count: ledger rows), GET /api/salutes/balance, GET
// /api/partner/sandbox/verify, GET /admin/partners/keys — over the suite's target: the in-process app, `bun
// src/main.ts serve` or the built binary (HERALD_TEST_TARGET). Served targets run on the wall clock: nothing here
// moves time; timestamps are signed relative to the target's clock, with margins no request takes to arrive.

let h: TargetApp;
let key: TestKey;
let adminToken: string;
let userId: string;

beforeAll(async () => {
  // Rate limits off: the attacks come in bursts from one address and one key.
  h = await startTarget({ env: { RATE_LIMIT_PARTNER_PER_MIN: "0", PARTNER_SANDBOX_RATE_LIMIT_PER_MINUTE: "0", RATE_LIMIT_WEBHOOK_PER_MIN: "0" } });
  key = await createKey(h, { partner: "Acme", mode: "live" });
  adminToken = await createAdminToken(h, "attacks-operator");
  const u = await signedJson(h, key, "POST", "/api/partner/users", { body: { external_id: "attacks-user" } });
  expect(u.status).toBe(201);
  userId = String(u.body.user.id);
});
afterAll(() => h?.stop());

const CREDIT = "/api/salutes/credit";
const creditBody = (amount = 1) => ({ user_id: userId, amount, reason: "attack_test", source: "attacks" });
const balancePath = () => `/api/salutes/balance?user_id=${userId}`;
/** Every credit is one ledger row: the effect an attack must not cause. */
const ledgerRows = async () => (await h.ctx.store.get<{ n: number }>("SELECT count(*) AS n FROM salutes_ledger WHERE user_id = ?", [Number(userId)]))!.n;
const nowSeconds = () => Math.floor(h.clock.now().getTime() / 1000);

const credit = (k: TestKey, opts: SignOptions = {}) => signedJson(h, k, "POST", CREDIT, { body: creditBody(), ...opts });
const send = (path: string, init: RequestInit) => h.json(path, init);
const headersOf = (init: RequestInit) => ({ ...(init.headers as Record<string, string>) });

function expectError(r: { status: number; body: any }, status: number, error: string) {
  expect({ status: r.status, error: r.body.error, success: r.body.success }).toEqual({ status, error, success: false });
  expect(r.body.request_id).toMatch(/\S/);
}

describe(`partner-auth attacks on real routes (${TARGET.label})`, () => {
  test("a correctly signed read and write pass (the baseline every attack below differs from)", async () => {
    expect((await signedJson(h, key, "GET", balancePath())).status).toBe(200);
    const before = await ledgerRows();
    expect((await credit(key)).status).toBe(200);
    expect(await ledgerRows()).toBe(before + 1);
  });

  test.each(["X-Partner-Key", "X-Partner-Timestamp", "X-Partner-Signature"])("missing %s: 401 naming it, no effect", async (header) => {
    const before = await ledgerRows();
    const init = signedInit(h, key, "POST", CREDIT, { body: creditBody() });
    const headers = headersOf(init);
    delete headers[header];
    const r = await send(CREDIT, { ...init, headers });
    expectError(r, 401, "unauthorized");
    expect(r.body.message.toLowerCase()).toContain(header.toLowerCase());
    expect(await ledgerRows()).toBe(before);
  });

  test("a bad signature: wrong secret, malformed hex, and an unknown key id all 401 with the same message", async () => {
    const before = await ledgerRows();
    const wrongSecret = await credit({ ...key, secret: "hsk_live_not-the-secret-0000000000000000000" });
    expectError(wrongSecret, 401, "unauthorized");
    const unknown = await credit({ keyId: "hk_live_000000000000000000000000", secret: "hsk_live_made-up-000000000000000000000000", mode: "live" });
    expectError(unknown, 401, "unauthorized");
    // An unknown key id is checked against a decoy secret: its answer does not tell that the key does not exist.
    expect(unknown.body.message).toBe(wrongSecret.body.message);
    const init = signedInit(h, key, "POST", CREDIT, { body: creditBody() });
    for (const sig of ["zz".repeat(32), "ab".repeat(31), ""]) {
      expectError(await send(CREDIT, { ...init, headers: { ...headersOf(init), "X-Partner-Signature": sig } }), 401, "unauthorized");
    }
    expect(await ledgerRows()).toBe(before);
  });

  test("tampering: a signature over another body, query, method or path is 401; the untouched request still works", async () => {
    const before = await ledgerRows();
    const good = signedInit(h, key, "POST", CREDIT, { body: creditBody(1) });
    expectError(await send(CREDIT, { ...good, body: JSON.stringify(creditBody(1000)) }), 401, "unauthorized"); // body
    expectError(await send("/api/salutes/debit", good), 401, "unauthorized"); // path: another real mutation
    expectError(await send(`${CREDIT}?include_meta=1`, good), 401, "unauthorized"); // query added
    const read = signedInit(h, key, "GET", balancePath());
    expectError(await send(`/api/salutes/balance?user_id=${Number(userId) + 1}`, read), 401, "unauthorized"); // query changed
    const list = signedInit(h, key, "GET", "/api/partner/users");
    const asPost = {
      ...list,
      method: "POST",
      headers: { ...headersOf(list), "content-type": "application/json", "X-Partner-Nonce": newNonce(), "Idempotency-Key": "tamper-method" },
    };
    expectError(await send("/api/partner/users", { ...asPost, body: JSON.stringify({ external_id: "tampered" }) }), 401, "unauthorized"); // method
    const ts = Number(headersOf(good)["X-Partner-Timestamp"]);
    expectError(await send(CREDIT, { ...good, headers: { ...headersOf(good), "X-Partner-Timestamp": String(ts - 1) } }), 401, "unauthorized");
    expectError(await send(CREDIT, { ...good, headers: { ...headersOf(good), "X-Partner-Nonce": newNonce() } }), 401, "unauthorized");
    expect(await ledgerRows()).toBe(before);
    // Nothing above consumed the nonce or the Idempotency-Key of the real request.
    expect((await send(CREDIT, good)).status).toBe(200);
    expect(await ledgerRows()).toBe(before + 1);
  });

  test("timestamps outside ±300 s both ways are 401 saying how far off; well inside, accepted", async () => {
    const before = await ledgerRows();
    for (const offset of [-400, 400, -86_400, 86_400]) {
      const r = await credit(key, { timestamp: nowSeconds() + offset });
      expectError(r, 401, "unauthorized");
      expect(r.body.message).toContain(offset > 0 ? "ahead of server time" : "behind server time");
    }
    const junk = signedInit(h, key, "GET", balancePath());
    expectError(await send(balancePath(), { ...junk, headers: { ...headersOf(junk), "X-Partner-Timestamp": "1e9" } }), 401, "unauthorized");
    expect(await ledgerRows()).toBe(before);
    for (const offset of [-200, 200]) expect((await signedJson(h, key, "GET", balancePath(), { timestamp: nowSeconds() + offset })).status).toBe(200);
  });

  test("a disabled key is 403 after a valid signature, from the next request on (disabled through the admin API)", async () => {
    const victim = await createKey(h, { partner: "Acme", mode: "live" });
    expect((await signedJson(h, victim, "GET", balancePath())).status).toBe(200);
    const disabled = await h.json(`/admin/partners/keys/${victim.keyId}/disable`, {
      method: "POST",
      headers: { authorization: `Bearer ${adminToken}`, "content-type": "application/json" },
      body: JSON.stringify({ reason: "attack test" }),
    });
    expect(disabled.body.key).toMatchObject({ key_id: victim.keyId, status: "disabled" });
    const before = await ledgerRows();
    expectError(await signedJson(h, victim, "GET", balancePath()), 403, "forbidden");
    expectError(await credit(victim), 403, "forbidden");
    // Without the secret, a disabled key looks like any other: the signature is checked first.
    expectError(await credit({ ...victim, secret: "hsk_live_not-the-secret-0000000000000000000" }), 401, "unauthorized");
    expect(await ledgerRows()).toBe(before);
  });

  test("wrong mode: a sandbox key on a live route and a live key on a sandbox route are 403", async () => {
    const sandbox = await createKey(h, { partner: "Acme", mode: "sandbox" });
    const onLive = await signedJson(h, sandbox, "GET", balancePath());
    expectError(onLive, 403, "forbidden");
    expect(onLive.body.message).toContain("needs a live key");
    const before = await ledgerRows();
    expectError(await credit(sandbox), 403, "forbidden");
    expect(await ledgerRows()).toBe(before);
    const onSandbox = await signedJson(h, key, "GET", "/api/partner/sandbox/verify");
    expectError(onSandbox, 403, "forbidden");
    expect(onSandbox.body.message).toContain("needs a sandbox key");
    expect((await signedJson(h, sandbox, "GET", "/api/partner/sandbox/verify")).status).toBe(200);
  });

  test("nonces: a replay is 409 replay_detected, also with another body; missing or malformed nonces are 401", async () => {
    const nonce = newNonce();
    const before = await ledgerRows();
    expect((await credit(key, { nonce })).status).toBe(200);
    const replay = await credit(key, { nonce });
    expectError(replay, 409, "replay_detected");
    // The same nonce, correctly signed over another body and with a new Idempotency-Key: still a replay.
    expectError(await signedJson(h, key, "POST", CREDIT, { body: creditBody(7), nonce }), 409, "replay_detected");
    // Hex case does not make a new nonce.
    expectError(await credit(key, { nonce: nonce.toUpperCase() }), 409, "replay_detected");
    expect(await ledgerRows()).toBe(before + 1);

    for (const bad of [null, "xyz", "0123456789abcde", "ghijklmnopqrstuv", "a".repeat(129)]) {
      const r = await credit(key, { nonce: bad });
      expect({ nonce: bad, status: r.status, error: r.body.error }).toEqual({ nonce: bad, status: 401, error: "unauthorized" });
    }
    expect(await ledgerRows()).toBe(before + 1);
  });

  test("idempotency: same key and body → 409 idempotency_replay with no second effect; another body → 422; none → 400", async () => {
    const before = await ledgerRows();
    const first = await credit(key, { idempotencyKey: "attack-order-1" });
    expect(first.status).toBe(200);
    const replay = await credit(key, { idempotencyKey: "attack-order-1" });
    expectError(replay, 409, "idempotency_replay");
    expect(replay.headers.get("idempotent-replayed")).toBe("true");
    expect(replay.body).toMatchObject({ original_status: 200, original_response: first.body });
    const other = await signedJson(h, key, "POST", CREDIT, { body: creditBody(2), idempotencyKey: "attack-order-1" });
    expectError(other, 422, "idempotency_key_reused");
    expectError(await credit(key, { idempotencyKey: null }), 400, "idempotency_key_required");
    expectError(await credit(key, { idempotencyKey: "has space" }), 400, "idempotency_key_required");
    expect(await ledgerRows()).toBe(before + 1);
  });

  test("idempotency under concurrency: parallel requests with one key make exactly one effect", async () => {
    const before = await ledgerRows();
    const results = await Promise.all(Array.from({ length: 8 }, () => credit(key, { idempotencyKey: "attack-burst-1" })));
    const statuses = results.map((r) => r.status);
    expect(statuses.filter((s) => s === 200)).toHaveLength(1);
    for (const r of results.filter((x) => x.status !== 200)) {
      expect(r.status).toBe(409);
      expect(["idempotency_replay", "idempotency_in_progress"]).toContain(r.body.error);
    }
    expect(await ledgerRows()).toBe(before + 1);
  });

  // The client address: a served target sees the socket's, 127.0.0.1 (or ::ffff:127.0.0.1, compared as IPv4);
  // in process app.handle has no socket and Herald takes 127.0.0.1 (src/http/core.ts clientIp). TRUST_PROXY is off,
  // so an X-Forwarded-For header cannot claim another address. The same allow-lists therefore hold for every target.
  test("IP allow-lists: a key bound to other addresses is 403 after a valid signature; one bound to 127.0.0.1 passes", async () => {
    const elsewhere = await createKey(h, { partner: "Acme", mode: "live", ips: "10.0.0.0/8, 2001:db8::/32" });
    const before = await ledgerRows();
    const refused = await credit(elsewhere, { headers: { "x-forwarded-for": "10.1.2.3" } });
    expectError(refused, 403, "forbidden");
    expect(refused.body.message).toContain("127.0.0.1");
    expect(await ledgerRows()).toBe(before);
    const local = await createKey(h, { partner: "Acme", mode: "live", ips: "127.0.0.1/32, ::1/128" });
    expect((await signedJson(h, local, "GET", balancePath())).status).toBe(200);
    expect((await credit(local)).status).toBe(200);
  });

  test("admin routes: no token, a wrong token, a partner secret or signature are 403; the admin token passes", async () => {
    const path = "/admin/partners/keys?partner=Acme";
    expectError(await h.json(path), 403, "forbidden");
    expectError(await h.json(path, { headers: { authorization: `Bearer hat_${"x".repeat(40)}` } }), 403, "forbidden");
    expectError(await h.json(path, { headers: { authorization: `Bearer ${key.secret}` } }), 403, "forbidden");
    expectError(await h.json(path, { headers: { authorization: adminToken } }), 403, "forbidden"); // no scheme
    expectError(await h.json(path, signedInit(h, key, "GET", path)), 403, "forbidden");
    const created = await h.json("/admin/partners/keys", {
      method: "POST",
      headers: { authorization: `Bearer ${adminToken.slice(0, -1)}x`, "content-type": "application/json" },
      body: JSON.stringify({ partner: "Mallory", mode: "live", scopes: ["credit"] }),
    });
    expectError(created, 403, "forbidden");
    expect(await h.ctx.store.get("SELECT count(*) AS n FROM partner_keys WHERE partner = 'Mallory'")).toEqual({ n: 0 });
    const ok = await h.json(path, { headers: { authorization: `Bearer ${adminToken}` } });
    expect(ok.status).toBe(200);
    expect(ok.body.keys.map((k: { key_id: string }) => k.key_id)).toContain(key.keyId);
    expect(JSON.stringify(ok.body)).not.toContain(key.secret);
  });
});
