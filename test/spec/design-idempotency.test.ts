// Design audit: idempotency of mutations (docs/design.md §4), on the engine HERALD_TEST_ENGINE names.
import { afterEach, describe, expect, test } from "bun:test";
import { openTestApp, type TestApp } from "../support/app";
import { requestFingerprint } from "../../src/auth/idempotency";
import { createKey, signedInit, signedJson, type TestKey } from "../support/partner";

let h: TestApp;
afterEach(async () => {
  await h?.close();
  h = undefined as unknown as TestApp;
});

const newUser = async (k: TestKey, ext: string) =>
  (await signedJson(h, k, "POST", "/api/partner/users", { body: { external_id: ext, username: `u${ext}`, display_name: "U" } })).body.user.id as number;
const credit = (k: TestKey, uid: number, amount: number, idem: string | null, path = "/api/salutes/credit") =>
  signedJson(h, k, "POST", path, { body: { user_id: String(uid), amount, reason: "r", source: "s" }, idempotencyKey: idem });
const balance = async (k: TestKey, uid: number) => (await signedJson(h, k, "GET", `/api/salutes/balance?user_id=${uid}`)).body.balance as number;

describe("docs/design.md §4 idempotency table", () => {
  // "same key, same fingerprint, first request completed | 409 idempotency_replay with original_status,
  // original_response, header Idempotent-Replayed: true; no second effect"
  test("same key, same body: 409 idempotency_replay with the original status and response and Idempotent-Replayed: true", async () => {
    h = await openTestApp();
    const k = await createKey(h);
    const uid = await newUser(k, "i1");
    const first = await credit(k, uid, 5, "idem-same-1");
    expect(first.status).toBe(200);
    const second = await credit(k, uid, 5, "idem-same-1");
    expect(second.status).toBe(409);
    expect(second.body.error).toBe("idempotency_replay");
    expect(second.headers.get("idempotent-replayed")).toBe("true");
    expect(second.body.original_status).toBe(200);
    expect(second.body.original_response).toMatchObject({ success: true, balance: 5, delta: 5, ledger_entry_id: first.body.ledger_entry_id });
    expect(await balance(k, uid)).toBe(5);
    // A create answered 201 replays original_status 201.
    const body = { external_id: "i-create", username: "uicreate", display_name: "U" };
    const c1 = await signedJson(h, k, "POST", "/api/partner/users", { body, idempotencyKey: "idem-create" });
    expect(c1.status).toBe(201);
    const c2 = await signedJson(h, k, "POST", "/api/partner/users", { body, idempotencyKey: "idem-create" });
    expect([c2.status, c2.body.error, c2.body.original_status]).toEqual([409, "idempotency_replay", 201]);
    expect(c2.body.original_response.user.id).toBe(c1.body.user.id);
  });

  // "same key, other fingerprint | 422 idempotency_key_reused"; fingerprint = (method, path, sha256 of body)
  test("same key, other body or other path: 422 idempotency_key_reused, no effect", async () => {
    h = await openTestApp();
    const k = await createKey(h);
    const uid = await newUser(k, "i2");
    expect((await credit(k, uid, 5, "idem-other")).status).toBe(200);
    const otherBody = await credit(k, uid, 6, "idem-other");
    expect([otherBody.status, otherBody.body.error]).toEqual([422, "idempotency_key_reused"]);
    const otherPath = await credit(k, uid, 5, "idem-other", "/api/salutes/debit");
    expect([otherPath.status, otherPath.body.error]).toEqual([422, "idempotency_key_reused"]);
    expect(await balance(k, uid)).toBe(5);
  });

  // "key missing on a mutation (while required) | 400 idempotency_key_required"; "1–255 visible ASCII chars"
  test("missing key 400 idempotency_key_required; 255 visible ASCII accepted, 256, a space or an empty key refused", async () => {
    h = await openTestApp();
    const k = await createKey(h);
    const uid = await newUser(k, "i3");
    const missing = await credit(k, uid, 1, null);
    expect([missing.status, missing.body.error]).toEqual([400, "idempotency_key_required"]);
    expect((await credit(k, uid, 1, "x".repeat(255))).status).toBe(200);
    for (const bad of ["y".repeat(256), "has space", ""]) {
      const r = await credit(k, uid, 1, bad);
      expect(r.status).toBe(400);
      expect(r.body.error).toBe("idempotency_key_required");
    }
    expect(await balance(k, uid)).toBe(1);
  });

  // "Key = (partner key id, Idempotency-Key …)"
  test("the same Idempotency-Key under two partner keys is two keys", async () => {
    h = await openTestApp();
    const k1 = await createKey(h);
    const k2 = await createKey(h, { partner: "Beta" });
    const u1 = await newUser(k1, "i4a");
    const u2 = await newUser(k2, "i4b");
    expect((await credit(k1, u1, 2, "shared-key")).status).toBe(200);
    expect((await credit(k2, u2, 3, "shared-key")).status).toBe(200);
    expect(await balance(k2, u2)).toBe(3);
  });

  // "a request that fails validation stores nothing (a corrected retry with the same key is allowed)"
  test("a refused body stores nothing: the corrected retry with the same key takes effect", async () => {
    h = await openTestApp();
    const k = await createKey(h);
    const uid = await newUser(k, "i5");
    const bad = await credit(k, uid, 0.001, "idem-fix");
    expect(bad.status).toBe(400);
    const fixed = await credit(k, uid, 1, "idem-fix");
    expect(fixed.status).toBe(200);
    expect(await balance(k, uid)).toBe(1);
  });

  // "Stored … for IDEMPOTENCY_TTL_HOURS (24)"
  test("a completed key still replays after 23 h; after 24 h it is free again", async () => {
    h = await openTestApp();
    const k = await createKey(h);
    const uid = await newUser(k, "i6");
    expect((await credit(k, uid, 1, "idem-ttl")).status).toBe(200);
    h.clock.advance(23 * 3_600_000);
    expect((await credit(k, uid, 1, "idem-ttl")).body.error).toBe("idempotency_replay");
    h.clock.advance(3_600_000 + 1_000);
    const later = await credit(k, uid, 1, "idem-ttl");
    expect(later.status).toBe(200);
    expect(await balance(k, uid)).toBe(2);
  });

  // "two instances never both run the effect"; "same key while the first is still running | 409 idempotency_in_progress
  // with Retry-After"; docs/design.md §5 "Balance always equals the sum of the ledger"
  test("eight concurrent identical credits under one key: one effect, the rest 409 replay or in_progress with Retry-After", async () => {
    h = await openTestApp();
    const k = await createKey(h);
    const uid = await newUser(k, "i7");
    const target = "/api/salutes/credit";
    const body = { user_id: String(uid), amount: 7, reason: "r", source: "s" };
    const answers = await Promise.all(Array.from({ length: 8 }, () => h.json(target, signedInit(h, k, "POST", target, { body, idempotencyKey: "idem-race" }))));
    const ok = answers.filter((a) => a.status === 200);
    expect(ok.length).toBe(1);
    for (const a of answers.filter((a) => a.status !== 200)) {
      expect(a.status).toBe(409);
      expect(["idempotency_replay", "idempotency_in_progress"]).toContain(a.body.error);
      if (a.body.error === "idempotency_in_progress") expect(a.headers.get("retry-after")).toMatch(/^\d+$/);
    }
    expect(await balance(k, uid)).toBe(7);
    const ledger = (await signedJson(h, k, "GET", `/api/salutes/ledger?user_id=${uid}`)).body.ledger as Array<{ delta: number }>;
    expect(ledger.length).toBe(1);
  });

  // The replay endpoint needs Idempotency-Key (spec Authentication); docs/design.md §4 applies to every mutation.
  test("webhook creation and the events replay follow the same table", async () => {
    h = await openTestApp();
    const k = await createKey(h);
    const body = { event_type: "salutes.credit", target_url: "https://example.com/hook" };
    const w1 = await signedJson(h, k, "POST", "/api/partner/webhooks", { body, idempotencyKey: "idem-wh" });
    expect(w1.status).toBe(201);
    const w2 = await signedJson(h, k, "POST", "/api/partner/webhooks", { body, idempotencyKey: "idem-wh" });
    expect([w2.status, w2.body.error]).toEqual([409, "idempotency_replay"]);
    const list = (await signedJson(h, k, "GET", "/api/partner/webhooks")).body;
    expect(list.count).toBe(1);
    const noKey = await signedJson(h, k, "POST", "/api/partner/webhook-events/replay", { body: { event_ids: [1] }, idempotencyKey: null });
    expect([noKey.status, noKey.body.error]).toEqual([400, "idempotency_key_required"]);
  });
});

