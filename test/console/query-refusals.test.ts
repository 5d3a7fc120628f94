import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { afterResponses, type TestApp } from "../support/app";
import { FakeClock } from "../support/clock";
import { BROWSER_ACCEPT, csrfOf, errorLineOf, formPost, headingOf, signedInCookie } from "../support/console";
import { createAdminToken } from "../support/partner";
import { openMessengerApp } from "../messenger/support";

// A console page asked for with a query value its schema refuses (out of range): a browser gets the page again —
// its defaults, the message naming the parameter and its range above them, 400, text/html — as a refused form does
// (src/console/kit.ts `consoleRoute`); a script, with the bearer token or with the cookie but no text/html in Accept,
// gets the 400 invalid_query envelope naming the parameter; a browser not signed in is sent to sign in first, the
// query kept in `next`. The nine pages whose query has bounded numbers, on the real app (a bot token set, so the
// messenger page draws its figures).

const NOW = "2026-04-01T12:00:00.000Z";

interface Case {
  /** The page and a value out of range. */
  path: string;
  /** The page's <title> before " · Herald". */
  title: string;
  field: string;
  problem: string;
  /** The same page with the value in range answers 200. */
  good: string;
}

const CASES: Case[] = [
  {
    path: "/admin/console/403-digest?hours=999",
    title: "403 digest",
    field: "query.hours",
    problem: 'must be an integer from 1 to 168; got "999"',
    good: "/admin/console/403-digest?hours=168",
  },
  {
    path: "/admin/console/alerts?days=999",
    title: "Alerts",
    field: "query.days",
    problem: 'must be an integer from 1 to 90; got "999"',
    good: "/admin/console/alerts?days=90",
  },
  {
    path: "/admin/console/incidents?hours=9999",
    title: "Incidents",
    field: "query.hours",
    problem: 'must be an integer from 1 to 720; got "9999"',
    good: "/admin/console/incidents?hours=720",
  },
  {
    path: "/admin/console/preflight?day_offset=31",
    title: "Preflight guards",
    field: "query.day_offset",
    problem: 'must be an integer from 1 to 30; got "31"',
    good: "/admin/console/preflight?day_offset=30",
  },
  {
    path: "/admin/console/backups?offset=100001",
    title: "Backups",
    field: "query.offset",
    problem: 'must be an integer from 0 to 100000; got "100001"',
    good: "/admin/console/backups?offset=100000",
  },
  {
    path: "/admin/console/messenger?days=91",
    title: "Messenger",
    field: "query.days",
    problem: 'must be an integer from 1 to 90; got "91"',
    good: "/admin/console/messenger?days=90",
  },
  {
    path: "/admin/console/partners?offset=100001",
    title: "Partners & keys",
    field: "query.offset",
    problem: 'must be an integer from 0 to 100000; got "100001"',
    good: "/admin/console/partners?offset=100000",
  },
  {
    path: "/admin/console/dead-letters?offset=1000001",
    title: "Webhook dead letters",
    field: "query.offset",
    problem: 'must be an integer from 0 to 1000000; got "1000001"',
    good: "/admin/console/dead-letters?offset=1000000",
  },
  {
    path: "/admin/console/audit-runs?runs_offset=1000001",
    title: "Audit runs",
    field: "query.runs_offset",
    problem: 'must be an integer from 0 to 1000000; got "1000001"',
    good: "/admin/console/audit-runs?runs_offset=1000000",
  },
];

const escaped = (text: string) => text.replaceAll("&", "&amp;").replaceAll('"', "&quot;").replaceAll("<", "&lt;");

let h: TestApp;
let token: string;
let cookie: string;

beforeAll(async () => {
  h = await openMessengerApp({ clock: new FakeClock(NOW) });
  token = await createAdminToken(h, "ops");
  cookie = await signedInCookie(h, token);
});
afterAll(() => h.close());

describe.each(CASES)("GET $path", (c) => {
  test("a browser gets the page with the message (400, text/html); in range it is 200", async () => {
    const res = await h.request(c.path, { headers: { cookie, accept: BROWSER_ACCEPT } });
    const html = await res.text();
    expect(res.status).toBe(400);
    expect(res.headers.get("content-type")).toStartWith("text/html");
    expect(res.headers.get("cache-control")).toBe("private, no-store");
    expect(res.headers.get("x-request-id")).toMatch(/^req_/);
    expect(html).toContain(`<title>${escaped(c.title)} · Herald</title>`);
    expect(html).toContain(escaped(`${c.field} ${c.problem}`));
    // The frame of a signed-in page: the header with the sign-out form and the session's CSRF token.
    expect(html).toContain('name="csrf_token"');
    expect((await h.request(c.good, { headers: { cookie, accept: BROWSER_ACCEPT } })).status).toBe(200);
  });

  test("a script gets the JSON envelope naming the parameter: with the bearer token, or the cookie without text/html", async () => {
    const callers: Record<string, string>[] = [{ authorization: `Bearer ${token}` }, { cookie, accept: "application/json" }];
    for (const headers of callers) {
      const r = await h.json(c.path, { headers });
      expect(r.status).toBe(400);
      expect(r.headers.get("content-type")).toStartWith("application/json");
      expect(r.body).toMatchObject({ success: false, error: "invalid_query", details: [{ field: c.field, problem: c.problem }] });
    }
  });

  test("a browser not signed in is sent to sign in, the query kept for afterwards", async () => {
    const res = await h.request(c.path, { headers: { accept: BROWSER_ACCEPT } });
    expect(res.status).toBe(303);
    expect(res.headers.get("location")).toBe(`/admin/sign-in?next=${encodeURIComponent(c.path)}`);
  });
});

