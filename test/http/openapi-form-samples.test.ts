import { afterEach, expect, test } from "bun:test";
import { openTestApp, type TestApp } from "../support/app";
import { csrfOf } from "../support/console";
import { createAdminToken } from "../support/partner";

// The code samples of form operations (application/x-www-form-urlencoded: the sign-in form and the operator
// console's forms, src/http/openapi/samples.ts) send the form's fields, not an empty body.

let h: TestApp;
afterEach(async () => {
  await h?.close();
});

const sampleOf = (op: any, lang: string): string => op["x-codeSamples"].find((x: any) => x.lang === lang)?.source ?? "";

test("a form operation's samples send its required fields", async () => {
  h = await openTestApp();
  const doc = (await h.json("/api/openapi.json")).body;
  const missing: string[] = [];
  let forms = 0;
  for (const [path, item] of Object.entries(doc.paths) as [string, any][])
    for (const [method, op] of Object.entries(item) as [string, any][]) {
      const form = op?.requestBody?.content?.["application/x-www-form-urlencoded"]?.schema;
      if (!form?.required?.length) continue;
      forms++;
      // The samples' languages (samples.ts): shell is curl, typescript is fetch, python is urllib.
      for (const lang of ["shell", "typescript", "python"]) {
        const src = sampleOf(op, lang);
        for (const field of form.required as string[]) if (!src.includes(field)) missing.push(`${lang} ${method.toUpperCase()} ${path}: ${field}`);
      }
    }
  expect(forms).toBeGreaterThan(5);
  expect(missing).toEqual([]);
});

test("each language sends the form urlencoded, with its content type", async () => {
  h = await openTestApp();
  const op = (await h.json("/api/openapi.json")).body.paths["/admin/console/partners/keys/{key_id}/rotate"].post;
  expect(sampleOf(op, "shell")).toContain(`-H 'Content-Type: application/x-www-form-urlencoded' \\\n  --data-urlencode 'overlap_hours=24'`);
  expect(sampleOf(op, "typescript")).toContain(`body: new URLSearchParams({ overlap_hours: "24" }),`);
  expect(sampleOf(op, "python")).toContain(`data=urllib.parse.urlencode({"overlap_hours": "24"}).encode()`);
  expect(sampleOf(op, "python")).toContain("import json, os, urllib.error, urllib.parse, urllib.request");
});

/** The fields of a shell sample's `--data-urlencode 'name=value'` lines (single-quoted as shellQuote writes them). */
function curlFormFields(shell: string): [string, string][] {
  return [...shell.matchAll(/--data-urlencode ((?:'[^']*'|\\')+)/g)].map((m) => {
    const word = m[1]!.replace(/'([^']*)'|\\'/g, (_, quoted: string | undefined) => quoted ?? "'");
    const eq = word.indexOf("=");
    return [word.slice(0, eq), word.slice(eq + 1)];
  });
}

test("the sign-in sample's form body, with a real admin token and the form's CSRF token, signs in", async () => {
  h = await openTestApp();
  const op = (await h.json("/api/openapi.json")).body.paths["/admin/sign-in"].post;
  const shell = sampleOf(op, "shell");
  expect(shell).toContain("-H 'Content-Type: application/x-www-form-urlencoded'");
  const fields = curlFormFields(shell);
  expect(fields.map(([k]) => k).sort()).toEqual(["csrf_token", "token"]);
  // The CSRF placeholder says where the value comes from; fill in what GET /admin/sign-in printed (and its cookie).
  expect(Object.fromEntries(fields).csrf_token).toBe("<csrf_token printed into the form by GET /admin/sign-in>");
  const page = await h.request("/admin/sign-in");
  const csrf = csrfOf(await page.text());
  const cookie = page.headers
    .getSetCookie()
    .find((c) => c.startsWith("herald_signin_csrf="))!
    .split(";")[0]!;
  // The sample sends the cookie back (-b), as a placeholder naming the GET that set it: the document declares it.
  const sent = /^ {2}-b '([^']+)'/m.exec(shell)?.[1];
  expect(sent).toBe("herald_signin_csrf=<the herald_signin_csrf cookie GET /admin/sign-in set>");
  expect(op.parameters).toContainEqual(expect.objectContaining({ in: "cookie", name: "herald_signin_csrf" }));
  const token = await createAdminToken(h);
  const body = new URLSearchParams(fields.map(([k, v]): [string, string] => [k, k === "token" ? token : k === "csrf_token" ? csrf : v])).toString();
  const res = await h.request("/admin/sign-in", {
    method: "POST",
    headers: { "content-type": "application/x-www-form-urlencoded", cookie: sent!.replace(/<[^>]+>/, cookie.split("=")[1]!) },
    body,
  });
  expect(res.status).not.toBe(400);
  expect(res.status).toBe(303);
  expect(res.headers.getSetCookie().some((c) => c.startsWith("herald_admin_session="))).toBe(true);
});

test("every console form sample's fields, posted with a bearer token, are not refused as a form", async () => {
  h = await openTestApp();
  const doc = (await h.json("/api/openapi.json")).body;
  const token = await createAdminToken(h);
  const refused: string[] = [];
  for (const [path, item] of Object.entries(doc.paths) as [string, any][])
    for (const [method, op] of Object.entries(item) as [string, any][]) {
      if (!op?.requestBody?.content?.["application/x-www-form-urlencoded"] || !path.startsWith("/admin/console/")) continue;
      const shell = sampleOf(op, "shell");
      const url = new URL(/curl -sS -X POST '([^']+)'/.exec(shell)![1]!);
      const res = await h.request(url.pathname + url.search, {
        method: method.toUpperCase(),
        headers: { "content-type": "application/x-www-form-urlencoded", authorization: `Bearer ${token}`, accept: "application/json" },
        body: new URLSearchParams(curlFormFields(shell)).toString(),
      });
      // The example ids name nothing (404, or 400 for a path id that must be a number: SILENCE_ID) and some actions
      // need state (409); a refused form is 400 naming a body field, 403 (CSRF) or 415.
      const text = await res.text();
      const pathOnly = res.status === 400 && /"field":"path\./.test(text) && !/"field":"body/.test(text);
      if ([400, 403, 415].includes(res.status) && !pathOnly) refused.push(`${method.toUpperCase()} ${path}: ${res.status} ${text}`);
    }
  expect(refused).toEqual([]);
});
