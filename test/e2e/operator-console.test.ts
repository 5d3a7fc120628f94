import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { parse } from "csv-parse/sync";
import { TARGET } from "../support/target";
import { csrfField, expectRefusal, rows, setCookies, startE2E, type E2E } from "./support";

// The operator console as a browser drives it (docs/operations.md, "Operator sign-in and pages"): a page without a
// session sends to the sign-in form; the form's double-submit CSRF cookie and field, an admin token, a session
// cookie; the readiness page and an export with that cookie; sign-out with the page's CSRF token. Cookies are
// carried by hand, as a browser would send them (Path=/admin).

const FORM = "application/x-www-form-urlencoded";
/** What a browser's navigation says it accepts: pages are sent to sign-in only for a browser, a script gets 403. */
const BROWSER = "text/html,application/xhtml+xml,application/xml;q=0.9,*/*;q=0.8";
let e: E2E;
beforeAll(async () => {
  e = await startE2E();
});
afterAll(() => e?.stop());

/** GET the sign-in form: the hidden CSRF field and the cookie that must match it. */
async function signInForm(next?: string) {
  const res = await e.h.request(`/admin/sign-in${next ? `?next=${encodeURIComponent(next)}` : ""}`);
  expect(res.status).toBe(200);
  expect(res.headers.get("content-type")).toContain("text/html");
  const csrf = csrfField(await res.text());
  expect(setCookies(res).get("herald_signin_csrf")).toBe(csrf);
  return { csrf, cookie: `herald_signin_csrf=${csrf}` };
}

const postForm = (path: string, cookie: string | null, fields: Record<string, string>) =>
  e.h.request(path, { method: "POST", headers: { "content-type": FORM, ...(cookie ? { cookie } : {}) }, body: new URLSearchParams(fields).toString() });

