import { Elysia, type AnyElysia } from "elysia";
import { toOpenAPISchema } from "@elysiajs/openapi";
import { type AppContext, stateOf } from "../../context";
import { conditionalResponse } from "../caching/conditional";
import { closedObject, jsonShapes, mapSchema, SchemaHoister, unmarked, type OpenApiDocument } from "./components";
import { errorCodeSchema, idempotencyReplaySchema, sharedErrorResponses, typeErrorResponses } from "./errors";
import { EXAMPLE_SCHEMAS } from "./examples";
import { codeSamplesOf, PYTHON_SIGNER_MARKDOWN } from "./samples";
import { signedMutationHeaders } from "./headers";
import { addRouteHeaders, BODY_CHECKS, BODY_RULE, completeOperation, conditionalGet, HEADERS, type Operation, takeMark } from "./contract";
import { docsUiRoutes } from "./ui";
import { numericSpecOf } from "../params";
import { declaresFormBody, FORM_CONTENT_TYPE } from "../body/form-body";
import pkg from "../../../package.json";
import { DOCUMENTS, OpenApiDocuments } from "./documents";
import { AUDIENCES } from "./audiences";

export type { OpenApiDocument } from "./components";
export { openApiDocumentEtag, startOpenApiBuildInWorker } from "./documents";

const TAGS = [
  { name: "system", description: "Health, readiness, metrics and API documents" },
  { name: "partner", description: "Signed partner API" },
  { name: "public", description: "Public status and proofs; no authentication" },
  { name: "transparency", description: "Transparency data and the developer portal; no authentication" },
  { name: "audio-share", description: "Share links for tracks and audio files: build, shorten, sign, track; public" },
  { name: "admin", description: "Operator-only routes (admin bearer token)" },
];

/** A security scheme of a credential sent as an API key (in a header, the query or a cookie). */
const apiKey = (where: "header" | "query" | "cookie", name: string, description: string) => ({ type: "apiKey", in: where, name, description });

