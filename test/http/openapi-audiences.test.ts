import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import SwaggerParser from "@apidevtools/swagger-parser";
import { AUDIENCE_OF_TAG, AUDIENCES, audienceOf } from "../../src/http/openapi/audiences";
import { openTestApp, type TestApp } from "../support/app";
import { ContractCheck, type Doc } from "../support/contract-check";
import type { Exchange } from "../support/contract-log";
import { messengerEnv } from "../messenger/support";

// The reference's documents, one per audience (src/http/openapi/audiences.ts): each a valid OpenAPI document cut from
// the whole one, together holding each of its operations exactly once, served like the whole one (ETag, 304, the
// public rate limit) and answering as the whole document declares. With the messenger configured, so that every
// route is in the document.

type Json = Record<string, any>;
const METHODS = ["get", "put", "post", "delete", "patch", "head", "options", "trace"];
let h: TestApp;
let whole: Json;
const served: Record<string, Json> = {};
beforeAll(async () => {
  h = await openTestApp({ env: messengerEnv({ RATE_LIMIT_PUBLIC_API_PER_MIN: "0" }) });
  whole = (await h.json("/api/openapi.json")).body;
  for (const a of AUDIENCES) served[a.slug] = (await h.json(`/api/openapi/${a.slug}.json`)).body;
});
afterAll(() => h?.close());

const operations = (doc: Json): Array<{ key: string; tags: string[]; op: Json }> =>
  Object.entries(doc.paths as Record<string, Json>).flatMap(([path, item]) =>
    Object.entries(item)
      .filter(([m]) => METHODS.includes(m))
      .map(([m, op]) => ({ key: `${m.toUpperCase()} ${path}`, tags: (op as Json).tags ?? [], op: op as Json })),
  );

