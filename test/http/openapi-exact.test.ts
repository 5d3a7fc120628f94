import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import Ajv2020 from "ajv/dist/2020";
import addFormats from "ajv-formats";
import { openTestApp, type TestApp } from "../support/app";
import { ContractCheck, type Doc } from "../support/contract-check";
import type { Exchange } from "../support/contract-log";
import { createAdminToken, createKey, signedInit, type TestKey } from "../support/partner";
import { messengerEnv, textUpdate, webhookPost, WEBHOOK_SECRET } from "../messenger/support";

// The last edges an outside Ajv/Prism run found in the document (issue 74, items 5, 6, 8 and 11), each shown on real
// answers with the check CI runs over every recorded exchange (test/support/contract-check.ts: Ajv 2020 over the whole
// document): the document's own 200, a signed mutation's replay, a signed read's used nonce, Cache-Control wherever it is sent, the bot webhook's
// two secret headers, and Strict-Transport-Security. Runs on either engine (HERALD_TEST_ENGINE).

type Json = Record<string, any>;
let h: TestApp;
let doc: Doc & Json;
let key: TestKey;
let admin: string;
beforeAll(async () => {
  h = await openTestApp({ env: messengerEnv({ RATE_LIMIT_PUBLIC_API_PER_MIN: "0" }) });
  doc = (await h.json("/api/openapi.json")).body as Doc & Json;
  key = await createKey(h, { mode: "live" });
  admin = await createAdminToken(h);
});
afterAll(() => h?.close());

/** The answer to `path` as the contract log records it (test/support/contract-log.ts). */
async function exchange(path: string, init: RequestInit = {}): Promise<Exchange> {
  const res = await h.request(path, init);
  const body = await res.text();
  const headers: Record<string, string> = {};
  res.headers.forEach((v, k) => {
    headers[k] = v;
  });
  return { method: init.method ?? "GET", path: path.split("?")[0]!, status: res.status, headers, body, bytes: Buffer.byteLength(body), sent: [] };
}
const checked = async (path: string, init?: RequestInit) => {
  const x = await exchange(path, init);
  return { status: x.status, violations: new ContractCheck(doc).check(x), x };
};
const bearer = () => ({ headers: { authorization: `Bearer ${admin}` } });
const operations = () =>
  Object.entries(doc.paths).flatMap(([path, item]) => Object.entries(item as Record<string, Json>).map(([method, op]) => ({ path, method, op })));
/** A response of an operation, followed to the shared one it points at. */
const response = (res: Json): Json => (typeof res.$ref === "string" ? doc.components.responses![String(res.$ref).split("/").pop()!]! : res);

describe("GET /api/openapi.json: the document answers its own schema", () => {
  test("the served document is valid under the schema its 200 declares (Ajv 2020, as the contract check)", async () => {
    const schema = doc.paths["/api/openapi.json"]!.get!.responses["200"].content["application/json"].schema;
    expect(schema.required).toEqual(["openapi", "info", "paths"]);
    expect(Object.keys(schema.properties).sort()).toEqual(["components", "info", "openapi", "paths", "servers", "tags"]);
    const ajv = new Ajv2020({ strict: false });
    addFormats(ajv);
    ajv.addSchema(doc as object, "doc");
    const validate = ajv.compile({ $ref: "doc#/paths/~1api~1openapi.json/get/responses/200/content/application~1json/schema" });
    expect(validate(doc), JSON.stringify(validate.errors)).toBe(true);
    // Not vacuous: a document without info, or whose servers are not a list, is refused.
    const { info: _info, ...noInfo } = doc;
    expect(validate(noInfo)).toBe(false);
    expect(validate({ ...doc, servers: "https://herald.example.com" })).toBe(false);
    // The real exchanges, JSON and YAML, as CI checks them.
    for (const path of ["/api/openapi.json", "/api/openapi.yaml", "/api/openapi-transparency.yaml"]) {
      const r = await checked(path);
      expect([path, r.status, r.violations]).toEqual([path, 200, []]);
    }
  });
});

