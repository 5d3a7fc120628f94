// Issue 3 re-verified over HTTP on the real routes: the spec's scope table route by route, a nonce on a read, an
// Idempotency-Key reused on another route or too long, the exact resend, and the allow-list behind TRUST_PROXY.
import { afterEach, expect, test } from "bun:test";
import { newNonce } from "../../src/client/sign";
import { SCOPES, type Scope } from "../../src/auth/scopes";
import { openTestApp, type TestApp } from "../support/app";
import { createAdminToken, createKey, signedInit, signedJson } from "../support/partner";
import { createLogger } from "../../src/log";

let h: TestApp;
afterEach(async () => {
  await h?.close();
});

const WALLET = "So11111111111111111111111111111111111111112";
// The spec's Scopes table: each operation and the scope it needs.
const TABLE: Array<[Scope, string, string, unknown?]> = [
  ["read", "GET", "/api/salutes/balance?user_id=1"],
  ["read", "GET", "/api/partner/user-lookup?q=abc"],
  ["read", "GET", `/api/partner/wallet-info/${WALLET}`],
  ["read", "GET", "/api/partner/users/1"],
  ["credit", "POST", "/api/salutes/credit", { user_id: "1", amount: 1, reason: "r", source: "s" }],
  ["debit", "POST", "/api/salutes/debit", { user_id: "1", amount: 1, reason: "r", source: "s" }],
  ["ledger", "GET", "/api/salutes/ledger?user_id=1"],
  ["donation", "POST", "/api/partner/donation-claim", {}],
  ["users", "POST", "/api/partner/users", { external_id: "scope-probe" }],
  ["users", "PATCH", "/api/partner/users/1", { display_name: "X" }],
  ["users", "POST", "/api/partner/users/1/wallets", { wallet: WALLET }],
  ["webhooks", "GET", "/api/partner/webhooks"],
  ["webhooks", "POST", "/api/partner/webhooks", { event_type: "salutes.credit", target_url: "https://example.com/h" }],
  ["webhooks", "DELETE", "/api/partner/webhooks/1"],
  ["webhooks", "POST", "/api/partner/webhooks/1/test"],
];

test("issue 3 / spec Scopes: every operation of the table is 403 forbidden naming its scope for a key without it, and passes the guard with it", async () => {
  h = await openTestApp();
  const all = await createKey(h);
  for (const [scope, method, path, body] of TABLE) {
    const without = await createKey(h, { scopes: SCOPES.filter((s) => s !== scope) });
    const no = await signedJson(h, without, method, path, { body });
    expect({ op: `${method} ${path}`, status: no.status, error: no.body.error, named: String(no.body.message).includes(`"${scope}"`) }).toEqual({
      op: `${method} ${path}`,
      status: 403,
      error: "forbidden",
      named: true,
    });
    const yes = await signedJson(h, all, method, path, { body });
    expect({ op: `${method} ${path}`, refused: yes.status === 401 || yes.status === 403 }).toEqual({ op: `${method} ${path}`, refused: false });
  }
});

test("issue 3: a nonce sent on a read is used up too: the same signed read again is 409 replay_detected", async () => {
  h = await openTestApp();
  const k = await createKey(h);
  const nonce = newNonce();
  expect((await signedJson(h, k, "GET", "/api/partner/capabilities", { nonce })).status).toBe(200);
  const again = await signedJson(h, k, "GET", "/api/partner/capabilities", { nonce });
  expect({ status: again.status, error: again.body.error }).toEqual({ status: 409, error: "replay_detected" });
});

