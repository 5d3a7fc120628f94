import { afterEach, describe, expect, test } from "bun:test";
import { TypeCompiler } from "@sinclair/typebox/compiler";
import { Elysia, t } from "elysia";
import { ERROR_CATALOG } from "../../src/http/errors/errors";
import { SchemaHoister } from "../../src/http/openapi/components";
import { named, SCHEMA_NAME_KEY } from "../../src/http/openapi/names";
import { RouteIndex } from "../../src/http/routes/route-index";
import { openTestApp, type TestApp } from "../support/app";

// Named component schemas (docs/api-reference.md): every resource once in components.schemas, a $ref wherever a
// response carries it, ids typed as integers, and error bodies typed by the catalog.

let h: TestApp;
afterEach(() => h?.close());

const RESOURCES = [
  "User",
  "WalletLink",
  "WalletVerification",
  "WalletInfo",
  "Webhook",
  "WebhookEvent",
  "ReplayResult",
  "DeadLetterSummary",
  "LedgerEntry",
  "Ledger",
  "Balance",
  "SalutesEntryResult",
  "Conversion",
  "ConversionPolicy",
  "DonationClaim",
  "PartnerKey",
  "Capabilities",
  "PartnerStatus",
  "UsageAnalytics",
  "ErrorCatalogEntry",
  "TokenStatus",
  "PublicStats",
  "SystemStatus",
  "StatusChecks",
  "Incident",
  "MaintenanceWindow",
  "Uptime",
  "UptimeTotals",
  "ShareLink",
  "TrackToken",
  "Deprecation",
  "Pagination",
  "Meta",
  "Error",
  "ErrorCode",
];

const refsIn = (v: unknown, out: string[] = []): string[] => {
  if (Array.isArray(v)) v.forEach((x) => refsIn(x, out));
  else if (v && typeof v === "object") {
    const ref = (v as { $ref?: unknown }).$ref;
    if (typeof ref === "string") out.push(ref);
    for (const x of Object.values(v)) refsIn(x, out);
  }
  return out;
};

const jsonSchemaOf = (doc: any, path: string, method: string, status: string) => doc.paths[path][method].responses[status].content["application/json"].schema;

