// Issue 20 (operator console I), re-verified over HTTP: every route needs the admin token; the sign-in gives an
// HttpOnly, SameSite=Strict session cookie with an expiry and the pages need it; backups download with their sha256
// and refuse a traversing name; the spec's clamps are 400s naming the parameter; the trend chart is a PNG.
import { afterAll, beforeAll, expect, test } from "bun:test";
import { openTestApp, type TestApp } from "../support/app";
import { createAdminToken } from "../support/partner";
import { testOn } from "../support/skipped";
import { type ServedDoc, undeclaredQuery } from "./declared-params";

let h: TestApp;
let token: string;
let admin: Record<string, string>;
beforeAll(async () => {
  h = await openTestApp();
  token = await createAdminToken(h);
  admin = { authorization: `Bearer ${token}` };
});
afterAll(() => h?.close());

const READS = [
  "/admin/ops/403-digest",
  "/admin/ops/403-digest/export.json",
  "/admin/ops/403-digest/export.csv",
  "/admin/ops/403-digest/probe-trend.png",
  "/admin/ops/403-digest/suppressions",
  "/admin/ops/403-digest/suppressions/export.json",
  "/admin/ops/readiness/403-noise/export.json",
  "/admin/ops/readiness/403-noise/export.csv",
  "/admin/ops/readiness/synthetic-zero-history.csv",
  "/admin/ops/incidents/draft.json",
  "/admin/ops/incidents/draft.md",
  "/admin/ops/incidents/draft.txt",
  "/admin/ops/incidents",
  "/admin/ops/incidents/export",
  "/admin/ops/incidents/export.json",
];

test("every issue-20 read is 403 without the admin token (and with a wrong one) and 200 with it", async () => {
  const wrong: string[] = [];
  for (const path of READS) {
    const none = await h.request(path);
    const bad = await h.request(path, { headers: { authorization: "Bearer hat_wrong" } });
    const ok = await h.request(path, { headers: admin });
    if (none.status !== 403 || bad.status !== 403 || ok.status !== 200) wrong.push(`${path}: ${none.status}/${bad.status}/${ok.status}`);
  }
  expect(wrong).toEqual([]);
});

test("the trend chart is a PNG; every baseline_mode is taken and another is 400 naming it", async () => {
  const png = await h.request("/admin/ops/403-digest/probe-trend.png", { headers: admin });
  expect(png.headers.get("content-type")).toContain("image/png");
  expect([...new Uint8Array(await png.arrayBuffer()).slice(0, 8)]).toEqual([137, 80, 78, 71, 13, 10, 26, 10]);
  for (const mode of ["rolling_24h", "same_hour_yesterday", "same_weekday_hour_4w"]) {
    expect((await h.request(`/admin/ops/403-digest?baseline_mode=${mode}`, { headers: admin })).status).toBe(200);
  }
  const bad = await h.json("/admin/ops/403-digest?baseline_mode=weekly", { headers: admin });
  expect(bad.status).toBe(400);
  expect(bad.body.message).toContain("baseline_mode");
  const days = await h.json("/admin/ops/readiness/403-noise/export.json?days=8", { headers: admin });
  expect(days.status).toBe(400);
  expect(days.body.message).toContain("days");
});

