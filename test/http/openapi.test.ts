import { afterEach, expect, test } from "bun:test";
import SwaggerParser from "@apidevtools/swagger-parser";
import YAML from "yaml";
import { createTestApp, type TestApp } from "../support/app";

let h: TestApp;
afterEach(() => h?.close());

/** Elysia writes /users/:id; OpenAPI writes /users/{id}. */
const toOpenApiPath = (p: string) => p.replace(/:([A-Za-z0-9_]+)/g, "{$1}");
const HIDDEN = /^\/api\/docs/;

test("every registered route appears in /api/openapi.yaml, and the document validates", async () => {
  h = createTestApp();
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

test("the docs UI works offline: its assets come from the service itself", async () => {
  h = createTestApp();
  const page = await h.request("/api/docs");
  expect(page.status).toBe(200);
  const html = await page.text();
  const assets = [...html.matchAll(/(?:src|href)="([^"]+)"/g)].map((m) => m[1]!).filter((a) => /\.(js|css)$/.test(a));
  expect(assets.length).toBeGreaterThanOrEqual(2);
  for (const a of assets) {
    expect(a.startsWith("/")).toBe(true); // never a CDN
    const r = await h.request(a);
    expect(r.status).toBe(200);
    expect((await r.arrayBuffer()).byteLength).toBeGreaterThan(10_000);
  }
  const json = await h.json("/api/openapi.json");
  expect(json.body.info.title).toBe("Herald API");
});