describe("the served document", () => {
  test("names every resource once and refers to it from the responses that carry it", async () => {
    h = await openTestApp();
    const doc = (await h.json("/api/openapi.json")).body;
    const schemas = doc.components.schemas;
    for (const name of RESOURCES) expect(schemas[name]).toBeDefined();
    // Each is used: from an operation, or from another component an operation uses (StatusChecks in SystemStatus).
    const refs = new Set(refsIn([doc.paths, doc.components]));
    for (const name of RESOURCES) expect(refs.has(`#/components/schemas/${name}`), name).toBe(true);
    // One User for the live and the sandbox routes, for create, read and list alike.
    expect(jsonSchemaOf(doc, "/api/partner/users", "post", "201").properties.user).toEqual({ $ref: "#/components/schemas/User" });
    expect(jsonSchemaOf(doc, "/api/partner/users/{user_id}", "get", "200").properties.user).toEqual({ $ref: "#/components/schemas/User" });
    expect(jsonSchemaOf(doc, "/api/partner/users", "get", "200").properties.users.items).toEqual({ $ref: "#/components/schemas/User" });
    expect(jsonSchemaOf(doc, "/api/partner/sandbox/users", "get", "200").properties.users.items).toEqual({ $ref: "#/components/schemas/User" });
    // No marker is left, and no component is defined without being a real schema.
    expect(JSON.stringify(doc)).not.toContain(SCHEMA_NAME_KEY);
    for (const [name, schema] of Object.entries(schemas)) expect(typeof schema === "object" && schema !== null, name).toBe(true);
  });

  test("ids and counts are JSON integers, not `string | integer`", async () => {
    h = await openTestApp();
    const doc = (await h.json("/api/openapi.json")).body;
    const s = doc.components.schemas;
    expect(s.User.properties.id).toEqual({ type: "integer" });
    expect(s.Webhook.properties.id).toEqual({ type: "integer" });
    expect(s.WebhookEvent.properties.webhook_id).toEqual({ type: "integer" });
    expect(s.LedgerEntry.properties.id).toEqual({ type: "integer" });
    expect(s.WebhookEvent.properties.last_status_code).toEqual({ type: ["integer", "null"] });
    // Elysia's coercing number types write a "numeric text" branch; JSON bodies and responses never carry one.
    const text = JSON.stringify({ paths: doc.paths, schemas: s });
    expect(text).not.toContain('"format":"integer"');
    expect(text).not.toContain('"format":"numeric"');
    // A nullable enum allows null; a record is `additionalProperties`, which generators turn into an index type.
    expect(s.Incident.properties.current_severity).toEqual({ type: ["string", "null"], enum: ["warn", "bad", null] });
    expect(s.ErrorCatalogEntry.properties.recovery_links).toEqual({ type: "object", additionalProperties: { type: "string" } });
    // A nullable constant is a one-value enum with null: `const` beside a nullable type would refuse null. No node of
    // either document carries both.
    const nullableConsts: string[] = [];
    const walk = (node: unknown, where: string) => {
      if (Array.isArray(node)) return node.forEach((n, i) => walk(n, `${where}/${i}`));
      if (!node || typeof node !== "object") return;
      const o = node as Record<string, unknown>;
      if ("const" in o && Array.isArray(o.type) && o.type.includes("null")) nullableConsts.push(where);
      for (const [k, v] of Object.entries(o)) walk(v, `${where}/${k}`);
    };
    walk(doc, "#");
    expect(nullableConsts).toEqual([]);
    // Request bodies stay inline (and typed the same way).
    const replay = doc.paths["/api/partner/webhook-events/replay"].post.requestBody.content["application/json"].schema;
    expect(replay.properties.event_ids.items.anyOf.map((b: { type: string }) => b.type)).toEqual(["integer", "string"]);
    expect(replay.properties.event_ids.items.anyOf[0]).toMatchObject({ minimum: 1, type: "integer" });
  });

  test("errors: one Error body whose code is a catalog enum, and each declared status narrowed to its codes", async () => {
    h = await openTestApp();
    const doc = (await h.json("/api/openapi.json")).body;
    const { schemas, responses } = doc.components;
    expect(schemas.ErrorCode.enum).toEqual(Object.keys(ERROR_CATALOG));
    expect(schemas.Error.properties.error).toEqual({ $ref: "#/components/schemas/ErrorCode" });
    const codesOf = (status: number) =>
      Object.entries(ERROR_CATALOG)
        .filter(([, e]) => e.http_status === status)
        .map(([c]) => c);
    expect(responses.NotFound.content["application/json"].schema.allOf[1].properties.error.enum).toEqual(codesOf(404));
    // idempotency_replay is not an Error body: a signed mutation's 409 is ConflictOrReplay (IdempotencyReplay beside the rest).
    const conflicts = codesOf(409).filter((c) => c !== "idempotency_replay");
    expect(responses.Conflict.content["application/json"].schema.allOf[1].properties.error.enum).toEqual(conflicts);
    expect(responses.ConflictOrReplay.content["application/json"].schema.oneOf).toEqual([
      responses.Conflict.content["application/json"].schema,
      { $ref: "#/components/schemas/IdempotencyReplay" },
    ]);
    expect(Object.keys(responses.TooManyRequests.headers)).toContain("Retry-After");
    const user = doc.paths["/api/partner/users/{user_id}"].get.responses;
    expect(user["404"]).toEqual({ $ref: "#/components/responses/NotFound" });
    expect(user["401"]).toEqual({ $ref: "#/components/responses/Unauthorized" });
    // Every failure a route declares is a shared typed response; none points at the bare Error schema.
    for (const [path, item] of Object.entries<any>(doc.paths)) {
      for (const [method, op] of Object.entries<any>(item)) {
        if (!op.responses) continue; // OpenAPI 3.1 lets an operation leave its responses out
        expect(op.responses.default, `${method} ${path}`).toEqual({ $ref: "#/components/responses/Error" });
        for (const [status, res] of Object.entries<any>(op.responses)) {
          if (status !== "default")
            expect(res.content?.["application/json"]?.schema?.$ref ?? null, `${method} ${path} ${status}`).not.toBe("#/components/schemas/Error");
        }
      }
    }
  });

  test("the transparency subset carries exactly the components its operations reach", async () => {
    h = await openTestApp();
    const YAML = (await import("yaml")).default;
    const subset = YAML.parse(await (await h.request("/api/openapi-transparency.yaml")).text());
    const reached = new Set(refsIn(subset.paths));
    // Follow refs through the components themselves.
    for (let grew = true, i = 0; grew && i < 50; i++) {
      const before = reached.size;
      for (const ref of [...reached]) {
        const [, , kind, name] = ref.split("/");
        refsIn(subset.components[kind!]?.[name!]).forEach((r) => reached.add(r));
      }
      grew = reached.size > before;
    }
    const defined = Object.entries<Record<string, unknown>>(subset.components).flatMap(([kind, m]) => Object.keys(m).map((n) => `#/components/${kind}/${n}`));
    expect(defined.sort()).toEqual([...reached].sort());
    expect(subset.components.schemas.SystemStatus).toBeDefined();
    expect(subset.components.schemas.User).toBeUndefined();
  });
});

