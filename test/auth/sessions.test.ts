import { afterEach, beforeEach, describe, expect, test } from "bun:test";
import { openTestApp, type TestApp } from "../support/app";
import { createAdminToken } from "../support/partner";
import { BROWSER_ACCEPT } from "../support/console";

// Operator sign-in, sessions and CSRF (docs/operations.md, "Operator sign-in and pages"), through the real app.

let h: TestApp;
let token: string;

beforeEach(async () => {
  h = await openTestApp();
  token = await createAdminToken(h, "ops");
});
afterEach(async () => {
  await h.close();
});

const FORM = "application/x-www-form-urlencoded";
const HTML_ACCEPT = "text/html,application/xhtml+xml";

/** name=value pairs of a response's Set-Cookie headers, with their attributes. */
function setCookies(res: Response): Map<string, string> {
  const out = new Map<string, string>();
  for (const line of res.headers.getSetCookie()) out.set(line.split("=")[0]!, line);
  return out;
}
const valueOf = (line: string) => line.split(";")[0]!.split("=").slice(1).join("=");

/** GET the form: its CSRF value (from the hidden field) and the matching cookie. */
async function signInForm(path = "/admin/sign-in") {
  const res = await h.request(path);
  expect(res.status).toBe(200);
  const html = await res.text();
  const field = /name="csrf_token" value="([^"]+)"/.exec(html)![1]!;
  const cookie = setCookies(res).get("herald_signin_csrf")!;
  expect(valueOf(cookie)).toBe(field);
  return { html, csrf: field, cookie: `herald_signin_csrf=${field}` };
}

async function signIn(opts: { token?: string; next?: string; accept?: string } = {}) {
  const form = await signInForm();
  const body = new URLSearchParams({ token: opts.token ?? token, csrf_token: form.csrf });
  if (opts.next !== undefined) body.set("next", opts.next);
  return h.request("/admin/sign-in", {
    method: "POST",
    headers: { "content-type": FORM, cookie: form.cookie, ...(opts.accept ? { accept: opts.accept } : {}) },
    body: body.toString(),
  });
}

/** Signs in and returns the session cookie header and the page's CSRF token. */
async function session() {
  const res = await signIn();
  expect(res.status).toBe(303);
  const cookie = `herald_admin_session=${valueOf(setCookies(res).get("herald_admin_session")!)}`;
  const page = await h.request("/admin/ops/config", { headers: { cookie } });
  expect(page.status).toBe(200);
  const csrf = /name="csrf_token" value="([^"]+)"/.exec(await page.text())![1]!;
  return { cookie, csrf };
}

const audit = () => h.ctx.store.all<any>("SELECT actor, action, target, details FROM admin_audit WHERE action LIKE 'admin_session.%' ORDER BY id");

