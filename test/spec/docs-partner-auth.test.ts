// Docs audit: docs/partner-auth.md's tables and examples against the real app (headers, nonces, idempotency,
// per-key limits, the operators' key routes and CLI, the onboarding preview).
import { afterAll, afterEach, describe, expect, setDefaultTimeout, test } from "bun:test";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { jsonInit, openTestApp, type TestApp } from "../support/app";
import { createAdminToken, createKey, signedInit, signedJson } from "../support/partner";
import { exitWithin, spawnHerald } from "../support/process";
import { servedDatabase } from "../support/served-database";

setDefaultTimeout(60_000);

let h: TestApp;
afterEach(async () => {
  await h?.close();
  h = undefined as unknown as TestApp;
});

describe("headers, nonces and idempotency", () => {
  // docs/partner-auth.md:45, :75, :83, :85, :362 — nonce 16–128 hex (else 401), hex case is the same nonce,
  // the signature's hex case is ignored
  test("nonce bounds and case; signature hex case", async () => {
    h = await openTestApp();
    const k = await createKey(h);
    const statuses: Array<[string, number]> = [];
    for (const [name, nonce] of [
      ["15 hex", "a".repeat(15)],
      ["16 hex", "b".repeat(16)],
      ["128 hex", "c".repeat(128)],
      ["129 hex", "d".repeat(129)],
      ["not hex", "g".repeat(16)],
    ] as const) {
      statuses.push([name, (await signedJson(h, k, "POST", "/api/partner/users", { nonce, body: { external_id: `n-${name.replace(" ", "")}` } })).status]);
    }
    expect(statuses).toEqual([
      ["15 hex", 401],
      ["16 hex", 201],
      ["128 hex", 201],
      ["129 hex", 401],
      ["not hex", 401],
    ]);
    expect((await signedJson(h, k, "GET", "/api/partner/capabilities", { nonce: "ABCDEF0123456789ABCD" })).status).toBe(200);
    const again = await signedJson(h, k, "GET", "/api/partner/capabilities", { nonce: "abcdef0123456789abcd" });
    expect([again.status, again.body.error]).toEqual([409, "replay_detected"]);
    const init = signedInit(h, k, "GET", "/api/partner/capabilities");
    const headers = init.headers as Record<string, string>;
    headers["X-Partner-Signature"] = headers["X-Partner-Signature"]!.toUpperCase();
    expect((await h.json("/api/partner/capabilities", init)).status).toBe(200);
  });

  // docs/partner-auth.md:308-318 — Idempotency-Key 1–255 visible ASCII; replay 409 with Idempotent-Replayed,
  // original_status and original_response; another body 422; scoped to the key id
  test("Idempotency-Key bounds, replay, reuse and scope", async () => {
    h = await openTestApp();
    const a = await createKey(h, { partner: "Acme" });
    const b = await createKey(h, { partner: "Acme" });
    const create = (key: typeof a, idem: string, external_id: string) =>
      signedJson(h, key, "POST", "/api/partner/users", { idempotencyKey: idem, body: { external_id } });
    expect((await create(a, "x".repeat(255), "i-255")).status).toBe(201);
    for (const bad of ["x".repeat(256), "a b"]) expect((await create(a, bad, "i-bad")).body.error).toBe("idempotency_key_required");
    const first = await create(a, "k-1", "i-1");
    const replay = await create(a, "k-1", "i-1");
    expect([replay.status, replay.body.error, replay.headers.get("idempotent-replayed"), replay.body.original_status]).toEqual([
      409,
      "idempotency_replay",
      "true",
      201,
    ]);
    expect(replay.body.original_response).toEqual(first.body);
    const reused = await create(a, "k-1", "i-2");
    expect([reused.status, reused.body.error]).toEqual([422, "idempotency_key_reused"]);
    // the same Idempotency-Key from another key id of the partner is a new request (the user exists: 409 taken)
    expect((await create(b, "k-1", "i-1")).body.error).toBe("external_id_taken");
  });

  // docs/partner-auth.md:324-326, :367 — a refused request stores nothing (same key, fixed body, goes through);
  // a request past the nonce check has used its nonce; a 403 scope refusal comes before the nonce check
  test("a failed request stores nothing but uses its nonce; a scope refusal does not use it", async () => {
    h = await openTestApp();
    const k = await createKey(h);
    await signedJson(h, k, "POST", "/api/partner/users", { body: { external_id: "taken" } });
    const refused = await signedJson(h, k, "POST", "/api/partner/users", { idempotencyKey: "fix-me", body: { external_id: "taken" } });
    expect(refused.body.error).toBe("external_id_taken");
    expect((await signedJson(h, k, "POST", "/api/partner/users", { idempotencyKey: "fix-me", body: { external_id: "fixed" } })).status).toBe(201);
    const nonce = "1111222233334444aaaa";
    expect((await signedJson(h, k, "POST", "/api/partner/users", { nonce, body: { external_id: "a b" } })).body.error).toBe("invalid_payload");
    expect((await signedJson(h, k, "POST", "/api/partner/users", { nonce, body: { external_id: "ab" } })).body.error).toBe("replay_detected");
    const readOnly = await createKey(h, { scopes: ["read"] });
    const n2 = "2222333344445555bbbb";
    expect((await signedJson(h, readOnly, "POST", "/api/partner/users", { nonce: n2, body: { external_id: "q" } })).status).toBe(403);
    expect((await signedJson(h, readOnly, "GET", "/api/partner/capabilities", { nonce: n2 })).status).toBe(200);
  });

  // docs/partner-auth.md:25-31 — a key of the wrong mode: 403 after the signature, naming the command that makes
  // the other kind for the same partner and scopes
  test("wrong mode: 403 forbidden naming herald keys create for the other kind", async () => {
    h = await openTestApp();
    const sandbox = await createKey(h, { partner: "Local Dev", mode: "sandbox" });
    const r = await signedJson(h, sandbox, "GET", "/api/salutes/balance?user_id=1");
    expect([r.status, r.body.error]).toEqual([403, "forbidden"]);
    expect(r.body.message).toContain("herald keys create --partner 'Local Dev' --mode live --scopes credit,debit,donation,ledger,read,users,webhooks");
    expect((await signedJson(h, { ...sandbox, secret: "hsk_test_wrong" }, "GET", "/api/salutes/balance?user_id=1")).status).toBe(401);
  });
});