describe("a signed mutation's replay: 409 idempotency_replay, typed", () => {
  test("the document says what a replay answers, where it can be answered, and nowhere else", () => {
    const replay = doc.components.schemas!.IdempotencyReplay!;
    expect(replay.required).toEqual(["success", "error", "message", "request_id", "original_status", "original_response"]);
    expect(replay.properties.error).toEqual({ const: "idempotency_replay" });
    expect(replay.properties.original_status).toMatchObject({ type: "integer", minimum: 200, maximum: 299 });
    expect(replay.properties.original_response.type).toBe("object");
    // The plain Error body (every other refusal, the 422 of a reused key among them) carries neither field.
    expect(Object.keys(doc.components.schemas!.Error!.properties)).not.toContain("original_status");
    expect(Object.keys(doc.components.schemas!.Error!.properties)).not.toContain("original_response");
    let mutations = 0;
    for (const { path, method, op } of operations()) {
      const key = (op.parameters ?? []).find((p: Json) => p.in === "header" && p.name === "Idempotency-Key");
      const signed = (op.security ?? []).some((s: Json) => "PartnerKey" in s);
      const name = `${method} ${path}`;
      if (key && signed) {
        mutations++;
        expect([name, op.responses["409"]]).toEqual([name, { $ref: "#/components/responses/ConflictOrReplay" }]);
        expect(key.description).toContain("409 idempotency_replay (IdempotencyReplay)");
        expect(key.description).not.toContain("answers the stored response");
        // The success is never the replay: no 2xx of a signed mutation says Idempotent-Replayed.
        for (const [status, res] of Object.entries(op.responses as Record<string, Json>))
          if (/^2/.test(status)) expect([name, status, "Idempotent-Replayed" in (res.headers ?? {})]).toEqual([name, status, false]);
      } else if (op.responses?.["409"]) {
        expect([name, op.responses["409"].$ref]).not.toEqual([name, "#/components/responses/ConflictOrReplay"]);
      }
    }
    expect(mutations).toBeGreaterThan(20);
    const shared = doc.components.responses!;
    expect(shared.ConflictOrReplay!.headers["Idempotent-Replayed"]).toBeDefined();
    expect(shared.Conflict!.headers["Idempotent-Replayed"]).toBeUndefined();
    expect(shared.UnprocessableContent!.content["application/json"].schema.allOf[0]).toEqual({ $ref: "#/components/schemas/Error" });
    // The operators' status routes replay as a success (200 with the header): still declared there.
    expect(doc.paths["/admin/status/incidents"]!.post!.responses["200"].headers["Idempotent-Replayed"]).toBeDefined();
  });

  test("a real replay, a reused key and a plain conflict each validate; a replay without its first answer does not", async () => {
    const create = (idempotencyKey: string, body: Json) =>
      checked("/api/partner/users", signedInit(h, key, "POST", "/api/partner/users", { body, idempotencyKey }));
    const first = await create("exact-replay", { external_id: "exact-1" });
    expect([first.status, first.violations]).toEqual([201, []]);
    const replay = await create("exact-replay", { external_id: "exact-1" });
    expect([replay.status, replay.violations]).toEqual([409, []]);
    const body = JSON.parse(replay.x.body!);
    expect(body).toMatchObject({ error: "idempotency_replay", original_status: 201, original_response: JSON.parse(first.x.body!) });
    expect(replay.x.headers["idempotent-replayed"]).toBe("true");
    const reused = await create("exact-replay", { external_id: "exact-2" });
    expect([reused.status, JSON.parse(reused.x.body!).error, reused.violations]).toEqual([422, "idempotency_key_reused", []]);
    const taken = await create("exact-other", { external_id: "exact-1" });
    expect([taken.status, JSON.parse(taken.x.body!).error, taken.violations]).toEqual([409, "external_id_taken", []]);
    // Not vacuous: the replay without its first answer, or a 422 that claims one, is refused.
    const check = new ContractCheck(doc);
    const { original_response: _gone, ...bare } = body;
    const text = JSON.stringify(bare);
    expect(check.check({ ...replay.x, body: text, bytes: text.length }).map((v) => v.kind)).toEqual(["body"]);
    const claimed = JSON.stringify({ ...JSON.parse(reused.x.body!), original_status: 201, original_response: {} });
    expect(check.check({ ...reused.x, body: claimed, bytes: claimed.length }).map((v) => v.kind)).toEqual(["body"]);
  });
});