describe("sign-in", () => {
  test("a real admin token gets a session cookie with exact attributes and a 303 to the config page", async () => {
    const res = await signIn();
    expect(res.status).toBe(303);
    expect(res.headers.get("location")).toBe("/admin/ops/config");
    expect(res.headers.get("x-request-id")).toBeTruthy();
    const cookies = setCookies(res);
    const line = cookies.get("herald_admin_session")!;
    expect(line).toMatch(/^herald_admin_session=[A-Za-z0-9_-]{43}; Max-Age=28800; Path=\/admin; HttpOnly; SameSite=Strict$/);
    expect(line).not.toContain("Secure");
    // The form's own CSRF cookie is cleared.
    expect(cookies.get("herald_signin_csrf")).toMatch(/^herald_signin_csrf=; Max-Age=0; Path=\/admin\/sign-in; HttpOnly; SameSite=Strict$/);
    // Only hashes are stored.
    const sessionId = valueOf(line);
    const row = (await h.ctx.store.get<Record<string, string>>("SELECT * FROM admin_sessions"))!;
    expect(JSON.stringify(row)).not.toContain(sessionId);
    expect(row.session_hash).toMatch(/^[0-9a-f]{64}$/);
    expect(row.expires_at).toBe("2026-01-01T08:00:00.000Z");
    // Audited, without the token or the session id.
    const rows = await audit();
    expect(rows.map((r) => r.action)).toEqual(["admin_session.sign_in"]);
    expect(JSON.stringify(rows)).not.toContain(token);
    expect(JSON.stringify(rows)).not.toContain(sessionId);
  });

  test("Secure is set when PUBLIC_BASE_URL is https, and Max-Age follows ADMIN_SESSION_TTL_SECONDS", async () => {
    await h.close();
    h = await openTestApp({ env: { PUBLIC_BASE_URL: "https://herald.example.com", ADMIN_SESSION_TTL_SECONDS: "600" } });
    token = await createAdminToken(h, "ops");
    const res = await signIn();
    expect(setCookies(res).get("herald_admin_session")).toMatch(/; Max-Age=600; Path=\/admin; HttpOnly; Secure; SameSite=Strict$/);
  });

  test("NODE_ENV=production sets Secure on every cookie, on a request that reached Herald over plain http too (the proxy's hop)", async () => {
    await h.close();
    h = await openTestApp({ env: { NODE_ENV: "production", HERALD_MASTER_KEY: "ab".repeat(32), PUBLIC_BASE_URL: "https://herald.example.com" } });
    token = await createAdminToken(h, "ops");
    const form = await h.request("/admin/sign-in");
    expect(setCookies(form).get("herald_signin_csrf")).toMatch(/; HttpOnly; Secure; SameSite=Strict$/);
    const res = await signIn();
    expect(res.status).toBe(303);
    expect(setCookies(res).get("herald_admin_session")).toMatch(/; Path=\/admin; HttpOnly; Secure; SameSite=Strict$/);
    expect(setCookies(res).get("herald_signin_csrf")).toMatch(/^herald_signin_csrf=; Max-Age=0; .*; Secure; SameSite=Strict$/);
    const { cookie, csrf } = await session();
    const out = await h.request("/admin/sign-out", {
      method: "POST",
      headers: { "content-type": FORM, cookie },
      body: new URLSearchParams({ csrf_token: csrf }).toString(),
    });
    expect(setCookies(out).get("herald_admin_session")).toMatch(/^herald_admin_session=; Max-Age=0; Path=\/admin; HttpOnly; Secure; SameSite=Strict$/);
  });

  test("development over http keeps the cookies without Secure, so sign-in on http://localhost works", async () => {
    await h.close();
    h = await openTestApp({ env: { NODE_ENV: "development", PUBLIC_BASE_URL: "http://localhost:3000" } });
    token = await createAdminToken(h, "ops");
    const res = await signIn();
    expect(res.status).toBe(303);
    const line = setCookies(res).get("herald_admin_session")!;
    expect(line).toMatch(/^herald_admin_session=[A-Za-z0-9_-]{43}; Max-Age=28800; Path=\/admin; HttpOnly; SameSite=Strict$/);
    // The browser sends it back over http: the session opens the console.
    await session();
  });

  test("a wrong token: the form again with 401 for a browser, the envelope otherwise; audited as a failure", async () => {
    const page = await signIn({ token: "hat_wrong-token-wrong-token-wrong", accept: HTML_ACCEPT });
    expect(page.status).toBe(401);
    expect(page.headers.get("content-type")).toContain("text/html");
    const html = await page.text();
    expect(html).toContain("That is not a valid admin token");
    expect(html).toContain('name="token"');
    expect(setCookies(page).has("herald_admin_session")).toBe(false);
    const json = await signIn({ token: "hat_wrong-token-wrong-token-wrong" });
    expect(json.status).toBe(401);
    expect(await json.json()).toMatchObject({ success: false, error: "unauthorized" });
    expect((await audit()).map((r) => r.action)).toEqual(["admin_session.sign_in_failed", "admin_session.sign_in_failed"]);
  });

  test("the form's CSRF token is required and must match its cookie", async () => {
    const form = await signInForm();
    const post = (cookie: string | null, csrf: string) =>
      h.json("/admin/sign-in", {
        method: "POST",
        headers: { "content-type": FORM, ...(cookie ? { cookie } : {}) },
        body: new URLSearchParams({ token, csrf_token: csrf }).toString(),
      });
    expect((await post(null, form.csrf)).status).toBe(403);
    const missing = await h.json("/admin/sign-in", { method: "POST", headers: { "content-type": FORM, cookie: form.cookie }, body: `token=${token}` });
    expect([missing.status, missing.body.error]).toEqual([403, "forbidden"]);
    const wrong = await post(form.cookie, "x".repeat(43));
    expect(wrong.status).toBe(403);
    expect(wrong.body.error).toBe("forbidden");
    expect(wrong.body.message).toContain("sign-in form");
  });

  test("next: only /admin/ paths are followed; open redirects are refused", async () => {
    expect((await signIn({ next: "/admin/sessions" })).headers.get("location")).toBe("/admin/sessions");
    for (const evil of ["https://evil.example", "//evil.example/admin/", "/\\evil.example", "/admin/../status", "javascript:alert(1)", "/status"]) {
      const res = await signIn({ next: evil });
      expect(res.status).toBe(303);
      expect(res.headers.get("location")).toBe("/admin/ops/config");
    }
    // GET with a hostile next does not print it into the form.
    const form = await signInForm("/admin/sign-in?next=https%3A%2F%2Fevil");
    expect(form.html).not.toContain("evil");
  });

  test("form bodies: only on the form routes, bounded, strict", async () => {
    const form = await signInForm();
    const post = (body: string, type = FORM) => h.json("/admin/sign-in", { method: "POST", headers: { "content-type": type, cookie: form.cookie }, body });
    expect((await post(`token=${token}&csrf_token=${form.csrf}&extra=1`)).body.error).toBe("invalid_payload");
    expect((await post(`token=${token}&token=x&csrf_token=${form.csrf}`)).body.message).toContain("appears twice");
    expect((await post(`token=${"a".repeat(9000)}`)).status).toBe(413);
    expect((await post(JSON.stringify({ token, csrf_token: form.csrf }), "application/json")).status).toBe(415);
    expect((await post("token=%ff&csrf_token=x")).body.error).toBe("invalid_payload");
    // Every other route still refuses a form body.
    const other = await h.json("/admin/backup/run", { method: "POST", headers: { authorization: `Bearer ${token}`, "content-type": FORM }, body: "a=1" });
    expect(other.status).toBe(415);
  });

  test("sign-in attempts are rate-limited per IP", async () => {
    let last = 0;
    for (let i = 0; i < 11; i++) last = (await signIn({ token: "hat_wrong-token-wrong-token-wrong" })).status;
    expect(last).toBe(429);
  });
});