describe("docs/design.md §3/§4 under concurrency (nonce and key claimed first)", () => {
  // §3 "Nonce … single use per key"; §4 "The key is claimed first (INSERT … ON CONFLICT DO NOTHING)"
  test("six concurrent credits with one nonce: one effect; six with one key and different bodies: one effect, the rest 422", async () => {
    h = await openTestApp();
    const k = await createKey(h);
    const uid = await newUser(k, "i8");
    const target = "/api/salutes/credit";
    const body = (amount: number) => ({ user_id: String(uid), amount, reason: "r", source: "s" });
    const nonce = "ab12".repeat(8);
    const sameNonce = await Promise.all([1, 2, 3, 4, 5, 6].map((a) => h.json(target, signedInit(h, k, "POST", target, { nonce, body: body(a) }))));
    expect(sameNonce.filter((r) => r.status === 200).length).toBe(1);
    for (const r of sameNonce.filter((r) => r.status !== 200)) expect([r.status, r.body.error]).toEqual([409, "replay_detected"]);
    const sameKey = await Promise.all(
      [1, 2, 3, 4, 5, 6].map((a) => h.json(target, signedInit(h, k, "POST", target, { idempotencyKey: "one-key", body: body(a) }))),
    );
    expect(sameKey.filter((r) => r.status === 200).length).toBe(1);
    for (const r of sameKey.filter((r) => r.status !== 200)) expect([r.status, r.body.error]).toEqual([422, "idempotency_key_reused"]);
    const ledger = (await signedJson(h, k, "GET", `/api/salutes/ledger?user_id=${uid}`)).body.ledger as Array<{ delta: number }>;
    expect(ledger.length).toBe(2);
    expect(await balance(k, uid)).toBe(ledger.reduce((s, e) => s + e.delta, 0));
  });
});