describe("rate limits", () => {
  // docs/partner-auth.md:349-355, :375-383 — the limit each kind of route reports; the headers on every signed
  // answer, refusals included; the public catalogs under the per-address limit
  test("X-RateLimit-Limit per route kind and on refusals", async () => {
    h = await openTestApp();
    const live = await createKey(h);
    const sandbox = await createKey(h, { mode: "sandbox" });
    const readOnly = await createKey(h, { scopes: ["read"] });
    const limit = async (key: typeof live | null, method: string, path: string, body?: unknown) =>
      (key ? await signedJson(h, key, method, path, body === undefined ? {} : { body }) : await h.json(path)).headers.get("x-ratelimit-limit");
    expect(await limit(live, "GET", "/api/partner/capabilities")).toBe("6000");
    expect(await limit(live, "GET", "/api/partner/webhooks")).toBe("120");
    expect(await limit(live, "GET", "/api/partner/webhook-events")).toBe("120");
    for (const p of ["/api/partner/capabilities", "/api/partner/status", "/api/partner/analytics/usage", "/api/partner/sandbox/verify"]) {
      expect([p, await limit(sandbox, "GET", p)]).toEqual([p, "30"]);
    }
    expect(await limit(null, "GET", "/api/partner/errors.json")).toBe("90");
    expect(await limit(live, "GET", "/api/partner/errors.json")).toBe("90");
    expect(await limit(null, "GET", "/api/partner/webhooks/event-types")).toBe("90");
    // refusals after the signature carry the headers too: 403 scope, 404, 400 missing Idempotency-Key
    expect(await limit(readOnly, "POST", "/api/partner/users", { external_id: "x" })).toBe("6000");
    expect(await limit(live, "GET", "/api/partner/users/999")).toBe("6000");
    const noIdem = await signedJson(h, live, "POST", "/api/partner/users", { idempotencyKey: null, body: { external_id: "y" } });
    expect([noIdem.status, noIdem.headers.get("x-ratelimit-limit")]).toEqual([400, "6000"]);
  });
});