describe("sessions on pages and routes", () => {
  test("every page and route without credentials: pages redirect, JSON routes 403", async () => {
    const page = await h.request("/admin/ops/config", { headers: { accept: BROWSER_ACCEPT } });
    expect(page.status).toBe(303);
    expect(page.headers.get("location")).toBe("/admin/sign-in?next=%2Fadmin%2Fops%2Fconfig");
    expect(
      (await h.request("/admin/sign-out", { method: "POST", headers: { "content-type": FORM, accept: BROWSER_ACCEPT }, body: "csrf_token=x" })).status,
    ).toBe(303);
    expect((await h.json("/admin/sessions")).status).toBe(403);
    expect((await h.json("/admin/sessions/0123456789abcdef/revoke", { method: "POST" })).status).toBe(403);
    // A wrong bearer token is 403 everywhere, pages included (no fallback to the sign-in page).
    expect((await h.json("/admin/ops/config", { headers: { authorization: "Bearer hat_wrong-token-wrong-token" } })).status).toBe(403);
    // A made-up cookie is no session.
    expect((await h.request("/admin/ops/config", { headers: { cookie: `herald_admin_session=${"A".repeat(43)}`, accept: BROWSER_ACCEPT } })).status).toBe(303);
    // A script (no Accept naming text/html) has no use for a sign-in form: pages and forms answer it 403 with the
    // JSON envelope, as the spec has every admin endpoint answer others.
    for (const [path, init] of [
      ["/admin/ops/config", {}],
      ["/admin/ops/readiness", { headers: { accept: "application/json" } }],
      ["/admin/ops/link-inbox", { headers: { cookie: `herald_admin_session=${"A".repeat(43)}` } }],
      ["/admin/console/backups/run", { method: "POST", headers: { "content-type": FORM }, body: "csrf_token=x" }],
    ] as const) {
      const res = await h.json(path, init);
      expect({ path, status: res.status, error: (res.body as { error?: string }).error }).toEqual({ path, status: 403, error: "forbidden" });
      expect(res.headers.get("location")).toBeNull();
    }
  });

  test("a bearer token opens the pages and routes too (curl)", async () => {
    const page = await h.request("/admin/ops/config", { headers: { authorization: `Bearer ${token}` } });
    expect(page.status).toBe(200);
    expect(await page.text()).toContain("bearer token: no session to sign out of");
    expect((await h.json("/admin/sessions", { headers: { authorization: `Bearer ${token}` } })).body).toMatchObject({ success: true, count: 0, sessions: [] });
  });

  test("sign-out needs the session's CSRF token: missing or wrong → 403; right → revoked, cookie cleared, 303", async () => {
    const { cookie, csrf } = await session();
    const signOut = (body: string) => h.request("/admin/sign-out", { method: "POST", headers: { "content-type": FORM, cookie }, body });
    // Missing is the same CSRF refusal as wrong (docs/operations.md), not a malformed form.
    for (const body of ["", "csrf_token="]) {
      const missing = await signOut(body);
      expect({ body, status: missing.status, error: ((await missing.json()) as any).error }).toEqual({ body, status: 403, error: "forbidden" });
    }
    const wrong = await signOut("csrf_token=wrong");
    expect(wrong.status).toBe(403);
    expect(((await wrong.json()) as any).message).toContain("CSRF");
    expect((await h.request("/admin/ops/config", { headers: { cookie } })).status).toBe(200);
    const ok = await signOut(`csrf_token=${encodeURIComponent(csrf)}`);
    expect(ok.status).toBe(303);
    expect(ok.headers.get("location")).toBe("/admin/sign-in");
    expect(setCookies(ok).get("herald_admin_session")).toMatch(/^herald_admin_session=; Max-Age=0; Path=\/admin; HttpOnly; SameSite=Strict$/);
    expect((await h.request("/admin/ops/config", { headers: { cookie, accept: BROWSER_ACCEPT } })).status).toBe(303);
    expect((await audit()).map((r) => r.action)).toEqual(["admin_session.sign_in", "admin_session.sign_out"]);
  });

  test("an expired session redirects (the test clock moves past ADMIN_SESSION_TTL_SECONDS); the prune job deletes it", async () => {
    const { cookie } = await session();
    h.clock.advanceSeconds(28_799);
    expect((await h.request("/admin/ops/config", { headers: { cookie } })).status).toBe(200);
    h.clock.advanceSeconds(1);
    const res = await h.request("/admin/ops/config", { headers: { cookie, accept: BROWSER_ACCEPT } });
    expect(res.status).toBe(303);
    expect(res.headers.get("location")).toStartWith("/admin/sign-in?next=");
    await h.ctx.jobs.runNow("auth-prune");
    expect(await h.ctx.store.get("SELECT count(*) AS n FROM admin_sessions")).toEqual({ n: 0 });
  });

  test("last_seen_at is written at most once a minute", async () => {
    const { cookie } = await session();
    const seen = async () => (await h.ctx.store.get<{ last_seen_at: string }>("SELECT last_seen_at FROM admin_sessions"))!.last_seen_at;
    h.clock.advanceSeconds(30);
    await h.request("/admin/ops/config", { headers: { cookie } });
    expect(await seen()).toBe("2026-01-01T00:00:00.000Z");
    h.clock.advanceSeconds(31);
    await h.request("/admin/ops/config", { headers: { cookie } });
    expect(await seen()).toBe("2026-01-01T00:01:01.000Z");
  });

  test("sessions are listed without secrets and revoked by their public handle (cookie + X-CSRF-Token, or bearer)", async () => {
    const a = await session();
    h.clock.advanceSeconds(1);
    const b = await session();
    const list = await h.json("/admin/sessions", { headers: { cookie: a.cookie } });
    expect(list.status).toBe(200);
    expect(list.body.count).toBe(2);
    const text = JSON.stringify(list.body);
    for (const s of [a.cookie, b.cookie, a.csrf, b.csrf]) expect(text).not.toContain(s.split("=").pop()!);
    const row = await h.ctx.store.all<{ session_hash: string; csrf_hash: string }>("SELECT session_hash, csrf_hash FROM admin_sessions");
    expect(row).toHaveLength(2);
    for (const r of row) {
      expect(text).not.toContain(r.session_hash);
      expect(text).not.toContain(r.csrf_hash);
    }
    const handles: string[] = list.body.sessions.map((s: any) => s.id);
    expect(handles.every((id) => /^[0-9a-f]{16}$/.test(id))).toBe(true);
    // With the cookie, a state change needs the CSRF header.
    const target = handles[0]!; // newest first: b
    expect((await h.json(`/admin/sessions/${target}/revoke`, { method: "POST", headers: { cookie: a.cookie } })).status).toBe(403);
    const revoked = await h.json(`/admin/sessions/${target}/revoke`, { method: "POST", headers: { cookie: a.cookie, "x-csrf-token": a.csrf } });
    expect(revoked.status).toBe(200);
    expect(revoked.body.session).toMatchObject({ id: target, active: false });
    // b is out, a still in.
    expect((await h.request("/admin/ops/config", { headers: { cookie: b.cookie, accept: BROWSER_ACCEPT } })).status).toBe(303);
    expect((await h.request("/admin/ops/config", { headers: { cookie: a.cookie } })).status).toBe(200);
    const unknown = await h.json("/admin/sessions/ffffffffffffffff/revoke", { method: "POST", headers: { authorization: `Bearer ${token}` } });
    expect(unknown.status).toBe(404);
    expect((await h.json("/admin/sessions/not-a-handle/revoke", { method: "POST", headers: { authorization: `Bearer ${token}` } })).status).toBe(400);
    expect((await audit()).map((r) => r.action)).toContain("admin_session.revoke");
  });

  test("revoking the admin token kills its sessions", async () => {
    const { cookie } = await session();
    expect((await h.ctx.store.run("UPDATE admin_tokens SET revoked_at = ?", [h.clock.now().toISOString()])).changes).toBe(1);
    expect((await h.request("/admin/ops/config", { headers: { cookie, accept: BROWSER_ACCEPT } })).status).toBe(303);
    expect((await h.request("/admin/ops/config", { headers: { cookie } })).status).toBe(403);
    expect((await h.json("/admin/sessions", { headers: { cookie } })).status).toBe(403);
  });
});