describe(`operator console over HTTP (${TARGET.label})`, () => {
  let session = "";

  test("without a session the page sends to sign-in; a wrong token or a missing CSRF cookie is refused", async () => {
    const page = await e.h.request("/admin/ops/readiness", { headers: { accept: BROWSER } });
    expect(page.status).toBe(303);
    expect(page.headers.get("location")).toBe("/admin/sign-in?next=%2Fadmin%2Fops%2Freadiness");
    expectRefusal(await e.h.json("/admin/ops/readiness"), 403, "forbidden");
    expectRefusal(await e.h.json("/admin/ops/readiness/403-noise/export.json"), 403, "forbidden");

    const form = await signInForm("/admin/ops/readiness");
    const noCookie = await postForm("/admin/sign-in", null, { token: e.adminToken, csrf_token: form.csrf });
    expect(noCookie.status).toBe(403);
    const wrongToken = await postForm("/admin/sign-in", form.cookie, { token: "hat_wrong-token-wrong-token-wrong", csrf_token: form.csrf });
    expect(wrongToken.status).toBe(401);
    expect(((await wrongToken.json()) as { error: string }).error).toBe("unauthorized");
    // A browser gets the form again, with the reason.
    const html = await e.h.request("/admin/sign-in", {
      method: "POST",
      headers: { "content-type": FORM, cookie: form.cookie, accept: "text/html" },
      body: new URLSearchParams({ token: "hat_wrong-token-wrong-token-wrong", csrf_token: form.csrf }).toString(),
    });
    expect(html.status).toBe(401);
    expect(await html.text()).toContain("That is not a valid admin token");
  });

  test("sign in with the admin token: a session cookie and a 303 back to the page asked for", async () => {
    const form = await signInForm("/admin/ops/readiness");
    const res = await postForm("/admin/sign-in", form.cookie, { token: e.adminToken, csrf_token: form.csrf, next: "/admin/ops/readiness" });
    expect(res.status).toBe(303);
    expect(res.headers.get("location")).toBe("/admin/ops/readiness");
    const line = res.headers.getSetCookie().find((l) => l.startsWith("herald_admin_session="))!;
    expect(line).toMatch(/^herald_admin_session=[A-Za-z0-9_-]{43}; Max-Age=\d+; Path=\/admin; HttpOnly; SameSite=Strict$/);
    expect(setCookies(res).get("herald_signin_csrf")).toBe(""); // the form's cookie is cleared
    session = `herald_admin_session=${setCookies(res).get("herald_admin_session")}`;
    const sessions = await e.h.json("/admin/sessions", { headers: { cookie: session } });
    expect(sessions.body).toMatchObject({ success: true, count: 1, sessions: [{ admin_token_name: "e2e-operator", active: true }] });
  });

  test("the readiness page and its exports open with the session cookie", async () => {
    const page = await e.h.request("/admin/ops/readiness", { headers: { cookie: session } });
    expect(page.status).toBe(200);
    expect(page.headers.get("content-type")).toContain("text/html");
    expect(page.headers.get("cache-control")).toContain("no-store");
    const html = await page.text();
    expect(html).toContain("<h1>Readiness</h1>");
    expect(html).toMatch(/id="summary-state">(Ready|Attention)</);
    expect(html).toContain('action="/admin/sign-out"');
    expect(html).toContain("/admin/ops/readiness/403-noise/export.csv");

    const json = await e.h.json("/admin/ops/readiness/403-noise/export.json?days=7&include_windows_meta=1", { headers: { cookie: session } });
    expect(json.status).toBe(200);
    expect(json.body).toMatchObject({ success: true, days: 7 });
    const csv = await e.h.request("/admin/ops/readiness/403-noise/export.csv?days=7&mode=summary", { headers: { cookie: session } });
    expect(csv.status).toBe(200);
    expect(csv.headers.get("content-disposition")).toBe('attachment; filename="herald-403-noise-7d-summary.csv"');
    const records = parse(await csv.text(), { columns: true }) as Array<Record<string, string>>;
    // The windows default to 7, 14 and 30 whatever days is (days sets only the per-day points).
    expect(records.map((r) => [r.row_type, r.window_days])).toEqual([
      ["window", "7"],
      ["window", "14"],
      ["window", "30"],
    ]);
    const w = json.body.windows[0];
    expect(records[0]).toMatchObject({ requests: String(w.requests), forbidden: String(w.forbidden), within_threshold: String(w.within_threshold) });
    expectRefusal(await e.h.json("/admin/ops/readiness/403-noise/export.json?days=10", { headers: { cookie: session } }), 400, "invalid_query");
  });

  test("sign out needs the page's CSRF token; afterwards the cookie opens nothing", async () => {
    const page = await e.h.request("/admin/ops/config", { headers: { cookie: session } });
    expect(page.status).toBe(200);
    const csrf = csrfField(await page.text());
    expect((await postForm("/admin/sign-out", session, { csrf_token: "wrong" })).status).toBe(403);
    const out = await postForm("/admin/sign-out", session, { csrf_token: csrf });
    expect(out.status).toBe(303);
    expect(out.headers.get("location")).toBe("/admin/sign-in");
    expect(setCookies(out).get("herald_admin_session")).toBe("");
    expect((await e.h.request("/admin/ops/readiness", { headers: { cookie: session, accept: BROWSER } })).status).toBe(303);
    expectRefusal(await e.h.json("/admin/ops/readiness", { headers: { cookie: session } }), 403, "forbidden");
    expectRefusal(await e.h.json("/admin/ops/readiness/403-noise/export.json", { headers: { cookie: session } }), 403, "forbidden");
    const actions = (await rows<{ action: string }>(e.h, "SELECT action FROM admin_audit WHERE action LIKE 'admin_session.%' ORDER BY id")).map(
      (r) => r.action,
    );
    expect(actions).toEqual(["admin_session.sign_in_failed", "admin_session.sign_in_failed", "admin_session.sign_in", "admin_session.sign_out"]);
  });
});