describe("operators", () => {
  // docs/partner-auth.md:466-482 — the key routes' answers, bounds and refusals
  test("admin key routes: create 201, list shape and bounds, rotate bounds, disable, 409 and 404", async () => {
    h = await openTestApp();
    const A = { authorization: `Bearer ${await createAdminToken(h)}` };
    expect((await h.json("/admin/partners/keys")).status).toBe(403);
    expect((await h.json("/admin/partners/keys", { headers: { authorization: "Bearer nope" } })).status).toBe(403);
    const made = await h.json(
      "/admin/partners/keys",
      jsonInit("POST", { partner: "Acme", mode: "live", scopes: ["read", "credit"], allowed_ips: ["10.0.0.0/8"] }, A),
    );
    expect(made.status).toBe(201);
    expect(Object.keys(made.body).sort()).toEqual(["key", "secret", "success"]);
    expect(Object.keys(made.body.key).sort()).toEqual(
      [
        "key_id",
        "partner",
        "mode",
        "scopes",
        "allowed_ips",
        "status",
        "created_at",
        "updated_at",
        "last_used_at",
        "previous_secret_valid_until",
        "disabled_reason",
      ].sort(),
    );
    expect(made.body.key.key_id).toMatch(/^hk_live_[0-9a-f]{24}$/);
    expect(made.body.secret).toMatch(/^hsk_live_.{40}$/);
    const id = made.body.key.key_id as string;
    h.clock.advanceSeconds(1); // created later: listed after it (keys created in one second are listed by key id)
    await h.json("/admin/partners/keys", jsonInit("POST", { partner: "Acme", mode: "sandbox", scopes: ["read"] }, A));
    const list = await h.json("/admin/partners/keys", { headers: A });
    expect(Object.keys(list.body).sort()).toEqual(["count", "keys", "pagination", "query", "success"]);
    expect(list.body.keys[0].key_id).toBe(id); // oldest first
    expect(JSON.stringify(list.body)).not.toContain(made.body.secret);
    expect(list.body.query.limit).toBe(50);
    for (const [q, status] of [
      ["limit=1", 200],
      ["limit=200", 200],
      ["limit=0", 400],
      ["limit=201", 400],
      ["mode=bogus", 400],
    ] as const) {
      expect([q, (await h.json(`/admin/partners/keys?${q}`, { headers: A })).status]).toEqual([q, status]);
    }
    for (const overlap of [25, -1, 1.5, "3"]) {
      expect((await h.json(`/admin/partners/keys/${id}/rotate`, jsonInit("POST", { overlap_hours: overlap }, A))).status).toBe(400);
    }
    const rotated = await h.json(`/admin/partners/keys/${id}/rotate`, jsonInit("POST", {}, A));
    expect(rotated.body.key.previous_secret_valid_until).toBe("2026-01-02T00:00:01.000Z"); // default 24 h after 00:00:01
    const disabled = await h.json(`/admin/partners/keys/${id}/disable`, jsonInit("POST", { reason: "contract ended" }, A));
    expect([disabled.body.key.status, disabled.body.key.disabled_reason]).toEqual(["disabled", "contract ended"]);
    const again = await h.json(`/admin/partners/keys/${id}/rotate`, jsonInit("POST", {}, A));
    expect([again.status, again.body.error]).toEqual([409, "conflict"]);
    const unknown = `hk_live_${"0".repeat(24)}`;
    expect((await h.json(`/admin/partners/keys/${unknown}/rotate`, jsonInit("POST", {}, A))).body.error).toBe("not_found");
    expect((await h.json(`/admin/partners/keys/${unknown}/disable`, jsonInit("POST", { reason: "x" }, A))).body.error).toBe("not_found");
  });

  // docs/partner-auth.md:491-492 — last_used_at is written at most once a minute per key
  test("last_used_at moves at most once a minute", async () => {
    h = await openTestApp();
    const k = await createKey(h);
    const A = { authorization: `Bearer ${await createAdminToken(h)}` };
    const lastUsed = async () => (await h.json("/admin/partners/keys", { headers: A })).body.keys[0].last_used_at;
    await signedJson(h, k, "GET", "/api/partner/capabilities");
    expect(await lastUsed()).toBe("2026-01-01T00:00:00.000Z");
    h.clock.advanceSeconds(30);
    await signedJson(h, k, "GET", "/api/partner/capabilities");
    expect(await lastUsed()).toBe("2026-01-01T00:00:00.000Z");
    h.clock.advanceSeconds(31);
    await signedJson(h, k, "GET", "/api/partner/capabilities");
    expect(await lastUsed()).toBe("2026-01-01T00:01:01.000Z");
  });

  // docs/partner-auth.md:496-499 — the onboarding preview: exists, active, mode, and the first signed calls in order
  test("onboarding preview for sandbox, live and unknown key ids", async () => {
    h = await openTestApp();
    const sandbox = await createKey(h, { mode: "sandbox" });
    const live = await createKey(h);
    const order = (b: Record<string, any>) => b.onboarding_order.map((s: { path: string }) => s.path.replace("/api/partner/", ""));
    const sb = (await h.json(`/api/public/quickstart/verify-key?api_key=${sandbox.keyId}&client=x`)).body;
    expect([sb.exists, sb.active, sb.key_mode]).toEqual([true, true, "sandbox"]);
    expect(order(sb)).toEqual(["capabilities", "sandbox/verify", "sandbox/token-status", "sandbox/promotion-report", "errors.json"]);
    const lv = (await h.json(`/api/public/quickstart/verify-key?api_key=${live.keyId}`)).body;
    expect([lv.exists, lv.active, lv.key_mode]).toEqual([true, true, "live"]);
    expect(order(lv)).toEqual(["capabilities", "status", "token-status", "errors.json"]);
    const none = (await h.json(`/api/public/quickstart/verify-key?api_key=hk_live_${"1".repeat(24)}`)).body;
    expect([none.exists, none.active, none.key_mode]).toEqual([false, false, null]);
  });
});