describe("a signed read sent twice with one nonce: 409 replay_detected, declared (issue 74, item 11)", () => {
  test("every signed read lists its optional X-Partner-Nonce and a 409 whose codes hold replay_detected; a real one validates", async () => {
    let reads = 0;
    for (const { path, method, op } of operations()) {
      const signed = (op.security ?? []).some((s: Json) => "PartnerKey" in s);
      const keyed = (op.parameters ?? []).some((p: Json) => p.in === "header" && p.name === "Idempotency-Key");
      if (!signed || keyed) continue;
      reads++;
      const name = `${method} ${path}`;
      const nonce = (op.parameters ?? []).find((p: Json) => p.in === "header" && p.name === "X-Partner-Nonce");
      expect([name, nonce?.required, String(nonce?.description)]).toEqual([name, false, expect.stringContaining("409 replay_detected")]);
      expect([name, op.responses["409"]?.$ref, String(op.responses["409"]?.description)]).toEqual([
        name,
        "#/components/responses/Conflict",
        expect.stringMatching(/^replay_detected: /),
      ]);
    }
    expect(reads).toBeGreaterThan(20);
    expect(response({ $ref: "#/components/responses/Conflict" }).content["application/json"].schema.allOf[1].properties.error.enum).toContain(
      "replay_detected",
    );
    // As a load balancer resends it: the same signed GET, its nonce included, a second time.
    const init = signedInit(h, key, "GET", "/api/partner/status", { nonce: "00112233445566778899aabbccddeeff" });
    const first = await checked("/api/partner/status", init);
    expect([first.status, first.violations]).toEqual([200, []]);
    const again = await checked("/api/partner/status", init);
    expect([again.status, JSON.parse(again.x.body!).error, again.violations]).toEqual([409, "replay_detected", []]);
  });
});

