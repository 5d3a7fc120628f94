import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { ContractCheck, type Doc } from "../support/contract-check";
import type { Exchange } from "../support/contract-log";
import { openTestApp, type TestApp } from "../support/app";
import { createAdminToken, createKey, signedInit, type TestKey } from "../support/partner";

// The document states what the server does (src/http/openapi/contract.ts derives the statuses, headers and
// security from how each route is served). CI checks every recorded answer of the suites against it
// (.ci/check-contract.ts); these tests hold the derivation itself and show that the check can fail.

let h: TestApp;
let doc: Doc;
let admin: string;
let key: TestKey;
beforeAll(async () => {
  h = await openTestApp({ env: { RATE_LIMIT_PUBLIC_API_PER_MIN: "0" } });
  doc = (await h.json("/api/openapi.json")).body as Doc;
  admin = await createAdminToken(h);
  key = await createKey(h, { mode: "live" });
});
afterAll(() => h?.close());

const ops = () => Object.entries(doc.paths).flatMap(([path, item]) => Object.entries(item).map(([method, op]) => ({ path, method, op })));
const exchange = (x: Partial<Exchange>): Exchange => ({
  method: "GET",
  path: "/api/public/system-status",
  status: 200,
  headers: { "content-type": "application/json", "x-request-id": "r1" },
  body: null,
  bytes: 0,
  sent: [],
  ...x,
});