describe("CLI (docs/partner-auth.md §13)", () => {
  const dir = mkdtempSync(join(tmpdir(), "herald-docsa-auth-"));
  const database = servedDatabase(dir);
  afterAll(async () => {
    await (await database).drop();
    rmSync(dir, { recursive: true, force: true });
  });
  const run = async (args: string[]) => {
    const p = spawnHerald(args, { ...(await database).env, NODE_ENV: "test", LOG_LEVEL: "warn" });
    const [stdout, stderr, code] = await Promise.all([new Response(p.stdout).text(), new Response(p.stderr).text(), exitWithin(p, 50_000)]);
    return { stdout, stderr, code };
  };

  // docs/partner-auth.md:450-461 — `keys create … --json` prints the documented object; bad input exits 2
  test("keys create --json, and rotate's --overlap-hours bounds", async () => {
    const made = await run(["keys", "create", "--partner", "Acme", "--mode", "live", "--scopes", "read,credit", "--ips", "10.0.0.0/8", "--json"]);
    expect(made.code).toBe(0);
    const key = JSON.parse(made.stdout);
    expect({ ...key, key_id: "…", secret: "…" }).toEqual({
      key_id: "…",
      secret: "…",
      mode: "live",
      scopes: ["credit", "read"],
      partner: "Acme",
      allowed_ips: ["10.0.0.0/8"],
    });
    expect(key.secret).toMatch(/^hsk_live_.{40}$/);
    for (const bad of [
      ["--overlap-hours", "25"],
      ["--overlap-hours", "1.5"],
    ]) {
      const r = await run(["keys", "rotate", key.key_id, ...bad, "--json"]);
      expect([bad[1], r.code, r.stdout]).toEqual([bad[1], 2, ""]);
    }
    expect((await run(["keys", "create", "--partner", "Acme", "--mode", "sideways", "--scopes", "read"])).code).toBe(2);
    const listed = JSON.parse((await run(["keys", "list", "--partner", "Acme", "--json"])).stdout);
    expect(listed.keys.map((k: { key_id: string }) => k.key_id)).toEqual([key.key_id]);
    expect(JSON.stringify(listed)).not.toContain(key.secret);
  });
});