/** Builds the OpenAPI 3.1 document from the routes' typebox schemas (docs/api-reference.md describes it). */
export function buildOpenApi(app: AnyElysia, ctx: AppContext): OpenApiDocument {
  const generated = toOpenAPISchema(app, { paths: [/^\/api\/docs/], staticFile: false }, undefined, undefined, "3.1.1");
  // JSON round trip: typebox's symbol keys go, and no two operations share a schema object any more.
  const paths = JSON.parse(JSON.stringify(generated.paths)) as OpenApiDocument["paths"];
  addRouteDeclarations(app, paths);
  const hoister = new SchemaHoister();
  const responses = sharedErrorResponses();
  // One pass: each operation goes through every step in turn (the steps read only their own operation, and the
  // shared responses and schemas it adds are kept in the order the operations come).
  for (const [path, item] of Object.entries(paths)) {
    for (const [method, op] of Object.entries(item) as Array<[string, Operation]>) {
      signedMutationHeaders(op, ctx.config.idempotencyRequired);
      typeNumericParameters(op);
      for (const param of op.parameters ?? []) param.schema = unmarked(param.schema);
      for (const media of Object.values(op.requestBody?.content ?? {}) as Operation[]) media.schema = unmarked(mapSchema(media.schema, jsonShapes));
      for (const res of Object.values(op.responses ?? {})) {
        for (const media of Object.values(res.content ?? {}) as Operation[])
          media.schema = hoister.hoist(mapSchema(media.schema, (n) => closedObject(jsonShapes(n))));
      }
      completeOperation(path, method, op);
      typeErrorResponses(path, op, responses);
      addRouteHeaders(op, responses);
      op["x-codeSamples"] = codeSamplesOf(ctx.config.publicBaseUrl, path, method, op);
    }
  }
  const schemas: Record<string, Record<string, unknown>> = {
    ...hoister.schemas,
    ErrorCode: errorCodeSchema(),
    IdempotencyReplay: idempotencyReplaySchema(),
  };
  const error = schemas.Error as { properties?: Record<string, unknown> } | undefined;
  if (error?.properties) error.properties.error = { $ref: "#/components/schemas/ErrorCode" };
  for (const [name, example] of Object.entries(EXAMPLE_SCHEMAS)) if (schemas[name]) schemas[name].examples = [example];
  return {
    openapi: "3.1.1",
    info: {
      title: "Herald API",
      version: pkg.version,
      description:
        "Partner integration and transparency service. Every JSON response has `success`; failures carry a stable `error` code from /api/partner/errors.json. " +
        "This reference is at /api/docs, the Swagger UI at /api/docs/swagger, and the documents at /api/openapi.json and /api/openapi.yaml.\n\n" +
        "Signed partner routes: every request carries X-Partner-Key, X-Partner-Timestamp and X-Partner-Signature (mutations also X-Partner-Nonce and Idempotency-Key); " +
        "`herald sign` prints a signed curl command, `HeraldClient` (src/client) signs for you.\n\n" +
        PYTHON_SIGNER_MARKDOWN,
    },
    servers: [{ url: ctx.config.publicBaseUrl }],
    tags: TAGS,
    paths,
    components: {
      schemas: Object.fromEntries(Object.entries(schemas).sort(([a], [b]) => a.localeCompare(b))),
      responses,
      headers: HEADERS,
      securitySchemes: {
        PartnerKey: apiKey("header", "X-Partner-Key", "Partner key id (hk_live_… or hk_test_…)"),
        PartnerTimestamp: apiKey("header", "X-Partner-Timestamp", "Unix seconds; ±300 s of server time"),
        PartnerSignature: apiKey(
          "header",
          "X-Partner-Signature",
          "hex(HMAC-SHA256(secret, METHOD\\nPATH_AND_QUERY\\nTIMESTAMP\\nNONCE\\nhex(sha256(body)))); mutations also send X-Partner-Nonce and Idempotency-Key",
        ),
        AdminBearer: { type: "http", scheme: "bearer", description: "Operator token (herald admin-token create)" },
        AdminSession: apiKey(
          "cookie",
          "herald_admin_session",
          "Operator browser session from POST /admin/sign-in (docs/operations.md); form posts also carry csrf_token",
        ),
        MiniAppInitData: apiKey(
          "header",
          "Authorization",
          "Telegram mini-app init data as `Authorization: tma <init data>` (window.Telegram.WebApp.initData); the init_data body field is accepted too",
        ),
        MiniAppInitDataQuery: apiKey("query", "init_data", "The same init data as the init_data query parameter"),
        BotWebhookSecret: apiKey(
          "header",
          "X-Telegram-Bot-Api-Secret-Token",
          "The secret_token given to Telegram's setWebhook (MESSENGER_WEBHOOK_SECRET), in the header Telegram sends",
        ),
        MessengerBotWebhookSecret: apiKey(
          "header",
          "X-Messenger-Bot-Api-Secret-Token",
          "The same secret in the spec's header, accepted instead of X-Telegram-Bot-Api-Secret-Token (when both are sent, Telegram's wins)",
        ),
        TrackBearer: { type: "http", scheme: "bearer", description: "A track token (POST /admin/audio-share/track-tokens), per AUDIO_SHARE_TRACK_AUTH" },
      },
    },
  };
}

type RouteOf<H> = { method: string; path: string; hooks?: H };

/** The document's operation of an Elysia route (`/users/:id` is `/users/{id}` there). */
const operationOf = <O>(paths: OpenApiDocument["paths"], route: RouteOf<unknown>) =>
  paths[route.path.replace(/:([A-Za-z0-9_]+)/g, "{$1}")]?.[route.method.toLowerCase()] as O | undefined;

/**
 * What the generator leaves out of a route's operation, from the route's own declaration:
 * - the request body: Herald parses bodies with its own JSON parser (byte-counted, raw bytes kept for signatures),
 *   and the generator lists no content type for a function parser — so it is filled in from the route's typebox schema;
 * - responses the route declares in its detail (a redirect, an image, a feed, a CSV twin: answers with no typebox
 *   schema) beside the ones of its `response` schemas: the generator keeps only the latter when both are given.
 */