test("issue 3 / design §4: an Idempotency-Key reused on another route is 422 idempotency_key_reused; 256 characters is 400; an exact resend (same nonce) is 409 with one effect", async () => {
  h = await openTestApp();
  const k = await createKey(h);
  const first = await signedJson(h, k, "POST", "/api/partner/users", { body: { external_id: "idem-1" }, idempotencyKey: "order-77" });
  expect(first.status).toBe(201);
  const hook = { event_type: "salutes.credit", target_url: "https://example.com/h" };
  const elsewhere = await signedJson(h, k, "POST", "/api/partner/webhooks", { body: hook, idempotencyKey: "order-77" });
  expect({ status: elsewhere.status, error: elsewhere.body.error }).toEqual({ status: 422, error: "idempotency_key_reused" });
  const long = await signedJson(h, k, "POST", "/api/partner/webhooks", { body: hook, idempotencyKey: "k".repeat(256) });
  expect({ status: long.status, error: long.body.error }).toEqual({ status: 400, error: "idempotency_key_required" });
  expect((await signedJson(h, k, "POST", "/api/partner/webhooks", { body: hook, idempotencyKey: "k".repeat(255) })).status).toBe(201);

  // The very same bytes sent twice (a network-level resend): refused, and the user exists once.
  const init = signedInit(h, k, "POST", "/api/partner/users", { body: { external_id: "idem-2" } });
  expect((await h.json("/api/partner/users", init)).status).toBe(201);
  const resend = await h.json("/api/partner/users", init);
  expect(resend.status).toBe(409);
  expect(["replay_detected", "idempotency_replay"]).toContain(resend.body.error);
  const list = await signedJson(h, k, "GET", "/api/partner/users?q=idem-2");
  expect(list.body.users.filter((u: { external_id: string }) => u.external_id === "idem-2")).toHaveLength(1);
});

test("issue 3 / README TRUST_PROXY: behind the proxy the allow-list judges the RIGHTMOST X-Forwarded-For entry", async () => {
  h = await openTestApp({ env: { TRUST_PROXY: "1" } });
  const k = await createKey(h, { ips: "203.0.113.0/24" });
  const from = async (xff: string) => (await signedJson(h, k, "GET", "/api/partner/capabilities", { headers: { "x-forwarded-for": xff } })).status;
  expect(await from("203.0.113.9")).toBe(200);
  expect(await from("10.9.9.9, 203.0.113.9")).toBe(200);
  expect(await from("203.0.113.9, 10.9.9.9")).toBe(403);
  const bad = await signedJson(h, { ...k, secret: "wrong" }, "GET", "/api/partner/capabilities", { headers: { "x-forwarded-for": "10.9.9.9" } });
  // A bad signature from outside the list is 401, like any bad signature: the list is never revealed.
  expect(bad.status).toBe(401);
});

test("issue 3 on the sandbox: a nonce is optional there but, when sent, single use; an Idempotency-Key replays (409 + Idempotent-Replayed) and another body is 422", async () => {
  h = await openTestApp({ env: { PARTNER_SANDBOX_RATE_LIMIT_PER_MINUTE: "0" } });
  const k = await createKey(h, { mode: "sandbox" });
  const user = await signedJson(h, k, "POST", "/api/partner/sandbox/users", { body: { external_id: "sbx-1" }, nonce: null });
  expect(user.status).toBe(201);
  const body = { user_id: String(user.body.user.id), amount: 3, reason: "r", source: "s" };
  const path = "/api/partner/sandbox/salutes/credit";
  const nonce = newNonce();
  expect((await signedJson(h, k, "POST", path, { body, nonce })).status).toBe(200);
  const replayed = await signedJson(h, k, "POST", path, { body, nonce });
  expect({ status: replayed.status, error: replayed.body.error }).toEqual({ status: 409, error: "replay_detected" });

  const first = await signedJson(h, k, "POST", path, { body, nonce: null, idempotencyKey: "sbx-order-1" });
  expect(first.status).toBe(200);
  const again = await signedJson(h, k, "POST", path, { body, nonce: null, idempotencyKey: "sbx-order-1" });
  expect({ status: again.status, error: again.body.error, header: again.headers.get("idempotent-replayed") }).toEqual({
    status: 409,
    error: "idempotency_replay",
    header: "true",
  });
  expect(again.body.original_response).toEqual(first.body);
  const other = await signedJson(h, k, "POST", path, { body: { ...body, amount: 4 }, nonce: null, idempotencyKey: "sbx-order-1" });
  expect({ status: other.status, error: other.body.error }).toEqual({ status: 422, error: "idempotency_key_reused" });
  const balance = await signedJson(h, k, "GET", `/api/partner/sandbox/salutes/balance?user_id=${body.user_id}`);
  expect(balance.body.balance).toBe(6);
});

