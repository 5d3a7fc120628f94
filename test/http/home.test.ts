import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { HOME_LINKS } from "../../src/system/home";
import { createTestApp, type TestApp } from "../support/app";
import { BROWSER_ACCEPT, signedInCookie } from "../support/console";
import { createAdminToken } from "../support/partner";

// The addresses a person types first (docs/api-reference.md, "The front door"): `/` is a page of links for a browser
// and the same links as JSON for any other client, and every link opens something (200); `/admin` and `/admin/` send
// every client to the console, which sends a browser without a session on to the sign-in form.

let h: TestApp;
let token = "";
beforeAll(async () => {
  h = createTestApp();
  token = await createAdminToken(h, "home");
});
afterAll(() => h.close());

const browser = { accept: BROWSER_ACCEPT };
const hrefsOf = (html: string) => [...html.matchAll(/<a [^>]*href="([^"]+)"/g)].map((m) => m[1]!.replaceAll("&amp;", "&"));

describe("GET /", () => {
  test("a browser gets the page of links, under the page security headers, varying by Accept", async () => {
    const res = await h.request("/", { headers: browser });
    expect(res.status).toBe(200);
    expect(res.headers.get("content-type")).toBe("text/html; charset=utf-8");
    expect(res.headers.get("content-security-policy")).toBe(
      "default-src 'none'; style-src 'unsafe-inline'; form-action 'none'; frame-ancestors 'none'; base-uri 'none'",
    );
    expect(res.headers.get("x-frame-options")).toBe("DENY");
    expect(res.headers.get("referrer-policy")).toBe("same-origin");
    expect(res.headers.get("x-content-type-options")).toBe("nosniff");
    expect(res.headers.get("x-request-id")).toMatch(/^req_/);
    expect(res.headers.get("vary")).toBe("Accept");
    expect(res.headers.get("cache-control")).toBe("public, max-age=300");
    const html = await res.text();
    // Readable without anything else: no script, no stylesheet or image from anywhere.
    expect(html).not.toContain("<script");
    expect(html).not.toMatch(/<link |<img |src=/);
    expect(html).toContain("<title>Herald</title>");
    const hrefs = hrefsOf(html);
    expect(hrefs.slice(0, 4)).toEqual(["/status", "/api/docs", "/developers", "/admin/console"]);
    expect(hrefs.sort()).toEqual(
      Object.values(HOME_LINKS)
        .map((l) => l.href)
        .sort(),
    );
  });

  test("every link resolves: the public ones to 200, the console to the sign-in form", async () => {
    for (const link of Object.values(HOME_LINKS)) {
      const res = await h.request(link.href, { headers: browser });
      await res.arrayBuffer();
      if (link.href === "/admin/console") {
        expect([link.href, res.status, res.headers.get("location")]).toEqual([link.href, 303, "/admin/sign-in?next=%2Fadmin%2Fconsole"]);
        const signIn = await h.request(res.headers.get("location")!, { headers: browser });
        expect([signIn.status, signIn.headers.get("content-type")]).toEqual([200, "text/html; charset=utf-8"]);
        expect(await signIn.text()).toContain('id="token"');
      } else {
        expect([link.href, res.status]).toEqual([link.href, 200]);
      }
    }
  });

  test("a client that does not ask for HTML gets the same links as JSON, with meta on request", async () => {
    for (const accept of [null, "*/*", "application/json"]) {
      const res = await h.request("/", accept === null ? {} : { headers: { accept } });
      expect([accept, res.status]).toEqual([accept, 200]);
      expect(res.headers.get("content-type")).toBe("application/json;charset=utf-8");
      expect(res.headers.get("vary")).toBe("Accept");
      expect(res.headers.has("content-security-policy")).toBe(false);
      const body = (await res.json()) as { success: boolean; service: string; links: typeof HOME_LINKS; meta?: unknown };
      expect(body).toEqual({ success: true, service: "herald", links: HOME_LINKS });
    }
    const withMeta = await h.json("/?include_meta=1");
    expect(withMeta.body.meta).toEqual({ request_id: withMeta.headers.get("x-request-id"), generated_at_utc: h.clock.now().toISOString() });
    // include_meta is accepted by the page too, which stays as it was; an unknown parameter is refused as on every JSON GET.
    expect((await h.request("/?include_meta=1", { headers: browser })).headers.get("content-type")).toBe("text/html; charset=utf-8");
    const unknown = await h.json("/?colour=blue");
    expect([unknown.status, unknown.body.error, unknown.body.details]).toEqual([
      400,
      "invalid_query",
      [{ field: "query.colour", problem: "is not a known field" }],
    ]);
  });

  test("compressed, the page and the JSON still say Vary: Accept", async () => {
    for (const accept of [BROWSER_ACCEPT, "application/json"]) {
      const res = await h.request("/", { headers: { accept, "accept-encoding": "gzip" } });
      await res.arrayBuffer();
      expect([accept, res.headers.get("vary")]).toEqual([accept, "Accept, Accept-Encoding"]);
    }
  });
});

describe("GET /admin", () => {
  test("/admin and /admin/ send every client to the console, not stored by any cache", async () => {
    for (const path of ["/admin", "/admin/", "/admin?include_meta=1"]) {
      for (const headers of [browser, {}, { authorization: `Bearer ${token}` }] as Array<Record<string, string>>) {
        const res = await h.request(path, { headers });
        expect([path, res.status, res.headers.get("location")]).toEqual([path, 303, "/admin/console"]);
        expect(res.headers.get("cache-control")).toBe("private, no-store");
        expect(res.headers.get("x-content-type-options")).toBe("nosniff");
      }
    }
  });

  test("followed: a browser signs in and lands in the console; a script without credentials gets the console's 403", async () => {
    const entry = await h.request("/admin/console", { headers: browser });
    expect([entry.status, entry.headers.get("location")]).toEqual([303, "/admin/sign-in?next=%2Fadmin%2Fconsole"]);
    const script = await h.json("/admin/console");
    expect([script.status, script.body.error]).toEqual([403, "forbidden"]);
    const bearer = await h.request("/admin/console", { headers: { authorization: `Bearer ${token}` } });
    expect([bearer.status, bearer.headers.get("location")]).toEqual([303, "/admin/ops/readiness"]);
    const cookie = await signedInCookie(h, token);
    const signedIn = await h.request("/admin/console", { headers: { ...browser, cookie } });
    expect([signedIn.status, signedIn.headers.get("location")]).toEqual([303, "/admin/ops/readiness"]);
  });

  test("both routes are in the OpenAPI document: public, with their answers' media types and headers", async () => {
    const doc = (await h.json("/api/openapi.json")).body as { paths: Record<string, { get: Record<string, any> }> };
    const root = doc.paths["/"]!.get;
    expect(root.security).toEqual([]);
    expect(Object.keys(root.responses["200"].content).sort()).toEqual(["application/json", "text/html"]);
    expect(Object.keys(root.responses["200"].headers)).toEqual(expect.arrayContaining(["Content-Security-Policy", "X-Frame-Options", "Referrer-Policy"]));
    expect(root.parameters.map((p: { name: string }) => p.name)).toEqual(["include_meta"]);
    const admin = doc.paths["/admin"]!.get;
    expect(admin.security).toEqual([]);
    expect(Object.keys(admin.responses["303"].headers)).toContain("Location");
    expect(admin.parameters.map((p: { name: string }) => p.name)).toEqual(["include_meta"]);
  });
});