describe("named()", () => {
  test("TypeBox's compiler, the HTTP core's body check and Elysia's body, query and response validation ignore the name", async () => {
    const Thing = named("Thing", t.Object({ id: t.Integer(), label: t.String({ maxLength: 5 }) }, { additionalProperties: false }));
    const check = TypeCompiler.Compile(Thing);
    expect(check.Check({ id: 1, label: "ok" })).toBe(true);
    expect(check.Check({ id: 1, label: "too long" })).toBe(false);
    const index = new RouteIndex();
    index.load([{ method: "POST", path: "/things", hooks: { body: Thing } }]);
    expect(index.bodyCheckOf("POST", "/things")!.Check({ id: 2, label: "x" })).toBe(true);
    expect(index.bodyCheckOf("POST", "/things")!.Check({ id: 2, label: "x", extra: 1 })).toBe(false);

    const Query = named("ThingQuery", t.Object({ label: t.String({ maxLength: 5 }) }));
    const app = new Elysia()
      .post("/things", ({ body }) => body, { body: Thing, response: { 200: Thing } })
      .get("/things", ({ query }) => ({ id: 1, label: query.label }), { query: Query, response: { 200: Thing } })
      .get("/bad", () => ({ id: "x", label: "y" }) as never, { response: { 200: Thing } });
    const post = (body: unknown) =>
      app.handle(new Request("http://localhost/things", { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify(body) }));
    expect((await post({ id: 1, label: "ok" })).status).toBe(200);
    expect((await post({ id: 1, label: "too long" })).status).toBe(422);
    expect((await app.handle(new Request("http://localhost/things?label=abc"))).status).toBe(200);
    expect((await app.handle(new Request("http://localhost/things?label=abcdefgh"))).status).toBe(422);
    // The response schema still validates: a wrong shape is refused, not sent.
    expect((await app.handle(new Request("http://localhost/bad"))).status).not.toBe(200);
  });

  test("the hoister keeps one definition per name, writes a nullable occurrence as anyOf [$ref, null], and refuses two shapes", () => {
    const hoister = new SchemaHoister();
    const user = { [SCHEMA_NAME_KEY]: "U", type: "object", properties: { id: { type: "integer" } } };
    const doc = hoister.hoist({
      type: "object",
      properties: { a: user, b: { ...user, type: ["object", "null"] }, c: { ...user, description: "the owner" } },
    }) as any;
    expect(doc.properties.a).toEqual({ $ref: "#/components/schemas/U" });
    expect(doc.properties.b).toEqual({ anyOf: [{ $ref: "#/components/schemas/U" }, { type: "null" }] });
    expect(doc.properties.c).toEqual({ $ref: "#/components/schemas/U", description: "the owner" });
    expect(hoister.schemas.U).toEqual({ type: "object", properties: { id: { type: "integer" } } });
    expect(() => hoister.hoist({ ...user, properties: { id: { type: "string" } } })).toThrow(/schema U occurs in two different shapes/);
  });
});