test("issue 3: secrets are never logged: at LOG_LEVEL=debug no line carries a key secret, a rotated one, a webhook secret or the admin token", async () => {
  const lines: string[] = [];
  h = await openTestApp({ log: createLogger("debug", (l) => lines.push(l)), env: { LOG_LEVEL: "debug" } });
  const admin = await createAdminToken(h);
  const bearer = { authorization: `Bearer ${admin}`, "content-type": "application/json" };
  const made = await h.json("/admin/partners/keys", {
    method: "POST",
    headers: bearer,
    body: JSON.stringify({ partner: "Acme", mode: "live", scopes: ["webhooks", "users"] }),
  });
  expect(made.status).toBe(201);
  const k = { keyId: made.body.key.key_id, secret: made.body.secret, mode: "live" as const };
  const rotated = await h.json(`/admin/partners/keys/${k.keyId}/rotate`, { method: "POST", headers: bearer, body: JSON.stringify({ overlap_hours: 1 }) });
  expect(rotated.status).toBe(200);
  const k2 = { ...k, secret: rotated.body.secret };
  const hook = await signedJson(h, k2, "POST", "/api/partner/webhooks", { body: { event_type: "salutes.credit", target_url: "https://example.com/h" } });
  expect(hook.status).toBe(201);
  await signedJson(h, { ...k2, secret: "wrong-secret" }, "GET", "/api/partner/webhooks");
  await h.ctx.requestLog.stop();
  const all = lines.join("\n");
  expect(lines.length).toBeGreaterThan(0);
  for (const secret of [k.secret, k2.secret, hook.body.webhook.secret, admin]) expect(all.includes(secret)).toBe(false);
});

test("issue 3: concurrent credits sharing one nonce (each with its own Idempotency-Key): exactly one is applied, the rest 409 replay_detected", async () => {
  h = await openTestApp();
  const k = await createKey(h);
  const user = await signedJson(h, k, "POST", "/api/partner/users", { body: { external_id: "burst-1" } });
  const body = { user_id: String(user.body.user.id), amount: 2, reason: "r", source: "s" };
  const nonce = newNonce();
  const all = await Promise.all(Array.from({ length: 10 }, () => signedJson(h, k, "POST", "/api/salutes/credit", { body, nonce })));
  expect(all.filter((r) => r.status === 200)).toHaveLength(1);
  for (const r of all.filter((x) => x.status !== 200)) expect({ status: r.status, error: r.body.error }).toEqual({ status: 409, error: "replay_detected" });
  expect((await signedJson(h, k, "GET", `/api/salutes/balance?user_id=${body.user_id}`)).body.balance).toBe(2);
});

// Issue 3: "Nonce store with expiry; reuse → 409 replay_detected"; docs/design.md §3: "single use per key for 2× the
// skew window"; src/auth/nonces.ts: "any request still inside the timestamp window finds its nonce here". The nonce
// is kept until (time of use + 2 × skew), but a request signed 300 s ahead stays inside the timestamp window until
// floor(time of use) + 601 s: for up to a second after the nonce lapses, the captured request is accepted again.
// Idempotency-Key is not signed, so a fresh one makes the replay a second effect.
test("issue 3: a request signed at the +300 s edge, replayed 600.5 s later with another Idempotency-Key, is refused as a replay (the nonce is kept 2 × skew and a second)", async () => {
  h = await openTestApp();
  const k = await createKey(h);
  const user = await signedJson(h, k, "POST", "/api/partner/users", { body: { external_id: "edge-1" } });
  const body = { user_id: String(user.body.user.id), amount: 5, reason: "r", source: "s" };
  const ahead = Math.floor(h.clock.now().getTime() / 1000) + 300;
  const captured = signedInit(h, k, "POST", "/api/salutes/credit", { body, nonce: newNonce(), timestamp: ahead, idempotencyKey: "first" });
  expect((await h.json("/api/salutes/credit", captured)).status).toBe(200);

  h.clock.advance(600_500);
  const headers = { ...(captured.headers as Record<string, string>), "Idempotency-Key": "attacker-chosen" };
  const replay = await h.json("/api/salutes/credit", { ...captured, headers });
  const balance = (await signedJson(h, k, "GET", `/api/salutes/balance?user_id=${body.user_id}`)).body.balance;
  expect({ status: replay.status, error: replay.body.error, balance }).toEqual({ status: 409, error: "replay_detected", balance: 5 });
});
