import { Elysia, type AnyElysia } from "elysia";
import { toOpenAPISchema } from "@elysiajs/openapi";
import YAML from "yaml";
import swaggerBundlePath from "swagger-ui-dist/swagger-ui-bundle.js" with { type: "file" };
import swaggerCssPath from "swagger-ui-dist/swagger-ui.css" with { type: "file" };
import type { AppContext } from "../context";
import type { TSchema } from "@sinclair/typebox";
import { numericSpecOf } from "./params";
import pkg from "../../package.json";


export interface OpenApiDocument {
  openapi: string;
  info: Record<string, unknown>;
  servers: Array<{ url: string }>;
  paths: Record<string, Record<string, unknown>>;
  components: Record<string, unknown>;
  tags?: Array<{ name: string; description?: string }>;
}

const TAGS = [
  { name: "system", description: "Health, readiness, metrics and API documents" },
  { name: "partner", description: "Signed partner API" },
  { name: "public", description: "Public status and proofs; no authentication" },
  { name: "transparency", description: "Transparency data and the developer portal; no authentication" },
  { name: "audio-share", description: "Share links for tracks and audio files: build, shorten, sign, track; public" },
  { name: "admin", description: "Operator-only routes (admin bearer token)" },
];

/** Builds the OpenAPI 3.1 document from the routes' typebox schemas; computed once, on first request. */
export function buildOpenApi(app: AnyElysia, ctx: AppContext): OpenApiDocument {
  const { paths, components } = toOpenAPISchema(app, { paths: [/^\/api\/docs/], staticFile: false }, undefined, undefined, "3.1.1");
  addJsonRequestBodies(app, paths as OpenApiDocument["paths"]);
  typeNumericParameters(paths as OpenApiDocument["paths"]);
  return {
    openapi: "3.1.1",
    info: {
      title: "Herald API",
      version: pkg.version,
      description:
        "Partner integration and transparency service. Every JSON response has `success`; failures carry a stable `error` code from /api/partner/errors.json.",
    },
    servers: [{ url: ctx.config.publicBaseUrl }],
    tags: TAGS,
    paths: paths as OpenApiDocument["paths"],
    components: {
      ...(components as Record<string, unknown>),
      securitySchemes: {
        PartnerKey: { type: "apiKey", in: "header", name: "X-Partner-Key", description: "Partner key id (hk_live_… or hk_test_…)" },
        PartnerTimestamp: { type: "apiKey", in: "header", name: "X-Partner-Timestamp", description: "Unix seconds; ±300 s of server time" },
        PartnerSignature: {
          type: "apiKey",
          in: "header",
          name: "X-Partner-Signature",
          description: "hex(HMAC-SHA256(secret, METHOD\\nPATH_AND_QUERY\\nTIMESTAMP\\nNONCE\\nhex(sha256(body)))); mutations also send X-Partner-Nonce and Idempotency-Key",
        },
        AdminBearer: { type: "http", scheme: "bearer", description: "Operator token (herald admin-token create)" },
      },
    },
  };
}

/**
 * Herald parses bodies with its own JSON parser (byte-counted, raw bytes kept for signatures), and the OpenAPI
 * generator lists no content type for a function parser — so the request bodies are filled in from each
 * route's typebox schema here.
 */
function addJsonRequestBodies(app: AnyElysia, paths: OpenApiDocument["paths"]): void {
  for (const route of app.routes as Array<{ method: string; path: string; hooks?: { body?: unknown } }>) {
    if (!route.hooks?.body) continue;
    const op = paths[route.path.replace(/:([A-Za-z0-9_]+)/g, "{$1}")]?.[route.method.toLowerCase()] as { requestBody?: Record<string, unknown> } | undefined;
    if (!op) continue;
    // JSON round trip drops typebox's symbol keys, leaving plain JSON Schema.
    const schema = JSON.parse(JSON.stringify(route.hooks.body));
    op.requestBody = { required: true, content: { "application/json": { schema } } };
  }
}

/**
 * A numeric query or path parameter is declared with Elysia's coercing type (a union of "numeric text" and
 * the number); clients see what the server accepts after coercion: `{ type: integer, minimum, maximum }`.
 */
function typeNumericParameters(paths: OpenApiDocument["paths"]): void {
  for (const ops of Object.values(paths)) {
    for (const op of Object.values(ops) as Array<{ parameters?: Array<{ schema?: TSchema }> }>) {
      for (const param of op.parameters ?? []) {
        const spec = numericSpecOf(param.schema);
        if (!spec || !param.schema) continue;
        const { description } = param.schema as { description?: string };
        param.schema = {
          type: spec.integer ? "integer" : "number",
          ...(spec.minimum !== undefined && { minimum: spec.minimum }),
          ...(spec.maximum !== undefined && { maximum: spec.maximum }),
          ...(description !== undefined && { description }),
        } as unknown as TSchema;
      }
    }
  }
}

const DOCS_HTML = `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>Herald API</title>
<meta name="viewport" content="width=device-width, initial-scale=1">
<link rel="stylesheet" href="/api/docs/assets/swagger-ui.css"></head>
<body><div id="docs"></div>
<noscript>The interactive explorer needs JavaScript; the raw document is at <a href="/api/openapi.yaml">/api/openapi.yaml</a>.</noscript>
<script src="/api/docs/assets/swagger-ui-bundle.js"></script>
<script>window.ui = SwaggerUIBundle({ url: "/api/openapi.json", dom_id: "#docs", deepLinking: true });</script>
</body></html>`;

/** The API documents and an offline docs UI: its assets are embedded in the binary, never fetched from a CDN. */
export function openApiRoutes(getApp: () => AnyElysia, ctx: AppContext) {
  let doc: OpenApiDocument | null = null;
  let yaml: string | null = null;
  const get = () => (doc ??= buildOpenApi(getApp(), ctx));
  const hide = { detail: { hide: true } };
  return new Elysia({ name: "herald:openapi" })
    .get("/api/openapi.json", () => get(), { detail: { tags: ["system"], summary: "OpenAPI 3.1 document (JSON)" } })
    .get(
      "/api/openapi.yaml",
      () => new Response((yaml ??= YAML.stringify(get(), { aliasDuplicateObjects: false })), { headers: { "content-type": "application/yaml; charset=utf-8" } }),
      { detail: { tags: ["system"], summary: "OpenAPI 3.1 document (YAML)" } },
    )
    .get("/api/docs", () => new Response(DOCS_HTML, { headers: { "content-type": "text/html; charset=utf-8" } }), hide)
    .get("/api/docs/assets/swagger-ui-bundle.js", () => new Response(Bun.file(swaggerBundlePath), { headers: { "content-type": "text/javascript; charset=utf-8", "cache-control": "public, max-age=86400" } }), hide)
    .get("/api/docs/assets/swagger-ui.css", () => new Response(Bun.file(swaggerCssPath), { headers: { "content-type": "text/css; charset=utf-8", "cache-control": "public, max-age=86400" } }), hide);
}