test("the request log records the re-drawn page as the 400 invalid_query it is", async () => {
  await afterResponses();
  await h.ctx.requestLog.flush();
  const before = await h.ctx.store.get<{ n: number }>("SELECT count(*) AS n FROM request_log WHERE route = ? AND status = 400 AND error_code = ?", [
    "/admin/console/403-digest",
    "invalid_query",
  ]);
  const res = await h.request("/admin/console/403-digest?hours=0", { headers: { cookie, accept: BROWSER_ACCEPT } });
  expect([res.status, (await res.text()).includes("query.hours must be an integer from 1 to 168")]).toEqual([400, true]);
  await afterResponses();
  await h.ctx.requestLog.flush();
  const after = await h.ctx.store.get<{ n: number }>("SELECT count(*) AS n FROM request_log WHERE route = ? AND status = 400 AND error_code = ?", [
    "/admin/console/403-digest",
    "invalid_query",
  ]);
  expect(Number(after!.n) - Number(before!.n)).toBe(1);
});

// Pages that answered a browser's bad or unknown parameter with the JSON envelope before the console route builder
// (src/console/kit.ts): one alert's page and one incident's (a path id), and the link inbox (a query value its
// schema refuses). Now a browser gets the page with the message, as on every console page; a script still the JSON.
describe.each([
  { path: "/admin/ops/alerts-monitor/alerts/abc", status: 400, heading: "Alert", code: "invalid_query" },
  { path: "/admin/ops/alerts-monitor/alerts/999", status: 404, heading: "Alert", code: "not_found" },
  { path: "/admin/ops/incidents/0", status: 400, heading: "Incident", code: "invalid_query" },
  { path: "/admin/ops/incidents/999", status: 404, heading: "Incident", code: "not_found" },
  { path: "/admin/ops/link-inbox?limit=abc", status: 400, heading: "Link inbox", code: "invalid_query" },
])("GET $path", (c) => {
  test("a browser gets the page with the message; a script the JSON envelope", async () => {
    const res = await h.request(c.path, { headers: { cookie, accept: BROWSER_ACCEPT } });
    const html = await res.text();
    expect([res.status, res.headers.get("content-type")]).toEqual([c.status, "text/html; charset=utf-8"]);
    expect(headingOf(html)).toBe(c.heading);
    expect(errorLineOf(html)).toBeTruthy();
    const script = await h.json(c.path, { headers: { authorization: `Bearer ${token}` } });
    expect([script.status, script.body.error]).toEqual([c.status, c.code]);
  });
});

// A form's body the schema refuses (a hand-made post: the form's inputs carry its bounds, so a browser cannot send
// it): the page again with the message for a browser, as a refused query is; the JSON envelope for a script; nothing
// changed. Here a suppression rule without its required reason, and one whose reason is over its 500 characters.
test("a console form's refused body: the page with the message for a browser, the envelope for a script", async () => {
  const page = await h.request("/admin/console/403-digest", { headers: { cookie, accept: BROWSER_ACCEPT } });
  const csrf = csrfOf(await page.text());
  const bodies: Record<string, string>[] = [
    { csrf_token: csrf, expires_in_days: "7" },
    { csrf_token: csrf, reason: "r".repeat(501), expires_in_days: "7" },
  ];
  for (const fields of bodies) {
    const res = await formPost(h, "/admin/console/403-digest/rules", cookie, fields);
    const html = await res.text();
    expect([res.status, res.headers.get("content-type"), headingOf(html)]).toEqual([400, "text/html; charset=utf-8", "403 digest"]);
    expect(errorLineOf(html)).toStartWith("Nothing was");
    expect(errorLineOf(html)).toContain("reason");
    const script = await formPost(h, "/admin/console/403-digest/rules", cookie, fields, "application/json");
    expect([script.status, ((await script.json()) as { error: string }).error]).toEqual([400, "invalid_payload"]);
  }
  const rules = await h.ctx.store.get<{ n: number }>("SELECT count(*) AS n FROM ops_403_suppressions", []);
  expect(Number(rules!.n)).toBe(0);
});