describe("/api/openapi/<audience>.json", () => {
  test("together they hold every operation of the whole document exactly once, each as the whole document has it", () => {
    const seen = new Map<string, string>();
    for (const a of AUDIENCES) {
      for (const { key, op } of operations(served[a.slug]!)) {
        expect([key, seen.get(key)]).toEqual([key, undefined]);
        seen.set(key, a.slug);
        const [method, path] = key.split(" ") as [string, string];
        expect(op).toEqual(whole.paths[path][method.toLowerCase()]);
      }
    }
    const all = operations(whole).map((o) => o.key);
    expect(all.length).toBeGreaterThan(250);
    expect([...seen.keys()].sort()).toEqual([...all].sort());
    // Where a few well-known operations land.
    expect(seen.get("POST /api/partner/users")).toBe("partners");
    expect(seen.get("GET /api/partner/capabilities")).toBe("partners");
    expect(seen.get("GET /api/public/system-status")).toBe("public");
    expect(seen.get("GET /api/openapi.json")).toBe("public");
    expect(seen.get("GET /admin/partners/keys")).toBe("operators");
    expect([...seen.values()].filter((s) => s === "mini-app").length).toBeGreaterThan(5);
    // No audience is close to the whole: the reason for the split.
    for (const a of AUDIENCES) expect(Object.keys(served[a.slug]!.paths).length).toBeLessThan(Object.keys(whole.paths).length * 0.6);
  });

  test("an operator's route is the operators' whatever its tags; a tag alone names the audience most of its operations are in", () => {
    for (const { key, op } of operations(whole)) {
      const operator = (op.security ?? []).some((s: Json) => "AdminBearer" in s || "AdminSession" in s) || (op.tags ?? []).includes("admin");
      if (operator) expect([key, audienceOf(op)]).toEqual([key, "operators"]);
    }
    // GET /metrics is tagged system but takes the operator token; the messenger's consoles are tagged messenger too.
    expect(audienceOf(whole.paths["/metrics"].get)).toBe("operators");
    expect(audienceOf(whole.paths["/admin/console/messenger"].get)).toBe("operators");
    expect(audienceOf(whole.paths["/api/messenger/games/catalog"].get)).toBe("mini-app");
    expect(AUDIENCE_OF_TAG).toMatchObject({ partner: "partners", messenger: "mini-app", admin: "operators", webhooks: "operators", public: "public" });
  });

  test("the reference page lists every operation once, under its audience, each a link to its place in the reference", async () => {
    const res = await h.request("/api/docs");
    expect(res.status).toBe(200);
    const html = await res.text();
    const listed = new Map<string, string>();
    for (const section of html.matchAll(/<section data-audience="([a-z-]+)">([\s\S]*?)<\/section>/g)) {
      for (const m of section[2]!.matchAll(/<li data-operation><a href="#([^"]+)">/g)) {
        const [audience, tag, literal, ...rest] = m[1]!.replaceAll("&amp;", "&").split("/");
        expect([audience, tag]).toEqual([section[1], "tag"]);
        const [method, ...path] = rest.join("/").split("/");
        const key = `${method} /${path.join("/")}`;
        expect([key, listed.get(key)]).toEqual([key, undefined]);
        listed.set(key, audience!);
        expect(literal!.length).toBeGreaterThan(0);
      }
    }
    const all = operations(whole);
    expect(listed.size).toBe(all.length);
    for (const { key, op } of all) expect([key, listed.get(key)]).toEqual([key, audienceOf(op)]);
    // Summaries are text: the page's only scripts are its own (its policy names each by its hash).
    expect([...html.matchAll(/<script>/g)].length).toBe(3);
  });

  test("each is a valid OpenAPI 3.1 document with only the components, tags and credential schemes its operations use", async () => {
    for (const a of AUDIENCES) {
      const doc = served[a.slug]!;
      expect(doc.openapi).toBe(whole.openapi);
      expect(doc.info.title).toBe(`Herald API: ${a.title}`);
      expect(doc.info.description).toContain("/api/openapi.json");
      expect(doc.servers).toEqual(whole.servers);
      const text = JSON.stringify(doc.paths);
      const named = new Set<string>();
      for (const { op } of operations(doc)) for (const s of op.security ?? []) for (const n of Object.keys(s)) named.add(n);
      expect(Object.keys(doc.components.securitySchemes).sort()).toEqual([...named].sort());
      const used = new Set(operations(doc).flatMap((o) => o.tags));
      expect(doc.tags.map((t: Json) => t.name).filter((n: string) => !used.has(n))).toEqual([]);
      // A schema the operations never reach is left out (the schemas may reach one another: not every one is in paths).
      expect(Object.keys(doc.components.schemas).length).toBeLessThanOrEqual(Object.keys(whole.components.schemas).length);
      for (const name of Object.keys(doc.components.responses)) expect(JSON.stringify(doc)).toContain(`#/components/responses/${name}"`);
      expect(text.length).toBeGreaterThan(1000);
      await SwaggerParser.validate(structuredClone(doc) as unknown as Parameters<typeof SwaggerParser.validate>[0]);
    }
    // The partners' keeps the whole document's introduction: signing and the samples' Python helper.
    expect(served.partners!.info.description).toContain("def herald(method, url, body=None");
    expect(Object.keys(served.partners!.components.securitySchemes).sort()).toEqual(["PartnerKey", "PartnerSignature", "PartnerTimestamp"]);
    expect(Object.keys(served.public!.components.securitySchemes).filter((n) => /Partner|Admin/.test(n))).toEqual([]);
    expect(Object.keys(served["mini-app"]!.components.securitySchemes).filter((n) => /Partner|Admin/.test(n))).toEqual([]);
  });

  test("served like the whole document: a strong ETag, 304, and answers the whole document declares", async () => {
    const check = new ContractCheck(whole as Doc);
    for (const a of AUDIENCES) {
      const path = `/api/openapi/${a.slug}.json`;
      const res = await h.request(path);
      const body = await res.text();
      const headers: Record<string, string> = {};
      res.headers.forEach((v, k) => {
        headers[k] = v;
      });
      expect([path, res.status, headers["content-type"]]).toEqual([path, 200, "application/json; charset=utf-8"]);
      const x: Exchange = { method: "GET", path, status: res.status, headers, body, bytes: Buffer.byteLength(body), sent: [] };
      expect([path, check.check(x)]).toEqual([path, []]);
      const again = await h.request(path, { headers: { "if-none-match": headers.etag! } });
      expect([path, again.status]).toEqual([path, 304]);
      const headers304: Record<string, string> = {};
      again.headers.forEach((v, k) => {
        headers304[k] = v;
      });
      expect([path, check.check({ ...x, status: 304, headers: headers304, body: "", bytes: 0 })]).toEqual([path, []]);
      // Declared in the whole document, and in the public audience's.
      expect(whole.paths[path].get.responses["200"]).toBeDefined();
      expect(served.public!.paths[path].get).toEqual(whole.paths[path].get);
    }
  });
});

test("the audiences' documents are public routes: limited per IP like the whole document", async () => {
  const limited = await openTestApp({ env: { RATE_LIMIT_PUBLIC_API_PER_MIN: "2" } });
  try {
    expect((await limited.request("/api/openapi/partners.json")).status).toBe(200);
    expect((await limited.request("/api/openapi/operators.json")).status).toBe(200);
    const refused = await limited.json("/api/openapi/public.json");
    expect([refused.status, refused.body.error]).toEqual([429, "rate_limited"]);
  } finally {
    await limited.close();
  }
});
