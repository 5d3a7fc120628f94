import { afterEach, expect, test } from "bun:test";
import SwaggerParser from "@apidevtools/swagger-parser";
import YAML from "yaml";
import { openTestApp, type TestApp } from "../support/app";
import { createKey, signedJson } from "../support/partner";

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
  // The reference reads one audience's document at a time, the partners' first (src/http/openapi/audiences.ts), and is
  // told not to reach Scalar's servers (fonts, telemetry, proxy).
  const reference = await (await h.request("/api/docs")).text();
  expect(reference).toContain('"sources":[{"title":"Partners (signed API)","slug":"partners","url":"/api/openapi/partners.json","default":true}');
  expect(reference).toContain('"withDefaultFonts":false');
  expect(reference).toContain('"telemetry":false');
  expect(reference).not.toMatch(/https?:\/\//);
  const json = await h.json("/api/openapi.json");
  expect(json.body.info.title).toBe("Herald API");
});

test("signed mutations list X-Partner-Nonce and Idempotency-Key as header parameters, exactly where the guard asks for them", async () => {
  h = await openTestApp({ env: { SANDBOX_NONCE_REQUIRED: "0", IDEMPOTENCY_REQUIRED: "1" } });
  const doc = await h.json("/api/openapi.json");
  const live = await createKey(h, { mode: "live" });
  const sandbox = await createKey(h, { mode: "sandbox" });
  type Param = { in: string; name: string; required: boolean; schema: { pattern: string } };
  const signed: Array<{ method: string; path: string; headers: Param[] }> = [];
  for (const [path, ops] of Object.entries(doc.body.paths as Record<string, Record<string, { security?: object[]; parameters?: Param[] }>>)) {
    for (const [method, op] of Object.entries(ops)) {
      if (!(op.security ?? []).some((s) => "PartnerSignature" in s)) continue;
      // A conditional read's If-None-Match / If-Modified-Since are not the guard's.
      signed.push({ method: method.toUpperCase(), path, headers: (op.parameters ?? []).filter((p) => p.in === "header" && !p.name.startsWith("If-")) });
    }
  }
  const mutations = signed.filter((s) => s.headers.some((p) => p.name === "Idempotency-Key"));
  expect(mutations.length).toBeGreaterThan(20);
  expect(mutations.every((s) => s.method !== "GET")).toBe(true);
  // A signed read lists only its nonce, optional: sent, it is used up as a mutation's (409 replay_detected).
  for (const { method, path, headers } of signed.filter((s) => !mutations.includes(s)))
    expect([`${method} ${path}`, headers.map((p) => [p.name, p.required])]).toEqual([`${method} ${path}`, [["X-Partner-Nonce", false]]]);
  expect(JSON.stringify(doc.body)).not.toContain("x-herald-");

  for (const { method, path, headers } of signed) {
    const isSandbox = path.startsWith("/api/partner/sandbox/");
    const key = isSandbox ? sandbox : live;
    const target = path.replace(/\{[^}]+\}/g, "1");
    // The guard runs before the body is read: no Idempotency-Key is refused on every route that documents it.
    const res = await signedJson(h, key, method, target, { body: method === "GET" ? undefined : {}, idempotencyKey: null });
    const idem = headers.find((p) => p.name === "Idempotency-Key");
    const nonce = headers.find((p) => p.name === "X-Partner-Nonce");
    if (idem) {
      expect([`${method} ${path}`, res.status, res.body.error]).toEqual([`${method} ${path}`, 400, "idempotency_key_required"]);
      expect([`${method} ${path}`, idem.required, nonce?.required]).toEqual([`${method} ${path}`, true, !isSandbox]);
      expect(new RegExp(nonce!.schema.pattern).test("0123456789abcdef")).toBe(true);
      expect([new RegExp(idem.schema.pattern).test(crypto.randomUUID()), new RegExp(idem.schema.pattern).test("has space")]).toEqual([true, false]);
    } else {
      expect([`${method} ${path}`, res.body.error]).not.toEqual([`${method} ${path}`, "idempotency_key_required"]);
    }
  }
  // The sandbox nonce is documented as this deployment requires it.
  await h.close();
  h = await openTestApp({ env: { SANDBOX_NONCE_REQUIRED: "1", IDEMPOTENCY_REQUIRED: "0" } });
  const strict = (await h.json("/api/openapi.json")).body.paths["/api/partner/sandbox/salutes/credit"].post.parameters as Param[];
  expect(strict.filter((p) => p.in === "header").map((p) => [p.name, p.required])).toEqual([
    ["X-Partner-Nonce", true],
    ["Idempotency-Key", false],
  ]);
});
