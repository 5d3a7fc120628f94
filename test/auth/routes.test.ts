import { afterEach, describe, expect, test } from "bun:test";
import { AdminTokens } from "../../src/auth/admin";
import { prepareCredentials, firstStartBanner } from "../../src/auth/first-start";
import { openTestApp, jsonInit, type TestApp } from "../support/app";
import { createAdminToken, createKey, signedInit, signedJson } from "../support/partner";

let h: TestApp;
afterEach(async () => {
  await h?.close();
});

const bearer = (token: string, init: RequestInit = {}): RequestInit => ({
  ...init,
  headers: { ...(init.headers as Record<string, string>), authorization: `Bearer ${token}` },
});

describe("operator key management (/admin/partners/keys)", () => {
  test("create shows the secret once, list never does, and every mutation is audited", async () => {
    h = await openTestApp();
    const token = await createAdminToken(h);
    const created = await h.json(
      "/admin/partners/keys",
      bearer(
        token,
        jsonInit("POST", { partner: "Acme", mode: "live", scopes: ["read", "credit"], allowed_ips: ["10.0.0.0/8"] }, { "x-request-id": "create-req-0001" }),
      ),
    );
    expect(created.status).toBe(201);
    expect(created.body.key).toMatchObject({ partner: "Acme", mode: "live", scopes: ["credit", "read"], allowed_ips: ["10.0.0.0/8"], status: "active" });
    expect(created.body.key.key_id).toMatch(/^hk_live_[0-9a-f]{24}$/);
    expect(created.body.secret).toMatch(/^hsk_live_/);

    const list = await h.json("/admin/partners/keys", bearer(token));
    expect(list.body.count).toBe(1);
    expect(JSON.stringify(list.body)).not.toContain(created.body.secret);
    // Secrets are encrypted at rest.
    const stored = await h.ctx.store.all("SELECT * FROM partner_keys");
    expect(stored).toHaveLength(1);
    expect(JSON.stringify(stored)).not.toContain(created.body.secret);

    const id = created.body.key.key_id;
    const rotated = await h.json(`/admin/partners/keys/${id}/rotate`, bearer(token, jsonInit("POST", { overlap_hours: 1 })));
    expect(rotated.status).toBe(200);
    expect(rotated.body.secret).not.toBe(created.body.secret);
    expect(rotated.body.key.previous_secret_valid_until).toBe("2026-01-01T01:00:00.000Z");

    const disabled = await h.json(`/admin/partners/keys/${id}/disable`, bearer(token, jsonInit("POST", { reason: "contract ended" })));
    expect(disabled.body.key).toMatchObject({ status: "disabled", disabled_reason: "contract ended" });
    const rotateDisabled = await h.json(`/admin/partners/keys/${id}/rotate`, bearer(token, jsonInit("POST", {})));
    expect(rotateDisabled.status).toBe(409);

    const audit = await h.ctx.store.all<any>("SELECT actor, action, target, request_id FROM admin_audit WHERE action LIKE 'partner_key.%' ORDER BY id");
    expect(audit.map((a) => a.action)).toEqual(["partner_key.create", "partner_key.rotate", "partner_key.disable"]);
    expect(audit[0]).toMatchObject({ actor: expect.stringMatching(/^admin:test-operator#\d+$/), target: id, request_id: "create-req-0001" });
  });

  test("bad input is 400 with the field named; unknown keys are 404; no token is 403", async () => {
    h = await openTestApp();
    const token = await createAdminToken(h);
    const bad = await h.json("/admin/partners/keys", bearer(token, jsonInit("POST", { partner: "Acme", mode: "live", scopes: ["fly"] })));
    expect(bad.status).toBe(400);
    expect(bad.body.details[0].field).toContain("scopes");
    const badIp = await h.json(
      "/admin/partners/keys",
      bearer(token, jsonInit("POST", { partner: "Acme", mode: "live", scopes: ["read"], allowed_ips: ["300.1.1.1"] })),
    );
    expect(badIp.status).toBe(400);
    expect(badIp.body.message).toContain("300.1.1.1");
    const missing = await h.json("/admin/partners/keys/hk_live_nope/disable", bearer(token, jsonInit("POST", { reason: "x" })));
    expect(missing.status).toBe(404);
    expect((await h.json("/admin/partners/keys")).status).toBe(403);
    expect((await h.json("/admin/partners/keys", jsonInit("POST", { partner: "A", mode: "live", scopes: ["read"] }))).status).toBe(403);
  });
});

describe("capabilities", () => {
  test("answers per key, for sandbox and live keys, with Last-Modified and 304 on If-Modified-Since", async () => {
    h = await openTestApp();
    const live = await createKey(h, { scopes: ["read"] });
    const sandbox = await createKey(h, { mode: "sandbox" });
    const a = await signedJson(h, live, "GET", "/api/partner/capabilities");
    expect(a.status).toBe(200);
    expect(a.body).toMatchObject({
      success: true,
      key_id: live.keyId,
      key_mode: "live",
      scopes: ["read"],
      sandbox: { enabled_for_key: false, supports_deterministic_fixtures: true },
    });
    const b = await signedJson(h, sandbox, "GET", "/api/partner/capabilities?include_meta=1");
    expect(b.body.sandbox.enabled_for_key).toBe(true);
    expect(b.body.sandbox.fixture_endpoints.length).toBeGreaterThan(0);
    expect(b.body.meta.request_id).toBe(b.headers.get("x-request-id")!);

    const lastModified = a.headers.get("last-modified")!;
    expect(lastModified).toBeTruthy();
    const cached = await h.request(
      "/api/partner/capabilities",
      signedInit(h, live, "GET", "/api/partner/capabilities", { headers: { "if-modified-since": lastModified } }),
    );
    expect(cached.status).toBe(304);
    const older = new Date(Date.parse(lastModified) - 1000).toUTCString();
    const fresh = await h.request(
      "/api/partner/capabilities",
      signedInit(h, live, "GET", "/api/partner/capabilities", { headers: { "if-modified-since": older } }),
    );
    expect(fresh.status).toBe(200);
  });

  test("unsigned is 401", async () => {
    h = await openTestApp();
    const res = await h.json("/api/partner/capabilities");
    expect(res.status).toBe(401);
    expect(res.body.error).toBe("unauthorized");
  });
});

describe("quickstart verify-key", () => {
  test("says whether the key exists, its state and mode, and the onboarding order — never a secret", async () => {
    h = await openTestApp();
    const sandbox = await createKey(h, { mode: "sandbox" });
    const live = await createKey(h, { mode: "live" });
    const s = await h.json(`/api/public/quickstart/verify-key?api_key=${sandbox.keyId}&client=curl`);
    expect(s.body).toMatchObject({ exists: true, active: true, key_mode: "sandbox", client: "curl" });
    expect(s.body.onboarding_order.map((o: { path: string }) => o.path)).toEqual([
      "/api/partner/capabilities",
      "/api/partner/sandbox/verify",
      "/api/partner/sandbox/token-status",
      "/api/partner/sandbox/promotion-report",
      "/api/partner/errors.json",
    ]);
    expect(JSON.stringify(s.body)).not.toContain(sandbox.secret);
    const l = await h.json(`/api/public/quickstart/verify-key?api_key=${live.keyId}`);
    expect(l.body.onboarding_order.map((o: { path: string }) => o.path)).toEqual([
      "/api/partner/capabilities",
      "/api/partner/status",
      "/api/partner/token-status",
      "/api/partner/errors.json",
    ]);
    const none = await h.json("/api/public/quickstart/verify-key?api_key=hk_live_unknown");
    expect(none.body).toMatchObject({ exists: false, active: false, key_mode: null });
    expect((await h.json("/api/public/quickstart/verify-key")).status).toBe(400);
  });
});

describe("operator routes of the foundation", () => {
  test("/metrics needs an admin token unless METRICS_PUBLIC=1", async () => {
    h = await openTestApp();
    expect((await h.request("/metrics")).status).toBe(403);
    expect((await h.request("/metrics", bearer(await createAdminToken(h)))).status).toBe(200);
    await h.close();
    h = await openTestApp({ env: { METRICS_PUBLIC: "1" } });
    expect((await h.request("/metrics")).status).toBe(200);
  });

  test("GET /admin/jobs and POST /admin/jobs/{name}/run", async () => {
    h = await openTestApp();
    const token = await createAdminToken(h);
    const list = await h.json("/admin/jobs", bearer(token));
    expect(list.body.jobs.map((j: { name: string }) => j.name)).toEqual(expect.arrayContaining(["request-log-prune", "auth-prune"]));
    const run = await h.json("/admin/jobs/auth-prune/run", bearer(token, { method: "POST" }));
    expect(run.body.run).toMatchObject({ name: "auth-prune", ok: true });
    expect((await h.json("/admin/jobs/nope/run", bearer(token, { method: "POST" }))).status).toBe(404);
    expect((await h.json("/admin/jobs/auth-prune/run", { method: "POST" })).status).toBe(403);
  });

  test("the Bearer scheme is read in any case (RFC 9110); another scheme or a missing space is 403", async () => {
    h = await openTestApp();
    const token = await createAdminToken(h);
    for (const scheme of ["Bearer ", "bearer ", "BEARER ", "Bearer  "]) {
      const r = await h.request("/admin/jobs", { headers: { authorization: `${scheme}${token}` } });
      expect([scheme, r.status]).toEqual([scheme, 200]);
    }
    for (const value of [`Basic ${token}`, `Bearer${token}`, `Bearer ${token}x`]) {
      expect((await h.request("/admin/jobs", { headers: { authorization: value } })).status).toBe(403);
    }
  });
});

describe("first start", () => {
  test("an empty non-production database gets a live key, a sandbox key (all scopes, one partner) and an admin token, once", async () => {
    h = await openTestApp({ env: { NODE_ENV: "development" } });
    const creds = (await prepareCredentials(h.ctx))!;
    expect(creds.live.keyId).toMatch(/^hk_live_/);
    expect(creds.sandbox.keyId).toMatch(/^hk_test_/);
    const banner = firstStartBanner(creds, "http://localhost:3000", "herald-cmd");
    for (const value of [creds.live.keyId, creds.live.secret, creds.sandbox.keyId, creds.sandbox.secret, creds.adminToken]) {
      // Each shown twice: once labelled, once in the shell line that exports it; the secret never elsewhere.
      expect(banner.split(value).length - 1).toBe(2);
    }
    expect(banner).toContain("LIVE partner key");
    expect(banner).toContain("SANDBOX partner key");
    expect(banner).toContain(`export HERALD_KEY_ID='${creds.live.keyId}' HERALD_SECRET='${creds.live.secret}'`);
    expect(banner).toContain('herald() { herald-cmd "$@"; }');
    // The printed credentials work, each on its own family of routes (the banner's own examples run in
    // test/docs/readme-examples.test.ts against a real server).
    const live = { keyId: creds.live.keyId, secret: creds.live.secret, mode: "live" as const };
    const sandbox = { keyId: creds.sandbox.keyId, secret: creds.sandbox.secret, mode: "sandbox" as const };
    const caps = await signedJson(h, live, "GET", "/api/partner/capabilities");
    expect(caps.body.scopes).toEqual(["credit", "debit", "donation", "ledger", "read", "users", "webhooks"]);
    expect((await signedJson(h, live, "GET", "/api/partner/status")).status).toBe(200);
    expect((await signedJson(h, sandbox, "GET", "/api/partner/sandbox/verify")).status).toBe(200);
    const wrong = await signedJson(h, sandbox, "GET", "/api/partner/token-status");
    expect(wrong.status).toBe(403);
    expect(wrong.body.message).toContain("/api/partner/sandbox/");
    expect(wrong.body.message).toContain("herald keys create --partner 'Local Dev' --mode live --scopes credit,debit,donation,ledger,read,users,webhooks");
    expect((await h.request("/admin/partners/keys", bearer(creds.adminToken))).status).toBe(200);
    expect(await prepareCredentials(h.ctx)).toBeNull();
  });

  test("production never creates them, and ADMIN_TOKEN from the environment works", async () => {
    const adminToken = "op_" + "k".repeat(40);
    h = await openTestApp({
      env: { NODE_ENV: "production", HERALD_MASTER_KEY: "ab".repeat(32), PUBLIC_BASE_URL: "https://herald.example.com", ADMIN_TOKEN: adminToken },
    });
    expect(await prepareCredentials(h.ctx)).toBeNull();
    expect((await h.request("/admin/partners/keys", bearer(adminToken))).status).toBe(200);
  });

  test("instances started together with one ADMIN_TOKEN register it once, and none fails its start", async () => {
    const adminToken = "op_" + "t".repeat(40);
    h = await openTestApp({ env: { ADMIN_TOKEN: adminToken } });
    // Both find it missing before either inserts it, as two processes starting at once do.
    await Promise.all([new AdminTokens(h.ctx).ensureBootstrap(adminToken), new AdminTokens(h.ctx).ensureBootstrap(adminToken)]);
    expect((await new AdminTokens(h.ctx).list()).filter((t) => t.name === "env:ADMIN_TOKEN")).toHaveLength(1);
    expect((await h.request("/admin/partners/keys", bearer(adminToken))).status).toBe(200);
  });
});