describe("Cache-Control: declared wherever it is sent", () => {
  test("an operator route declares it on every answer, refusals included; a public refusal does not", () => {
    for (const { path, method, op } of operations()) {
      const operator = path.startsWith("/admin") || path.startsWith("/api/messenger/admin/") || path === "/metrics";
      if (!operator) continue;
      for (const [status, res] of Object.entries(op.responses as Record<string, Json>)) {
        if (status === "431" || status === "default") continue;
        expect([method, path, status, "Cache-Control" in (response(res).headers ?? {})]).toEqual([method, path, status, true]);
      }
    }
    expect(doc.paths["/admin/jobs"]!.get!.responses["403"]).toEqual({ $ref: "#/components/responses/OperatorForbidden" });
    expect(doc.components.responses!.NotFound!.headers["Cache-Control"]).toBeUndefined();
    expect(doc.components.headers!.CacheControl!.schema).toEqual({ type: "string" });
    // A route that sets its own says its value.
    expect(doc.paths["/api/public/system-status"]!.get!.responses["200"].headers["Cache-Control"]).toEqual({
      $ref: "#/components/headers/CacheControl",
      description: "public, max-age=30 (set by this route)",
    });
    expect(doc.paths["/api/partner/users"]!.post!.responses["201"].headers["Cache-Control"]).toBeUndefined();
  });

  test("real answers that carry it pass the check: public reads, feeds, a badge, pages, 304s, operator answers and refusals", async () => {
    const etag = (await h.request("/api/openapi.json")).headers.get("etag")!;
    const probes: Array<[string, RequestInit?]> = [
      ["/"],
      ["/", { headers: { accept: "text/html" } }],
      ["/status"],
      ["/status.json"],
      ["/status/feed.rss"],
      ["/status/feed.json"],
      ["/status/badge/overall.svg"],
      ["/api/public/system-status/trend"],
      ["/api/public/latency-percentiles"],
      ["/api/public-stats"],
      ["/api/transactions/latest"],
      ["/api/public/holder-cache-freshness.json"],
      ["/api/public/holder-cache-freshness.csv"],
      ["/developers/deprecations.json"],
      ["/developers/deprecations-playbook.md"],
      ["/developers/sdk-manifest.json"],
      ["/trust.json"],
      ["/api/openapi.json", { headers: { "if-none-match": etag } }],
      ["/api/partner/capabilities", signedInit(h, key, "GET", "/api/partner/capabilities")],
      ["/api/canary/echo", { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify({ message: "hi", request_id: "r-1" }) }],
      ["/admin/jobs", bearer()],
      ["/admin/jobs"],
      ["/admin/jobs/no-such-job/run", { method: "POST", ...bearer() }],
      ["/api/messenger/admin/missions", bearer()],
      ["/api/messenger/admin/missions"],
      ["/metrics", bearer()],
      ["/admin/sign-in"],
    ];
    let carried = 0;
    for (const [path, init] of probes) {
      const r = await checked(path, init);
      expect([path, r.status, r.violations]).toEqual([path, r.status, []]);
      if (r.x.headers["cache-control"] !== undefined) carried++;
    }
    expect(carried).toBe(probes.length);
    // Not vacuous: a public refusal that carried it would be reported.
    const notFound = await exchange("/api/public/system-status/incidents/999999");
    expect(notFound.status).toBe(404);
    expect(new ContractCheck(doc).check({ ...notFound, headers: { ...notFound.headers, "cache-control": "no-store" } }).map((v) => v.detail)).toEqual([
      "sends cache-control, not declared",
    ]);
  });
});

describe("credentials and transport", () => {
  test("the bot webhook takes its secret in either header: two security schemes, one of them enough", async () => {
    const schemes = doc.components.securitySchemes!;
    expect(schemes.BotWebhookSecret).toMatchObject({ type: "apiKey", in: "header", name: "X-Telegram-Bot-Api-Secret-Token" });
    expect(schemes.MessengerBotWebhookSecret).toMatchObject({ type: "apiKey", in: "header", name: "X-Messenger-Bot-Api-Secret-Token" });
    expect(doc.paths["/api/messenger/webhook"]!.post!.security).toEqual([{ BotWebhookSecret: [] }, { MessengerBotWebhookSecret: [] }]);
    const spec = await checked("/api/messenger/webhook", webhookPost(textUpdate("/help"), null, { "x-messenger-bot-api-secret-token": WEBHOOK_SECRET }));
    expect([spec.status, spec.violations]).toEqual([200, []]);
    const wrong = await checked("/api/messenger/webhook", webhookPost(textUpdate("/help"), null, { "x-messenger-bot-api-secret-token": "wrong" }));
    expect([wrong.status, wrong.violations]).toEqual([401, []]);
  });

  test("Strict-Transport-Security is declared on every answer, as a production server's; this one (development) sends none", async () => {
    expect(doc.components.headers!.StrictTransportSecurity!.schema).toEqual({ type: "string", const: "max-age=31536000" });
    for (const { path, method, op } of operations())
      for (const [status, res] of Object.entries(op.responses as Record<string, Json>)) {
        if (status === "431" || status === "default") continue;
        expect([method, path, status, "Strict-Transport-Security" in (response(res).headers ?? {})]).toEqual([method, path, status, true]);
      }
    for (const path of ["/api/public/system-status", "/no-such-route", "/admin/jobs"])
      expect([path, (await h.request(path)).headers.get("strict-transport-security")]).toEqual([path, null]);
  });
});
