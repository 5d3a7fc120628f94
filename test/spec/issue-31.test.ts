// Issue 31 ("the console in the browser"), re-verified over HTTP: "Give every operator area a page … with its
// exports linked and downloadable with the session" (the outside run found 403-digest/export.csv and
// incidents/draft.md answering 403 to the session cookie). Walks every console area as a signed-in browser would:
// each page, then every /admin link it shows (GET), with the cookie only. Also: a date without a zone typed into the
// link-inbox page's filter gives the page again, not a raw JSON 400.
import { afterAll, beforeAll, expect, test } from "bun:test";
import { CONSOLE_NAV } from "../../src/console/frame";
import { openTestApp, type TestApp } from "../support/app";
import { BROWSER_ACCEPT, signedInCookie } from "../support/console";
import { createAdminToken } from "../support/partner";

let h: TestApp;
let cookie: string;
beforeAll(async () => {
  h = await openTestApp();
  const token = await createAdminToken(h);
  // Something to list: a backup and an incident draft's window.
  await h.request("/admin/backup/run", { method: "POST", headers: { authorization: `Bearer ${token}` } });
  cookie = await signedInCookie(h, token);
});
afterAll(() => h?.close());

const browse = (path: string) => h.request(path, { headers: { cookie, accept: BROWSER_ACCEPT } });

test("every console area's page opens with the session, and every /admin link it shows opens with the session too", async () => {
  const wrong: string[] = [];
  const seen = new Set<string>();
  for (const [href] of CONSOLE_NAV) {
    const page = await browse(href);
    if (page.status !== 200 || !page.headers.get("content-type")?.includes("text/html")) {
      wrong.push(`${href}: ${page.status}`);
      continue;
    }
    const html = await page.text();
    for (const m of html.matchAll(/<a\b[^>]*href="([^"]+)"/g)) {
      const link = m[1]!.replaceAll("&amp;", "&");
      if (!link.startsWith("/admin") || seen.has(link)) continue;
      seen.add(link);
      const r = await browse(link);
      // A link may lead to sign-out's form or another page (3xx inside /admin); it must never be refused or fail.
      const location = r.headers.get("location") ?? "";
      if (r.status === 403 || r.status === 401 || r.status >= 500 || location.startsWith("/admin/sign-in")) {
        wrong.push(`${href} → ${link}: ${r.status} ${location}`);
      }
      await r.arrayBuffer();
    }
  }
  expect(seen.size).toBeGreaterThan(20);
  expect(wrong).toEqual([]);
});

test("the link-inbox page's filter with a date without a zone is the page again with the message, not raw JSON", async () => {
  const r = await browse("/admin/ops/link-inbox?at_from=2026-01-01T00:00:00");
  expect(r.headers.get("content-type")).toContain("text/html");
  expect(await r.text()).toContain("at_from");
});

test("the two exports the outside run named answer the session cookie: 403-digest/export.csv and incidents/draft.md", async () => {
  for (const [path, type] of [
    ["/admin/ops/403-digest/export.csv", "text/csv"],
    ["/admin/ops/incidents/draft.md", "text/markdown"],
  ] as const) {
    const r = await h.request(path, { headers: { cookie } });
    expect(r.status).toBe(200);
    expect(r.headers.get("content-type")).toContain(type);
  }
});
