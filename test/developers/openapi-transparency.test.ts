import { afterEach, expect, test } from "bun:test";
import SwaggerParser from "@apidevtools/swagger-parser";
import YAML from "yaml";
import { openTestApp, type TestApp } from "../support/app";

// /api/openapi-transparency.yaml: exactly the public and transparency operations of the full document,
// and itself a valid OpenAPI 3.1 document.

let h: TestApp;
afterEach(() => h?.close());

const PUBLIC_TAGS = ["public", "transparency"];
const METHODS = ["get", "put", "post", "delete", "patch", "head", "options", "trace"];

function operations(doc: any): Array<{ key: string; tags: string[] }> {
  return Object.entries(doc.paths).flatMap(([path, item]: [string, any]) =>
    Object.entries(item)
      .filter(([m]) => METHODS.includes(m))
      .map(([m, op]: [string, any]) => ({ key: `${m.toUpperCase()} ${path}`, tags: op.tags ?? [] })),
  );
}

test("the subset holds every public/transparency operation of the full document and nothing else, and validates", async () => {
  h = await openTestApp();
  const res = await h.request("/api/openapi-transparency.yaml");
  expect(res.status).toBe(200);
  expect(res.headers.get("content-type")).toBe("application/yaml; charset=utf-8");
  const subset = YAML.parse(await res.text());
  const full = YAML.parse(await (await h.request("/api/openapi.yaml")).text());

  const expected = operations(full)
    .filter((o) => o.tags.some((t) => PUBLIC_TAGS.includes(t)))
    .map((o) => o.key)
    .sort();
  const got = operations(subset)
    .map((o) => o.key)
    .sort();
  expect(got).toEqual(expected);
  for (const key of [
    "GET /api/public/system-status",
    "GET /status",
    "GET /status/badge/{badge}",
    "POST /api/canary/echo",
    "GET /trust.json",
    "GET /transparency/trust-dashboard.json",
    "GET /developers/deprecations.json",
    "GET /api/public/deprecations/header-simulator",
    "GET /api/public-stats",
  ]) {
    expect(got).toContain(key);
  }
  expect(got.some((k) => k.includes("/api/partner/") && !k.includes("errors.json") && !k.includes("event-types"))).toBe(false);
  expect(got.some((k) => k.includes("/admin/"))).toBe(false);
  expect(subset.info.title).toBe("Herald public and transparency API");
  expect(subset.tags.map((t: { name: string }) => t.name)).toEqual(["public", "transparency"]);
  // Only the credential schemes its operations name (an optional track bearer at most): none of partners or operators.
  const named = new Set<string>();
  for (const item of Object.values(subset.paths) as Array<Record<string, { security?: Array<Record<string, unknown>> }>>)
    for (const op of Object.values(item)) for (const s of op.security ?? []) for (const n of Object.keys(s)) named.add(n);
  expect(Object.keys(subset.components.securitySchemes).sort()).toEqual([...named].sort());
  expect(Object.keys(subset.components.securitySchemes).filter((n) => /Partner|Admin/.test(n))).toEqual([]);
  await SwaggerParser.validate(structuredClone(subset));
});
