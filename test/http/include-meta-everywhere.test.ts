// include_meta is accepted on every route (docs/http-conventions.md), and the OpenAPI document lists it on every JSON
// operation: a client that adds it to every call is never refused for it.
// JSON answers gain the meta block (test/http/operator-answers.test.ts and the domains' own
// tests hold that); answers that are not JSON — console pages, CSV exports, images — take it and stay as they were.
import { afterEach, describe, expect, test } from "bun:test";
import { PNG } from "pngjs";
import { audioApp, shortLink } from "../audio-share/support";
import { openTestApp, type TestApp } from "../support/app";
import { signedInCookie } from "../support/console";
import { createAdminToken } from "../support/partner";

let h: TestApp;
afterEach(async () => {
  await h?.close();
});

interface RouteEntry {
  method: string;
  path: string;
  hooks: { query?: { properties?: Record<string, unknown> } };
}

describe("include_meta on every GET route", () => {
  test("every GET route that declares a query schema declares include_meta in it", async () => {
    h = await openTestApp();
    const routes = (h.app as unknown as { routes: RouteEntry[] }).routes.filter((r) => r.method === "GET" && r.hooks.query);
    expect(routes.length).toBeGreaterThan(100);
    const missing = routes.filter((r) => !("include_meta" in (r.hooks.query!.properties ?? {}))).map((r) => r.path);
    expect(missing).toEqual([]);
  });

  test("every JSON GET in the OpenAPI document lists include_meta (the documents themselves apart), and the probes take other parameters too", async () => {
    h = await openTestApp();
    const doc = (await (await h.request("/api/openapi.json")).json()) as {
      paths: Record<string, { get?: { parameters?: { in: string; name: string }[]; responses: Record<string, { content?: Record<string, unknown> }> } }>;
    };
    const missing = Object.entries(doc.paths)
      // The documents are OpenAPI documents, no envelope: the whole one and each audience's (/api/openapi/<audience>.json).
      .filter(([path, item]) => item.get && path !== "/api/openapi.json" && !path.startsWith("/api/openapi/"))
      .filter(([, item]) => Object.keys(item.get!.responses?.["200"]?.content ?? {}).includes("application/json"))
      .filter(([, item]) => !(item.get!.parameters ?? []).some((p) => p.in === "query" && p.name === "include_meta"))
      .map(([path]) => path);
    expect(missing).toEqual([]);
    const ready = await h.request("/readyz?include_meta=1&probe=lb-7");
    expect([ready.status, "meta" in ((await ready.json()) as object)]).toEqual([200, true]);
    expect((await h.request("/healthz?probe=lb-7")).status).toBe(200);
    // A catalog route takes include_meta like every JSON GET, and refuses a parameter it does not know as they do.
    const policy = await h.json("/api/public/audio-share-links/policy.json?include_meta=1");
    expect([policy.status, typeof policy.body.meta?.request_id]).toEqual([200, "string"]);
    expect((await h.json("/api/public/audio-share-links/policy.json?polcy=1")).body.error).toBe("invalid_query");
  });

  test("every route of any method with a query schema declares include_meta in it, and every JSON operation in the document lists it", async () => {
    h = await openTestApp();
    const routes = (h.app as unknown as { routes: RouteEntry[] }).routes.filter((r) => r.hooks.query);
    const undeclared = routes.filter((r) => !("include_meta" in (r.hooks.query!.properties ?? {}))).map((r) => `${r.method} ${r.path}`);
    expect(undeclared).toEqual([]);
    type Op = { parameters?: { in: string; name: string }[]; responses: Record<string, { content?: Record<string, unknown> }> };
    const doc = (await (await h.request("/api/openapi.json")).json()) as { paths: Record<string, Record<string, Op>> };
    const missing = Object.entries(doc.paths)
      .filter(([path]) => path !== "/api/openapi.json" && !path.startsWith("/api/openapi/"))
      .flatMap(([path, item]) => Object.entries(item).map(([method, op]) => ({ path, method, op })))
      .filter(({ op }) => ["200", "201"].some((s) => Object.keys(op.responses?.[s]?.content ?? {}).includes("application/json")))
      .filter(({ op }) => !(op.parameters ?? []).some((p) => p.in === "query" && p.name === "include_meta"))
      .map(({ method, path }) => `${method} ${path}`);
    expect(missing).toEqual([]);
    // A mutation that declares no query of its own takes it at run time, as the document says.
    const echo = await h.json("/api/canary/echo?include_meta=1", {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: '{"message":"hi","request_id":"r1"}',
    });
    expect([echo.status, typeof echo.body.meta?.request_id]).toEqual([200, "string"]);
  });

  test("non-JSON answers take it and are unchanged: a console page, a CSV export, the QR PNG, the status badge", async () => {
    h = await audioApp();
    const token = await createAdminToken(h);
    const cookie = await signedInCookie(h, token);
    const bearer = { authorization: `Bearer ${token}` };
    const link = await shortLink(h);
    const cases: [string, Record<string, string>, string][] = [
      ["/admin/console/backups", { cookie }, "text/html"],
      ["/admin/ops/readiness/synthetic-zero-history.csv?days=7", bearer, "text/csv"],
      [`/s/audio/${link.short_code}/qr.png?size=256`, {}, "image/png"],
      ["/status/badge/overall.svg?window=30d", {}, "image/svg+xml"],
    ];
    for (const [path, headers, type] of cases) {
      const plain = await h.request(path, { headers });
      const withMeta = await h.request(`${path}${path.includes("?") ? "&" : "?"}include_meta=1`, { headers });
      expect([path, plain.status, withMeta.status]).toEqual([path, 200, 200]);
      expect(withMeta.headers.get("content-type")).toContain(type);
      const [a, b] = [await plain.arrayBuffer(), await withMeta.arrayBuffer()];
      if (type === "image/png") {
        const [pa, pb] = [PNG.sync.read(Buffer.from(a)), PNG.sync.read(Buffer.from(b))];
        expect([pb.width, Buffer.compare(pa.data, pb.data)]).toEqual([pa.width, 0]);
      } else if (type !== "text/html") {
        // A page prints its own CSRF token and time; the CSV and the badge are the same bytes.
        expect(Buffer.compare(Buffer.from(a), Buffer.from(b))).toBe(0);
      }
    }
  });
});