describe("docs/design.md §4 claims of effects that wait on the network (IdempotencyStore.runAsync: sandbox reset)", () => {
  // "same key while the first is still running | 409 idempotency_in_progress with Retry-After"; "the claim lapses if
  // the process dies". The claims are planted as a process would leave them (one running, one whose process died).
  test("a running claim answers 409 idempotency_in_progress with Retry-After; a lapsed one is taken over", async () => {
    h = await openTestApp();
    const sb = await createKey(h, { mode: "sandbox" });
    const now = h.clock.now().getTime();
    const fp = requestFingerprint("POST", "/api/partner/sandbox/reset", new TextEncoder().encode("{}"));
    const plant = (key: string, lockedUntilMs: number) =>
      h.ctx.store.run(
        "INSERT INTO idempotency_records (key_id, idempotency_key, fingerprint, state, created_at, locked_until, expires_at) VALUES (?, ?, ?, 'in_progress', ?, ?, ?)",
        [sb.keyId, key, fp, new Date(now - 1_000).toISOString(), new Date(lockedUntilMs).toISOString(), new Date(now + 86_400_000).toISOString()],
      );
    await plant("running", now + 30_000);
    await plant("crashed", now - 1_000);
    const running = await signedJson(h, sb, "POST", "/api/partner/sandbox/reset", { body: {}, idempotencyKey: "running" });
    expect([running.status, running.body.error]).toEqual([409, "idempotency_in_progress"]);
    expect(Number(running.headers.get("retry-after"))).toBeGreaterThan(0);
    const crashed = await signedJson(h, sb, "POST", "/api/partner/sandbox/reset", { body: {}, idempotencyKey: "crashed" });
    expect(crashed.status).toBe(200);
    const again = await signedJson(h, sb, "POST", "/api/partner/sandbox/reset", { body: {}, idempotencyKey: "crashed" });
    expect([again.status, again.body.error, again.headers.get("idempotent-replayed")]).toEqual([409, "idempotency_replay", "true"]);
  });
});
