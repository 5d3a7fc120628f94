import { afterEach, expect, test } from "bun:test";
import SwaggerParser from "@apidevtools/swagger-parser";
import YAML from "yaml";
import { openTestApp, type TestApp } from "../support/app";

let h: TestApp;
afterEach(() => h?.close());

/** Elysia writes /users/:id; OpenAPI writes /users/{id}. */
const toOpenApiPath = (p: string) => p.replace(/:([A-Za-z0-9_]+)/g, "{$1}");
const HIDDEN = /^\/api\/docs/;

test("every registered route appears in /api/openapi.yaml, and the document validates", async () => {
  h = await openTestApp();
  const res = await h.request("/api/openapi.yaml");
  expect(res.status).toBe(200);
  expect(res.headers.get("content-type")).toContain("yaml");
  const doc = YAML.parse(await res.text());
  expect(doc.openapi).toMatch(/^3\.1\./);

  const missing: string[] = [];
  for (const r of h.app.routes) {
    if (HIDDEN.test(r.path) || r.method === "ALL") continue;
    const op = doc.paths?.[toOpenApiPath(r.path)]?.[r.method.toLowerCase()];
    if (!op) missing.push(`${r.method} ${r.path}`);
  }
  expect(missing).toEqual([]);
  // Bodies are documented with their JSON schema (Herald's own parser hides them from the generator).
  const create = doc.paths["/api/partner/webhooks"].post.requestBody;
  expect(create.content["application/json"].schema.required).toEqual(["event_type", "target_url"]);
  await SwaggerParser.validate(structuredClone(doc));
});

test("the docs pages work offline: the reference at /api/docs and the Swagger UI at /api/docs/swagger load only their own assets", async () => {
  h = await openTestApp();
  for (const [page, title] of [
    ["/api/docs", "Herald API reference"],
    ["/api/docs/swagger", "Herald API (Swagger UI)"],
  ] as const) {
    const res = await h.request(page);
    expect(res.status).toBe(200);
    expect(res.headers.get("content-type")).toBe("text/html; charset=utf-8");
    const html = await res.text();
    expect(html).toContain(`<title>${title}</title>`);
    const assets = [...html.matchAll(/(?:src|href)="([^"]+)"/g)].map((m) => m[1]!).filter((a) => /\.(js|css)$/.test(a));
    expect(assets.length).toBeGreaterThanOrEqual(1);
    for (const a of assets) {
      expect(a.startsWith("/")).toBe(true); // never a CDN
      const r = await h.request(a);
      expect(r.status).toBe(200);
      expect(r.headers.get("etag")).toMatch(/^"[A-Za-z0-9_-]{43}"$/);
      expect((await r.arrayBuffer()).byteLength).toBeGreaterThan(10_000);
    }
  }
  // The reference reads the JSON document and is told not to reach Scalar's servers (fonts, telemetry, proxy).
  const reference = await (await h.request("/api/docs")).text();
  expect(reference).toContain('"url":"/api/openapi.json"');
  expect(reference).toContain('"withDefaultFonts":false');
  expect(reference).toContain('"telemetry":false');
  expect(reference).not.toMatch(/https?:\/\//);
  const json = await h.json("/api/openapi.json");
  expect(json.body.info.title).toBe("Herald API");
});