describe("the config page", () => {
  test("shows every variable grouped, masks secrets, highlights what differs from the default", async () => {
    await h.close();
    const secret = "s".repeat(40);
    h = await openTestApp({ env: { ADMIN_TOKEN: secret, WEBHOOK_MAX_ATTEMPTS: "7", RATE_LIMIT_PUBLIC_API_PER_MIN: "90" } });
    token = await createAdminToken(h, "ops");
    const { cookie } = await session();
    const res = await h.request("/admin/ops/config", { headers: { cookie } });
    expect(res.headers.get("cache-control")).toBe("private, no-store");
    expect(res.headers.get("x-frame-options")).toBe("DENY");
    const html = await res.text();
    expect(html).not.toContain(secret);
    expect(html).not.toContain(token);
    expect(html).toMatch(/<tr id="var-ADMIN_TOKEN" class="changed">.*<code>\*\*\*\*<\/code>/);
    // A long name may break only after an underscore (<wbr>), never mid-word.
    expect(html).toMatch(/<tr id="var-WEBHOOK_MAX_ATTEMPTS" class="changed"><td><code>WEBHOOK_<wbr>MAX_<wbr>ATTEMPTS<\/code><\/td><td><code>7<\/code>/);
    expect(html).toContain("<code>PARTNER_<wbr>SANDBOX_<wbr>RATE_<wbr>LIMIT_<wbr>PER_<wbr>MINUTE</code>");
    // Set, but to its default: not highlighted.
    expect(html).toMatch(/<tr id="var-RATE_LIMIT_PUBLIC_API_PER_MIN">/);
    expect(html).toContain('id="group-webhooks"');
    expect(html).toContain('action="/admin/sign-out"');
    for (const name of h.ctx.config.described.map((r) => r.name)) expect(html).toContain(`id="var-${name}"`);
  });
});
