// What the console page tests share: a signed-in session cookie (through the real sign-in form and its
// double-submit CSRF cookie), the CSRF token a page printed into its forms, the links of a page's exports list,
// and a form post as a browser sends it.
import { expect } from "bun:test";
import type { TestApp } from "./app";

export async function signedInCookie(app: TestApp, adminToken: string): Promise<string> {
  const form = await app.request("/admin/sign-in");
  const csrf = /name="csrf_token" value="([^"]+)"/.exec(await form.text())![1]!;
  const res = await app.request("/admin/sign-in", {
    method: "POST",
    headers: { "content-type": "application/x-www-form-urlencoded", cookie: `herald_signin_csrf=${csrf}` },
    body: new URLSearchParams({ token: adminToken, csrf_token: csrf }).toString(),
  });
  expect(res.status).toBe(303);
  return res.headers
    .getSetCookie()
    .find((c) => c.startsWith("herald_admin_session="))!
    .split(";")[0]!;
}

/** The CSRF token a page printed into its forms. */
export const csrfOf = (html: string) => /name="csrf_token" value="([^"]+)"/.exec(html)![1]!;

/** The hrefs of the page's exports list (section id="exports"), HTML entities decoded. */
export function exportLinksOf(html: string): string[] {
  const section = /<section id="exports">([\s\S]*?)<\/section>/.exec(html)?.[1] ?? "";
  return [...section.matchAll(/href="([^"]+)"/g)].map((m) => m[1]!.replaceAll("&amp;", "&"));
}

/** What a browser's form post and navigation say they accept (pages for a browser, JSON for a script). */
export const BROWSER_ACCEPT = "text/html,application/xhtml+xml,application/xml;q=0.9,*/*;q=0.8";

/** A urlencoded form post with the session cookie, as the browser sends it (`accept: null`: as a script, no Accept). */
export const formPost = (app: TestApp, path: string, cookie: string, fields: Record<string, string>, accept: string | null = BROWSER_ACCEPT) =>
  app.request(path, {
    method: "POST",
    headers: { "content-type": "application/x-www-form-urlencoded", cookie, ...(accept === null ? {} : { accept }) },
    body: new URLSearchParams(fields).toString(),
  });

/** GET a page with the session cookie: status and HTML. */
export async function pageAs(app: TestApp, path: string, cookie: string) {
  const res = await app.request(path, { headers: { cookie, accept: BROWSER_ACCEPT } });
  return { status: res.status, html: await res.text(), headers: res.headers };
}
