// Docs audit: docs/api-reference.md against the served documents and pages — the audiences partition the
// operations, what every operation states, the named schemas and credentials, the reference's own operation list,
// the validators and caching of documents and bundles, the console's short address.
// (The documents answering, the front door's JSON, /admin's 303: test/spec/docs-portal.test.ts.)
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { createHash } from "node:crypto";
import { parse } from "yaml";
import { openTestApp, type TestApp } from "../support/app";
import { BROWSER_ACCEPT } from "../support/console";
import { createAdminToken } from "../support/partner";

const METHODS = ["get", "put", "post", "delete", "patch"];
type Op = { key: string; method: string; path: string; op: any };
const opsOf = (doc: any): Op[] =>
  Object.entries(doc.paths as Record<string, any>).flatMap(([path, item]) =>
    METHODS.filter((m) => item[m]).map((method) => ({ key: `${method.toUpperCase()} ${path}`, method, path, op: item[method] })),
  );

let h: TestApp;
let whole: any;
let all: Op[];
const deref = (r: any) =>
  r?.$ref
    ? r.$ref
        .split("/")
        .slice(1)
        .reduce((x: any, k: string) => x[k], whole)
    : r;
beforeAll(async () => {
  h = await openTestApp({ env: { TRUST_PROXY: "1" } });
  whole = (await h.json("/api/openapi.json")).body;
  all = opsOf(whole);
});
afterAll(async () => {
  await h?.close();
});