describe("the derived document", () => {
  test("every operation states its security: a scheme for each credential, [] when public", () => {
    const schemes = Object.keys((doc.components as Record<string, Record<string, unknown>>).securitySchemes!);
    expect(schemes.sort()).toEqual(
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
    for (const { path, method, op } of ops()) expect(Array.isArray(op.security), `${method} ${path}`).toBe(true);
    const sec = (path: string, method = "get") => JSON.stringify(doc.paths[path]![method]!.security);
    expect(sec("/api/public/system-status")).toBe("[]");
    expect(sec("/api/messenger/games/spin-wheel/play", "post")).toBe('[{"MiniAppInitData":[]},{"MiniAppInitDataQuery":[]}]');
    expect(sec("/api/messenger/webhook", "post")).toBe('[{"BotWebhookSecret":[]},{"MessengerBotWebhookSecret":[]}]');
    expect(sec("/api/salutes/credit", "post")).toContain("PartnerSignature");
    expect(sec("/admin/jobs")).toContain("AdminBearer");
  });

  test("a body read means 400, 408, 413 and 415; a limit means 429 with its headers; every answer but Bun's 431 its request id", () => {
    for (const { path, method, op } of ops()) {
      const statuses = Object.keys(op.responses);
      const name = `${method} ${path}`;
      if (op.requestBody) for (const s of ["400", "408", "413", "415"]) expect(statuses, name).toContain(s);
      expect(statuses, name).toContain("503");
      expect(statuses, name).toContain("414");
      if (path.startsWith("/transparency/") || path.startsWith("/status") || path.startsWith("/api/public/")) expect(statuses, name).toContain("429");
      for (const [status, res] of Object.entries(op.responses as Record<string, Record<string, any>>)) {
        if (status === "default" || typeof res.$ref === "string") continue;
        // Bun's own 431 comes before any Herald code: no header of Herald's.
        if (status === "431") expect(res.headers, `${name} 431`).toBeUndefined();
        else expect(Object.keys(res.headers ?? {}), `${name} ${status}`).toContain("X-Request-ID");
      }
    }
    const errors = (doc.components as Record<string, Record<string, any>>).responses!;
    expect(Object.keys(errors.TooManyRequests.headers)).toEqual(expect.arrayContaining(["Retry-After", "X-RateLimit-Limit", "X-Request-ID"]));
    // Retry-After where a refusal may say when to come back (429, 503, a cooldown's or a running request's 409), nowhere else.
    for (const [name, res] of Object.entries(errors)) {
      const status = /^(\d{3})/.exec(String(res.description))?.[1];
      // An operator route's twin (OperatorConflict …) says the same as the shared response it doubles.
      const says = ["TooManyRequests", "ServiceUnavailable", "Conflict"].some((n) => name.replace(/^Operator/, "").startsWith(n)) || name === "Error";
      expect([name, "Retry-After" in (res.headers ?? {})], status).toEqual([name, says]);
    }
  });

  test("success answers that are not JSON are documented: the badge, the QR codes, the short-link redirect, the feeds", () => {
    const content = (path: string, status: string) => Object.keys(doc.paths[path]!.get!.responses[status]?.content ?? {});
    expect(content("/status/badge/{badge}", "200")).toEqual(["image/svg+xml"]);
    expect(content("/s/audio/{code}/qr.svg", "200")).toEqual(["image/svg+xml"]);
    expect(content("/s/audio/{code}/qr.png", "200")).toEqual(["image/png"]);
    expect(Object.keys(doc.paths["/s/audio/{code}"]!.get!.responses["302"].headers)).toContain("Location");
    expect(doc.paths["/status/feed.json"]!.get!.responses["200"].content["application/feed+json"].schema.type).toBe("object");
    expect(doc.paths["/api/openapi.json"]!.get!.responses["200"].content["application/json"].schema.type).toBe("object");
  });

  test("requests are exact: X-Expected-Revision required on the mission PATCH; campaign bodies a create/update oneOf", () => {
    const patch = doc.paths["/api/messenger/admin/missions/{mission_key}"]!.patch!;
    expect(patch.parameters.find((p: { name: string }) => p.name.toLowerCase() === "x-expected-revision").required).toBe(true);
    const body = doc.paths["/api/messenger/admin/games/catalog-campaigns"]!.post!.requestBody.content["application/json"].schema;
    expect(body.oneOf.map((b: { title: string }) => b.title)).toEqual(["create", "update"]);
    expect(body.oneOf[0].required).toEqual(["game_key", "audience_group", "title"]);
  });

  test("every GET that answers 304 documents it, with the validators it sends", async () => {
    const found: string[] = [];
    for (const { path, method, op } of ops()) {
      if (method !== "get" || path.includes("{")) continue;
      const sec = JSON.stringify(op.security);
      const init = (extra: Record<string, string>): RequestInit => {
        if (!sec.includes("Partner")) return { headers: { authorization: `Bearer ${admin}`, ...extra } };
        const signed = signedInit(h, key, "GET", path);
        return { ...signed, headers: { ...(signed.headers as Record<string, string>), ...extra } };
      };
      const first = await h.request(path, init({}));
      await first.arrayBuffer();
      const etag = first.headers.get("etag");
      const lastModified = first.headers.get("last-modified");
      if (first.status !== 200 || (!etag && !lastModified)) continue;
      const again = await h.request(path, init(etag ? { "if-none-match": etag } : { "if-modified-since": lastModified! }));
      await again.arrayBuffer();
      if (again.status !== 304) continue;
      found.push(path);
      const declared = Object.keys(op.responses["304"]?.headers ?? {});
      expect(declared, `${path} answers 304`).toContain(etag ? "ETag" : "Last-Modified");
    }
    // The transparency answers, trust.json, capabilities, the OpenAPI documents and the operators' cached reads.
    expect(found.length).toBeGreaterThanOrEqual(20);
  }, 120_000);
});

describe("the contract check is not vacuous", () => {
  test("an undocumented status, a wrong media type, an invalid body and an undeclared header are each reported", () => {
    const check = new ContractCheck(doc);
    const body = JSON.stringify((() => ({ success: true }))());
    expect(check.check(exchange({ status: 418 })).map((v) => v.kind)).toEqual(["status"]);
    expect(check.check(exchange({ headers: { "content-type": "text/plain", "x-request-id": "r" }, body: "hi", bytes: 2 })).map((v) => v.kind)).toEqual([
      "media type",
    ]);
    expect(check.check(exchange({ body, bytes: body.length })).map((v) => v.kind)).toEqual(["body"]);
    expect(check.check(exchange({ headers: { "content-type": "application/json", "x-made-up": "1" } })).map((v) => v.detail)).toEqual([
      "sends x-made-up, not declared",
    ]);
    // An extra field in a closed response object is a body violation too.
    const error = JSON.stringify({ success: false, error: "not_found", message: "m", request_id: "r", surprise: 1 });
    const found = check.check(exchange({ path: "/api/partner/users/1", status: 404, body: error, bytes: error.length }));
    expect(found.map((v) => v.kind)).toEqual(["body"]);
  });

  test("a declared Content-Disposition that no answer sent is reported once all are checked; one sent is not", () => {
    const check = new ContractCheck(doc);
    const csv = (headers: Record<string, string>) =>
      exchange({
        path: "/admin/console/dead-letters.csv",
        headers: { "content-type": "text/csv; charset=utf-8", "x-request-id": "r", "x-content-type-options": "nosniff", ...headers },
      });
    check.check(csv({}));
    expect(check.unsent()).toEqual([
      { kind: "header", operation: "GET /admin/console/dead-letters.csv", status: 200, detail: "declares content-disposition, which none of its answers sent" },
    ]);
    check.check(csv({ "content-disposition": 'attachment; filename="dead-letters.csv"' }));
    expect(check.unsent()).toEqual([]);
  });

  test("Location is declared on redirects, not on 304", () => {
    expect(doc.paths["/api/openapi.json"]!.get!.responses["304"].headers.Location).toBeUndefined();
    expect(doc.paths["/api/openapi.json"]!.get!.responses["304"].headers.ETag).toBeDefined();
    const redirects = ops().flatMap(({ op }) => Object.entries(op.responses as Record<string, any>).filter(([s]) => /^30[12378]$/.test(s)));
    expect(redirects.length).toBeGreaterThan(0);
    for (const [, res] of redirects) expect(res.headers.Location).toBeDefined();
  });

  test("Content-Disposition is declared where a name is sent: a file's media type, or a route that says it downloads", () => {
    const declares = (path: string) => "Content-Disposition" in (doc.paths[path]!.get!.responses["200"].headers ?? {});
    // CSV, ZIP: always a file.
    expect(declares("/admin/console/dead-letters.csv")).toBe(true);
    expect(declares("/admin/ops/alerts-monitor/export.zip")).toBe(true);
    // A JSON export and a chart that name their file (downloads()).
    expect(declares("/admin/ops/403-digest/export.json")).toBe(true);
    expect(declares("/admin/ops/403-digest/probe-trend.png")).toBe(true);
    // Served bodies that are not files: the document, the metrics, a badge, the mini-app's script, a JSON export shown inline.
    for (const path of ["/api/openapi.yaml", "/metrics", "/status/badge/{badge}", "/app/assets/{file}", "/admin/ops/incidents/export.json"])
      expect([path, declares(path)]).toEqual([path, false]);
  });

  test("a real answer passes: the system status and a 404 of a signed read", async () => {
    const check = new ContractCheck(doc);
    const record = async (path: string, init?: RequestInit) => {
      const res = await h.request(path, init);
      const text = await res.text();
      const headers: Record<string, string> = {};
      res.headers.forEach((v, k) => {
        headers[k] = v;
      });
      return check.check({ method: init?.method ?? "GET", path, status: res.status, headers, body: text, bytes: text.length, sent: [] });
    };
    expect(await record("/api/public/system-status")).toEqual([]);
    expect(await record("/api/partner/users/999999", signedInit(h, key, "GET", "/api/partner/users/999999"))).toEqual([]);
  });
});