function addRouteDeclarations(app: AnyElysia, paths: OpenApiDocument["paths"]): void {
  for (const route of app.routes as Array<RouteOf<{ body?: unknown; detail?: { responses?: Record<string, unknown> } }>>) {
    const op = operationOf<Operation>(paths, route);
    if (!op) continue;
    if (route.hooks?.body) {
      const schema = JSON.parse(JSON.stringify(route.hooks.body));
      // A rule across fields the route checks itself (contract.ts bodyRule): its shapes, one of which the body takes.
      const rule = takeMark<{ anyOf?: unknown[] }>(op, BODY_RULE);
      if (rule?.anyOf) schema.anyOf = rule.anyOf;
      // Checks of single fields the route makes itself (contract.ts bodyChecks): on the field's own schema.
      for (const [field, keywords] of Object.entries(takeMark<Record<string, object>>(op, BODY_CHECKS) ?? {})) {
        const property = schema.properties?.[field];
        if (!property) throw new Error(`bodyChecks: ${route.method} ${route.path} has no body field ${field}`);
        schema.properties[field] = { ...property, ...keywords };
      }
      // The sign-in forms (src/http/body/form-body.ts) declare their form content type; the schema goes under it.
      const type = declaresFormBody(route.hooks.detail) ? FORM_CONTENT_TYPE : "application/json";
      // An absent body is `{}` on an object route (RouteIndex.absentBodyIsEmpty): one with no required field takes none.
      const required = schema.type !== "object" || (Array.isArray(schema.required) && schema.required.length > 0);
      op.requestBody = { required, content: { [type]: { schema } } };
    }
    const declared = route.hooks?.detail?.responses;
    if (!declared) continue;
    op.responses ??= {};
    for (const [status, res] of Object.entries(declared)) {
      const copy = JSON.parse(JSON.stringify(res));
      const existing = op.responses[status];
      // A status both declare: the detail's media types join the schema's (a CSV twin of a JSON answer).
      if (existing) existing.content = { ...copy.content, ...existing.content };
      else op.responses[status] = copy;
    }
  }
}

/**
 * A numeric query or path parameter is declared with Elysia's coercing type (a union of "numeric text" and
 * the number); clients see what the server accepts after coercion: `{ type: integer, minimum, maximum }`.
 */
function typeNumericParameters(op: Operation): void {
  for (const param of op.parameters ?? []) {
    const spec = numericSpecOf(param.schema);
    if (!spec || !param.schema) continue;
    const { description } = param.schema as { description?: string };
    param.schema = {
      type: spec.integer ? "integer" : "number",
      ...(spec.minimum !== undefined && { minimum: spec.minimum }),
      ...(spec.maximum !== undefined && { maximum: spec.maximum }),
      ...(description !== undefined && { description }),
    };
  }
}

/** The API documents and the offline docs pages (src/http/openapi/ui.ts). */
export function openApiRoutes(getApp: () => AnyElysia, ctx: AppContext) {
  const docs = new OpenApiDocuments(() => buildOpenApi(getApp(), ctx), ctx);
  stateOf(ctx, DOCUMENTS).docs = docs;
  const raw = (summary: string, type: string, tags = ["system"]) => ({
    tags,
    summary,
    ...conditionalGet("etag"),
    responses: {
      200: {
        description: type,
        content: {
          [type]: {
            schema: type.endsWith("json")
              ? {
                  // The document itself: its top-level fields, and room for any a later version adds (x-… extensions).
                  type: "object" as const,
                  required: ["openapi", "info", "paths"],
                  properties: {
                    openapi: { type: "string" as const },
                    info: { type: "object" as const },
                    servers: { type: "array" as const, items: { type: "object" as const } },
                    tags: { type: "array" as const, items: { type: "object" as const } },
                    paths: { type: "object" as const },
                    components: { type: "object" as const },
                  },
                  additionalProperties: true,
                }
              : { type: "string" as const },
          },
        },
      },
    },
  });
  const app = new Elysia({ name: "herald:openapi" })
    // Each awaits its document: built by the worker `herald serve` starts, or on the loop in tests and tools.
    .get("/api/openapi.json", async ({ request }) => conditionalResponse(request, await docs.document("json")), {
      detail: raw("OpenAPI 3.1 document (JSON); ETag and 304 on If-None-Match", "application/json"),
    })
    .get("/api/openapi.yaml", async ({ request }) => conditionalResponse(request, await docs.document("yaml")), {
      detail: raw("OpenAPI 3.1 document (YAML); ETag and 304 on If-None-Match", "application/yaml"),
    })
    .get("/api/openapi-transparency.yaml", async ({ request }) => conditionalResponse(request, await docs.document("transparencyYaml")), {
      detail: raw("OpenAPI 3.1 document of the public and transparency operations (YAML); ETag and 304 on If-None-Match", "application/yaml", ["public"]),
    });
  for (const a of AUDIENCES) {
    app.get(`/api/openapi/${a.slug}.json`, async ({ request }) => conditionalResponse(request, await docs.audience(a.slug)), {
      detail: raw(`OpenAPI 3.1 document of one audience of the reference at /api/docs: ${a.title} (JSON); ETag and 304 on If-None-Match`, "application/json"),
    });
  }
  return app.use(docsUiRoutes(async () => (await docs.document("audiences")).page));
}