describe("docs/api-reference.md", () => {
  // docs/api-reference.md:20-27 — the four audiences hold every operation exactly once
  test("audiences partition the operations", async () => {
    const seen: string[] = [];
    for (const a of ["partners", "public", "mini-app", "operators"]) seen.push(...opsOf((await h.json(`/api/openapi/${a}.json`)).body).map((o) => o.key));
    expect(seen.length).toBe(new Set(seen).size);
    expect([...seen].sort()).toEqual(all.map((o) => o.key).sort());
    // docs/api-reference.md:29-33 — the page lists every operation, each a link to its place in the reference
    const page = await (await h.request("/api/docs")).text();
    const missing = all.filter((o) => !page.includes(`/${o.method.toUpperCase()}${o.path}"`)).map((o) => o.key);
    expect(missing).toEqual([]);
  });

  // docs/api-reference.md:59-75, 98-104, 165-171, 186-190 — what every operation states
  test("every operation: security, 413/414/503, default, code samples; Retry-After only on 429, 503, 409", () => {
    const problems: string[] = [];
    for (const o of all) {
      const r = o.op.responses ?? {};
      if (!Array.isArray(o.op.security)) problems.push(`${o.key}: no security`);
      for (const s of ["413", "414", "503", "default"]) if (!r[s]) problems.push(`${o.key}: no ${s}`);
      const langs = (o.op["x-codeSamples"] ?? []).map((s: any) => s.lang).sort();
      if (langs.join() !== "python,shell,typescript") problems.push(`${o.key}: samples ${langs}`);
      for (const [status, resp] of Object.entries(r))
        if (deref(resp)?.headers?.["Retry-After"] && !["429", "503", "409", "default"].includes(status)) problems.push(`${o.key}: Retry-After on ${status}`);
    }
    expect(problems).toEqual([]);
    // docs/api-reference.md:88-89 — errors.json is public
    expect(whole.paths["/api/partner/errors.json"].get.security).toEqual([]);
    // docs/api-reference.md:90-92 — the document's own 200
    expect(whole.paths["/api/openapi.json"].get.responses["200"].content["application/json"].schema.required).toEqual(["openapi", "info", "paths"]);
  });

  // docs/api-reference.md:77-87, 133-139 — credentials as schemes; signed mutations' nonce and key formats; missions
  test("security schemes, signing headers, the mission bodies", () => {
    expect(Object.keys(whole.components.securitySchemes).sort()).toEqual(
      [
        "AdminBearer",
        "AdminSession",
        "BotWebhookSecret",
        "MessengerBotWebhookSecret",
        "MiniAppInitData",
        "MiniAppInitDataQuery",
        "PartnerKey",
        "PartnerSignature",
        "PartnerTimestamp",
        "TrackBearer",
      ].sort(),
    );
    const credit = whole.paths["/api/salutes/credit"].post.parameters.map(deref).filter((p: any) => p.in === "header");
    const byName = Object.fromEntries(credit.map((p: any) => [p.name, p]));
    expect(byName["X-Partner-Nonce"]).toMatchObject({ required: true, schema: { pattern: "^[0-9a-fA-F]{16,128}$" } });
    expect(byName["Idempotency-Key"]).toMatchObject({ required: true, schema: { pattern: "^[\\x21-\\x7e]{1,255}$" } });
    expect(whole.paths["/api/messenger/admin/missions"].post.requestBody.content["application/json"].schema.anyOf.length).toBe(2);
    const patch = whole.paths["/api/messenger/admin/missions/{mission_key}"].patch;
    expect(patch.responses["428"]).toBeDefined();
    expect(patch.parameters.map(deref).find((p: any) => p.name.toLowerCase() === "x-expected-revision")?.required).toBe(true);
  });

  // docs/api-reference.md:141-160 — the named schemas; ids are integers; NotFound narrows the code
  test("named schemas", () => {
    const names = Object.keys(whole.components.schemas);
    for (const n of ["User", "WalletLink", "Webhook", "WebhookEvent", "LedgerEntry", "Ledger", "Balance", "Conversion", "DonationClaim", "PartnerKey"])
      expect([n, names.includes(n)]).toEqual([n, true]);
    for (const n of [
      "Capabilities",
      "PartnerStatus",
      "Incident",
      "MaintenanceWindow",
      "SystemStatus",
      "StatusChecks",
      "ShareLink",
      "TrackToken",
      "Deprecation",
    ])
      expect([n, names.includes(n)]).toEqual([n, true]);
    for (const n of ["Pagination", "Meta", "Error"]) expect([n, names.includes(n)]).toEqual([n, true]);
    expect(whole.components.schemas.User.properties.id).toEqual({ type: "integer" });
    const nf = JSON.stringify(whole.components.responses.NotFound);
    expect(nf).toContain('"not_found"');
    expect(nf).toContain('"short_link_not_found"');
  });

  // docs/api-reference.md:12 — the transparency document: public and transparency operations, none with credentials
  test("openapi-transparency.yaml", async () => {
    const t = opsOf(parse(await (await h.request("/api/openapi-transparency.yaml")).text()));
    expect(t.length).toBeGreaterThan(0);
    expect(t.filter((o) => !(Array.isArray(o.op.security) && o.op.security.length === 0)).map((o) => o.key)).toEqual([]);
    // docs/api-reference.md:6-12 — the YAML is the JSON document
    expect(parse(await (await h.request("/api/openapi.yaml")).text())).toEqual(whole);
  });

  // docs/api-reference.md:258-268 — documents no-cache with the SHA-256 tag; bundles a day; 304 on the tag
  test("documents and bundles: ETag, Cache-Control, 304", async () => {
    for (const [path, cc] of [
      ["/api/openapi/operators.json", "public, no-cache"],
      ["/api/openapi-transparency.yaml", "public, no-cache"],
      ["/api/docs/assets/swagger-ui-bundle.js", "public, max-age=86400"],
      ["/api/docs/assets/scalar-api-reference.js", "public, max-age=86400"],
    ]) {
      const r = await h.request(path!, { headers: { "x-forwarded-for": "10.3.0.1" } });
      const etag = `"${createHash("sha256")
        .update(new Uint8Array(await r.arrayBuffer()))
        .digest("base64url")}"`;
      expect([path, r.status, r.headers.get("cache-control"), r.headers.get("etag")]).toEqual([path, 200, cc, etag]);
      const nm = await h.request(path!, { headers: { "if-none-match": etag, "x-forwarded-for": "10.3.0.2" } });
      expect([path, nm.status, (await nm.text()).length]).toEqual([path, 304, 0]);
    }
  });

  // docs/api-reference.md:38-55 — the front door's page: no script; the console's short address by client
  test("front door page and the console's entrance", async () => {
    const page = await h.request("/", { headers: { accept: "text/html" } });
    expect(page.headers.get("content-security-policy")).toStartWith("default-src 'none'");
    expect(page.headers.get("content-security-policy")).not.toContain("script-src");
    expect(await page.text()).not.toContain("<script");
    const token = await createAdminToken(h);
    const browser = await h.request("/admin/console", { headers: { accept: BROWSER_ACCEPT } });
    expect([browser.status, browser.headers.get("location")]).toEqual([303, "/admin/sign-in?next=%2Fadmin%2Fconsole"]);
    const bearer = await h.request("/admin/console", { headers: { authorization: `Bearer ${token}` } });
    expect([bearer.status, bearer.headers.get("location")]).toEqual([303, "/admin/ops/readiness"]);
    const script = await h.json("/admin/console");
    expect([script.status, script.body.error]).toEqual([403, "forbidden"]);
  });
});