test("sign-in: a form with a CSRF token, an HttpOnly SameSite=Strict expiring session cookie, pages with it, sign-out ends it", async () => {
  const page = await h.request("/admin/ops/readiness", { headers: { accept: "text/html" } });
  expect([302, 303]).toContain(page.status);
  expect(page.headers.get("location")).toContain("/admin/sign-in");
  const form = await h.request("/admin/sign-in", { headers: { accept: "text/html" } });
  const html = await form.text();
  expect(html).toContain('name="token"');
  const csrf = /name="csrf_token" value="([^"]+)"/.exec(html)![1]!;
  const csrfCookie = form.headers
    .getSetCookie()
    .find((c) => c.startsWith("herald_signin_csrf="))!
    .split(";")[0]!;
  const signIn = await h.request("/admin/sign-in", {
    method: "POST",
    headers: { "content-type": "application/x-www-form-urlencoded", cookie: csrfCookie, accept: "text/html" },
    body: new URLSearchParams({ token, csrf_token: csrf }).toString(),
  });
  expect(signIn.status).toBe(303);
  const session = signIn.headers.getSetCookie().find((c) => !c.startsWith("herald_signin_csrf="))!;
  expect(session).toMatch(/HttpOnly/i);
  expect(session).toMatch(/SameSite=Strict/i);
  expect(session).toMatch(/Max-Age=\d+|Expires=/i);
  const cookie = session.split(";")[0]!;
  for (const path of ["/admin/ops/readiness", "/admin/ops/config"]) {
    const r = await h.request(path, { headers: { cookie, accept: "text/html" } });
    expect(r.status).toBe(200);
    expect(r.headers.get("content-type")).toContain("text/html");
  }
  const readiness = await (await h.request("/admin/ops/readiness", { headers: { cookie, accept: "text/html" } })).text();
  const sessionCsrf = /name="csrf_token" value="([^"]+)"/.exec(readiness)![1]!;
  const noCsrf = await h.request("/admin/sign-out", { method: "POST", headers: { cookie, "content-type": "application/x-www-form-urlencoded" }, body: "" });
  expect(noCsrf.status).toBe(403);
  const out = await h.request("/admin/sign-out", {
    method: "POST",
    headers: { cookie, "content-type": "application/x-www-form-urlencoded", accept: "text/html" },
    body: new URLSearchParams({ csrf_token: sessionCsrf }).toString(),
  });
  expect(out.status).toBe(303);
  const after = await h.request("/admin/ops/readiness", { headers: { cookie, accept: "text/html" } });
  expect([302, 303]).toContain(after.status);
});

// Backups are of the SQLite file (on PostgreSQL every backup route is 409 backup_not_on_postgres, docs/operations.md).
testOn("sqlite", "test/spec/issue-20.test.ts")(
  "the backups list is 403 without the token; a backup downloads with Content-Length and its sha256; a name that leaves the folder is refused",
  async () => {
    expect((await h.request("/admin/backups")).status).toBe(403);
    const run = await h.json("/admin/backup/run", { method: "POST", headers: admin });
    expect(run.status).toBe(200);
    const list = await h.json("/admin/backups", { headers: admin });
    const row = (list.body.data ?? list.body.backups)[0];
    const file = await h.request(`/admin/backups/${encodeURIComponent(row.name)}`, { headers: admin });
    expect(file.status).toBe(200);
    const bytes = new Uint8Array(await file.arrayBuffer());
    expect(Number(file.headers.get("content-length"))).toBe(bytes.length);
    const sha = new Bun.CryptoHasher("sha256").update(bytes).digest("hex");
    expect(file.headers.get("x-backup-sha256")).toBe(sha);
    expect(row.sha256).toBe(sha);
    for (const name of ["..%2Fherald.db", "%2E%2E%2F%2E%2E%2Fetc%2Fpasswd", "herald.db"]) {
      const r = await h.request(`/admin/backups/${name}`, { headers: admin });
      expect([400, 404]).toContain(r.status);
    }
  },
);

// "Read the spec's 'Admin operations (operator-only)' table …; every parameter listed there is part of the contract":
// each parameter the spec's rows for this routes name is declared on the route in the served document.
const SPEC_PARAMS: Array<[paths: string[], params: string[]]> = [
  [["/admin/ops/403-digest"], ["baseline_mode", "new_path_lookback_days", "spike_consecutive_hours"]],
  [["/admin/ops/readiness/403-noise/export.json"], ["days", "windows", "compact", "include_windows_meta"]],
  [["/admin/ops/readiness/403-noise/export.csv"], ["mode", "include_points"]],
  [["/admin/ops/readiness/synthetic-zero-history.csv"], ["limit", "days"]],
  [
    ["/admin/ops/incidents/draft.json", "/admin/ops/incidents/draft.md", "/admin/ops/incidents/draft.txt"],
    [
      "hours",
      "limit",
      "source",
      "severity",
      "since",
      "until",
      "index",
      "context",
      "template",
      "preflight_day_offset",
      "top_errors_hours",
      "top_errors_limit",
      "top_errors_top_n",
    ],
  ],
];

test("every parameter the spec's admin table lists for these routes is declared on them", async () => {
  const doc = (await h.json("/api/openapi.json")).body as ServedDoc;
  expect(undeclaredQuery(doc, SPEC_PARAMS)).toEqual([]);
});
