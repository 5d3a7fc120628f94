import type { DocumentDecoration, TSchema } from "elysia";
import { isOperatorPath } from "../caching/cache-control";
import { publicRateGroup } from "../rate-limit/route-groups";
import { STRICT_TRANSPORT_SECURITY } from "../security-headers";
import { READ_NONCE } from "./headers";
import { includeMetaQuery } from "../envelope";

// What every operation's entry says beyond its own declaration, derived from how the route is served (the HTTP
// core, its guard, its group), so a new route cannot forget it (test/http/openapi-contract.test.ts holds the
// document to what the server answers):
// - `security: []` on an operation without a guard: public, said explicitly;
// - every response declares X-Request-ID and X-Content-Type-Options (the core sets them on every answer), an
//   HTML one also its page policies (Content-Security-Policy, X-Frame-Options, Referrer-Policy);
// - 400 where a parameter or a body is read; 408, 413 and 415 where a body is read; 414 (the core refuses a
//   request line over its bound before routing) and 503 (db_unavailable, draining) on every operation;
// - 429 and the X-RateLimit-* headers on every response of an operation behind a limit (the public per-address
//   limit of src/http/rate-limit/route-groups.ts, the per-key limit of a signed partner route, the mini-app's limits);
// - 304 with its validators where the route answers conditional GETs (`conditionalGet()` in its detail);
// - Location on every redirect;
// - Cache-Control where it is sent: on every answer of an operator route (the core sets it: src/http/caching/cache-control.ts),
//   on every page (HTML), on a conditional GET's 200 and 304, and on the successes of a route that says it sets it
//   (`cached()` in its detail, or in its Elysia instance's `detail` when a hook of the instance sets it);
// - Strict-Transport-Security on every answer, said to be a production server's (the core sends it there on every
//   answer and nowhere else: src/http/security-headers.ts); one document describes both.

// biome-ignore lint/suspicious/noExplicitAny: OpenAPI objects of every shape, read and written by key
type Json = Record<string, any>;
export type Operation = Json & { responses?: Record<string, Json>; parameters?: Json[]; requestBody?: Json; security?: Json[] };

const CONDITIONAL = "x-herald-conditional";

export type Validator = "etag" | "last-modified";

const REQUIRED_HEADERS = "x-herald-required-headers";

/**
 * Spread into a route's detail: request headers it refuses to go without, though its schema lets them be absent
 * (the route answers their absence itself, with a status of its own: 428 for a missing X-Expected-Revision).
 */
export const requiresHeaders = (...names: string[]) => ({ [REQUIRED_HEADERS]: names.map((n) => n.toLowerCase()) });

/** Spread into the detail of a route whose 200 is CSV (by default or with format=csv) beside its JSON schema. */
export const csvTwin = (description = "RFC 4180 CSV with a header row") => ({
  responses: { 200: { description, content: { "text/csv": { schema: { type: "string" as const } } } } },
});

export const PAGES = "x-herald-pages";

/** Spread into the detail of a route that answers a browser's refusal with an HTML page (a short link's 404 and 410). */
export const answersPages = () => ({ [PAGES]: true });

const CREATE_OR_UPDATE = "x-herald-create-or-update";

/**
 * Spread into the detail of a route that creates or, when `by` says so (an `id`, or `update: true`), updates:
 * the document's body becomes a oneOf of the two shapes, the fields a creation needs required in the first.
 */
export const createOrUpdate = (by: "id" | "update", requiredOnCreate: string[]) => ({ [CREATE_OR_UPDATE]: { by, required: requiredOnCreate } });

function createOrUpdateShapes(schema: Json, by: "id" | "update", required: string[]): Json {
  const updating =
    by === "id" ? { required: ["id"], properties: { id: { type: "integer" } } } : { required: ["update"], properties: { update: { const: true } } };
  return {
    ...schema,
    oneOf: [
      { title: "create", description: `Creates: ${required.join(", ")} required`, required, not: updating },
      {
        title: "update",
        description:
          by === "id"
            ? "Updates the one with this id; omitted fields keep their value"
            : "update: true changes the existing one; omitted fields keep their value",
        ...updating,
      },
    ],
  };
}

export const BODY_RULE = "x-herald-body-rule";

/**
 * Spread into the detail of a route whose body obeys a rule across its fields that the route checks after the schema
 * (a mission's event_type against its progress_source): `rule`, a union of object schemas, one per allowed shape,
 * each naming only the fields it constrains. The document's body becomes the route's schema with `anyOf` those shapes
 * (exclusive in fact, but by a field one shape may leave out, which `oneOf` linters cannot see), so a body valid under
 * the document is one the route accepts; the route's own refusals keep their codes and words.
 */
export const bodyRule = (rule: TSchema & { anyOf: TSchema[] }) => ({ [BODY_RULE]: rule });

export const BODY_CHECKS = "x-herald-body-checks";

/**
 * Spread into the detail of a route that checks some body fields itself, after the schema (a time's or an amount's
 * form, a non-empty object): `fields`, field name → the JSON Schema keywords that state the check (`pattern`,
 * `minProperties`), each a condition every body the route accepts meets. The document's property carries them, so a
 * body valid under the document is one the route accepts; the route's schema is unchanged, so its refusals keep their
 * codes and words (`body.<field>` in details).
 */
export const bodyChecks = (fields: Record<string, { pattern?: string; minProperties?: number; description?: string }>) => ({ [BODY_CHECKS]: fields });

const ROUTE_HEADERS = "x-herald-response-headers";

/**
 * Spread into a route's detail: the headers it sets itself (name → description, or the description and the only
 * values it takes), declared on its successful answers, or with `{ refusals: true }` on every answer (a header set
 * before the route can refuse).
 */
export const sendsHeaders = (headers: Record<string, string | { description: string; values: readonly string[] }>, opts: { refusals?: boolean } = {}) => ({
  [ROUTE_HEADERS]: {
    refusals: opts.refusals ?? false,
    headers: Object.fromEntries(
      Object.entries(headers).map(([name, h]) =>
        typeof h === "string"
          ? [name, { description: h, schema: { type: "string" } }]
          : [name, { description: h.description, schema: { type: "string", enum: h.values } }],
      ),
    ),
  },
});

const DOWNLOAD = "x-herald-download";

/**
 * Spread into a route's detail when its success names a file (Content-Disposition) though its media type is not a
 * file's own: a JSON export, a chart, a draft. A CSV, a ZIP, a gzip archive or a SQLite file always does (FILE_TYPES).
 */
export const downloads = () => ({ [DOWNLOAD]: true });

const CACHE_CONTROL = "x-herald-cache-control";

/**
 * Spread into the detail of a route whose successful answers carry a Cache-Control it sets itself (its value, for
 * readers): a public read, a feed, a badge. Operator routes, pages and conditional GETs need none (derived above).
 */
export const cached = (value: string) => ({ [CACHE_CONTROL]: value });

/**
 * The same for every route of an Elysia instance whose hook sets it on every success (`new Elysia({ detail:
 * cachedRoutes(value) })`; Elysia merges an instance's detail into each route's, a route's own `cached()` wins).
 */
export const cachedRoutes = (value: string): DocumentDecoration => cached(value) as DocumentDecoration;

/** Media types whose every success is a file with a name (Content-Disposition), wherever they are served. */
const FILE_TYPES = /^(text\/csv|application\/(zip|gzip|vnd\.sqlite3))\b/i;

/**
 * Spread into a GET route's detail when the route answers If-None-Match (and If-Modified-Since, with
 * "last-modified") with 304: the document then lists 304, the request headers and the validators it sends.
 */
export const conditionalGet = (...validators: Validator[]) => ({ [CONDITIONAL]: validators.length ? validators : ["etag"] });

const ERROR_REF = "#/components/schemas/Error";
const ref = (name: string) => ({ $ref: `#/components/headers/${name}` });

/** A header's entry in components.headers: its description and value's schema (text unless said). */
const header = (description: string, schema: Json = { type: "string" }) => ({ description, schema });
const count = { type: "integer", minimum: 0 };

/** components.headers: each header Herald sends, described once. */
export const HEADERS: Record<string, Json> = {
  XRequestId: header("This request's id (also in error bodies' request_id and in the request log); quote it to operators"),
  XContentTypeOptions: header("Always nosniff: the body is only what Content-Type says", { type: "string", const: "nosniff" }),
  ContentSecurityPolicy: header("The page's content security policy (no script or style from elsewhere)"),
  XFrameOptions: header(
    "DENY: the page is never framed (absent on the players' mini-app, /app, which only Telegram's web client may frame: its CSP's frame-ancestors)",
  ),
  ReferrerPolicy: header("What the browser sends as Referer from this page"),
  XRateLimitLimit: header("Requests allowed in the window", count),
  XRateLimitRemaining: header("Requests left in the window", count),
  XRateLimitReset: header("Unix seconds when the window resets", count),
  RetryAfter: header("Seconds to wait before trying again", count),
  ETag: header("Strong validator of this representation; send it back as If-None-Match"),
  LastModified: header("When the data behind this answer last changed; send it back as If-Modified-Since"),
  Location: header("Where the redirect goes"),
  IdempotentReplayed: header("true when this is the stored answer of an earlier request with the same Idempotency-Key", { type: "string", enum: ["true"] }),
  ContentDisposition: header("The file name to save the body under"),
  SetCookie: header("The operator session cookie (HttpOnly, SameSite=Strict; Secure over https)"),
  CacheControl: header(
    "How a cache may keep this answer. Every operator answer (/admin…, /api/messenger/admin/…, /metrics), refusals included: `private, no-store` " +
      "(`private, no-cache` where it carries validators); a page, a document or a public read: its own policy (`public, max-age=N`, `no-cache`, `no-store`)",
  ),
  StrictTransportSecurity: header(
    "Only from a production server (NODE_ENV=production, whose PUBLIC_BASE_URL is https), and then on every answer: a browser that reached Herald " +
      "over https uses only https for it for a year (a browser ignores it on a plain http connection). Never sent outside production",
    { type: "string", const: STRICT_TRANSPORT_SECURITY },
  ),
};

/** The headers of every answer Herald makes (HSTS: a production server's only). */
const COMMON = {
  "X-Request-ID": ref("XRequestId"),
  "X-Content-Type-Options": ref("XContentTypeOptions"),
  "Strict-Transport-Security": ref("StrictTransportSecurity"),
};
/** Cache-Control as a route declares it: the shared description, with the route's own value when it names one. */
const cacheControl = (value?: string) => (value ? { ...ref("CacheControl"), description: `${value} (set by this route)` } : ref("CacheControl"));
const PAGE = { "Content-Security-Policy": ref("ContentSecurityPolicy"), "X-Frame-Options": ref("XFrameOptions"), "Referrer-Policy": ref("ReferrerPolicy") };
export const RATE = {
  "X-RateLimit-Limit": ref("XRateLimitLimit"),
  "X-RateLimit-Remaining": ref("XRateLimitRemaining"),
  "X-RateLimit-Reset": ref("XRateLimitReset"),
};
const VALIDATORS: Record<Validator, [string, Json]> = { etag: ["ETag", ref("ETag")], "last-modified": ["Last-Modified", ref("LastModified")] };
/** The request header each validator is sent back in, in the order the document lists them. */
const CONDITIONAL_HEADERS: Array<[Validator, string, string]> = [
  ["etag", "If-None-Match", "An ETag of an earlier answer: 304 when it still matches"],
  ["last-modified", "If-Modified-Since", "Last-Modified of an earlier answer (If-None-Match wins when both are sent)"],
];

/** A build-time mark of a route's detail, removed from the operation as it is read. */
export function takeMark<T>(op: Operation, key: string): T | undefined {
  const mark = op[key] as T | undefined;
  delete op[key];
  return mark;
}

/** Whether `p` is the optional X-Partner-Nonce of a signed read (src/http/openapi/headers.ts READ_NONCE). */
const isReadNonce = (p: Json) => p.in === "header" && String(p.name).toLowerCase() === "x-partner-nonce" && p.description === READ_NONCE;
/** A signed read (no Idempotency-Key): its nonce is optional. */
const signedRead = (op: Operation) => (op.parameters ?? []).some(isReadNonce);
const READ_REPLAY =
  "replay_detected: the X-Partner-Nonce sent was used before — sent again by you, or by a load balancer that resent this read after " +
  "the instance serving it died (deploy/haproxy.cfg resends GET and HEAD). Nothing was done: sign it again with a new nonce and send it again";

const INCLUDE_META = { in: "query", name: "include_meta", required: false, description: includeMetaQuery.include_meta.description, schema: { type: "string" } };

const errorEntry = (status: number) => ({ description: `HTTP ${status}`, content: { "application/json": { schema: { $ref: ERROR_REF } } } });
const credentialNames = (op: Operation) => new Set((op.security ?? []).flatMap((s) => Object.keys(s)));

/** Adds what an operation's serving implies (see the file's head); runs before its error responses are typed. */
export function completeOperation(path: string, method: string, op: Operation): void {
  op.security ??= [];
  // A guard's macro and the route may both name a tag (Elysia appends one list to the other).
  if (Array.isArray(op.tags)) op.tags = [...new Set(op.tags)];
  const shapes = takeMark<{ by: "id" | "update"; required: string[] }>(op, CREATE_OR_UPDATE);
  if (shapes)
    for (const media of Object.values(op.requestBody?.content ?? {}) as Json[]) media.schema = createOrUpdateShapes(media.schema, shapes.by, shapes.required);
  const download = takeMark(op, DOWNLOAD) === true;
  const cacheValue = takeMark<string>(op, CACHE_CONTROL);
  const operator = isOperatorPath(path);
  const required = takeMark<string[]>(op, REQUIRED_HEADERS);
  for (const p of op.parameters ?? []) if (p.in === "header" && required?.includes(String(p.name).toLowerCase())) p.required = true;
  const responses = (op.responses ??= {});
  const add = (status: number) => {
    responses[String(status)] ??= errorEntry(status);
  };
  const credentials = credentialNames(op);
  // The core reads and checks a body on every method that may carry one, whether the route takes one or not.
  if (op.requestBody) for (const s of [400, 408, 413, 415]) add(s);
  else if (["post", "put", "patch", "delete"].includes(method)) for (const s of [400, 413, 415]) add(s);
  // A signed read's optional nonce is not one of them: a malformed one is the signature's 401, a used one 409.
  if ((op.parameters ?? []).some((p) => p.in === "query" || p.in === "path" || (p.in === "header" && !isReadNonce(p)))) add(400);
  // include_meta works on every route whose answer is a JSON object (the core adds the block), so a route that declares
  // no query of its own still takes it; the API documents themselves are served as they are, without meta.
  const answersJson = ["200", "201"].some((s) => responses[s]?.content?.["application/json"] !== undefined) && !path.startsWith("/api/openapi");
  if (answersJson && !(op.parameters ?? []).some((p) => p.in === "query")) (op.parameters ??= []).push(INCLUDE_META);
  // 413 on any method too: the core refuses a declared body over its limit before routing, as it does a long request line.
  for (const s of [413, 414, 503]) add(s);
  // 64 KiB: --max-http-header-size under herald and npm start. Bun closes the connection after it.
  responses["431"] ??= { description: "Request header fields too large (Bun's answer before any Herald code runs: over 198 fields or 64 KiB); no body" };
  const limited = publicRateGroup(path) !== null || credentials.has("PartnerKey") || credentials.has("MiniAppInitData");
  if (limited) add(429);
  if (credentials.has("PartnerKey") || credentials.has("MiniAppInitData") || credentials.has("BotWebhookSecret")) add(401);
  if (credentials.has("AdminBearer") || credentials.has("AdminSession")) add(403);
  // A signed request whose nonce was seen before is 409 replay_detected, a read as well as a write; a read says so
  // beside the shared Conflict response (a read's nonce is optional: docs/partner-auth.md §11).
  if (credentials.has("PartnerKey")) responses["409"] ??= signedRead(op) ? { ...errorEntry(409), description: READ_REPLAY } : errorEntry(409);
  // An operator page refuses what it cannot show with the page and the message, a missing one too.
  if (credentials.has("AdminSession") && method === "get") add(404);
  const validators = takeMark<Validator[]>(op, CONDITIONAL);
  if (validators && method === "get") {
    const sent = Object.fromEntries(validators.map((v) => VALIDATORS[v]));
    responses["304"] ??= { description: "Not modified: the validator sent matches; no body" };
    responses["304"].headers = { ...sent, ...responses["304"].headers };
    if (responses["200"]) responses["200"].headers = { ...sent, ...responses["200"].headers };
    const params = (op.parameters ??= []);
    for (const [validator, name, description] of CONDITIONAL_HEADERS)
      if (validators.includes(validator)) params.push({ in: "header", name, required: false, description, schema: { type: "string" } });
  }
  // An Idempotency-Key whose replay is a success (the operators' status routes: 200 with Idempotent-Replayed); a
  // signed partner mutation's replay is its 409 (ConflictOrReplay, errors.ts), never a success.
  const replaysSuccess =
    !credentials.has("PartnerKey") && (op.parameters ?? []).some((p) => p.in === "header" && String(p.name).toLowerCase() === "idempotency-key");
  const session = path.startsWith("/admin/sign-") || credentials.has("AdminSession");
  for (const [status, res] of Object.entries(responses)) {
    // 431 is Bun's own answer, sent before any Herald code runs: none of Herald's headers.
    if (typeof res.$ref === "string" || status === "431") continue;
    // An operator form's success without a declared body is a page (a result shown once, like a new secret).
    if (session && /^2/.test(status) && !Object.keys(res.content ?? {}).length) res.content = { "text/html": { schema: { type: "string" } } };
    const types = Object.keys(res.content ?? {});
    const html = types.some((m) => m.startsWith("text/html"));
    // Exactly where a name is sent: the contract check reports a declared Content-Disposition no answer carried.
    const file = download || types.some((m) => FILE_TYPES.test(m));
    const cache =
      operator || html || (validators !== undefined && (status === "200" || status === "304")) || (cacheValue !== undefined && /^[23]/.test(status));
    res.headers = {
      ...COMMON,
      ...(html && PAGE),
      ...(cache && { "Cache-Control": cacheControl(operator ? undefined : cacheValue) }),
      ...(limited && RATE),
      // A redirect names where it goes; 304 (not modified) is not one.
      ...(/^30[12378]$/.test(status) && { Location: ref("Location") }),
      ...(replaysSuccess && Number(status) < 300 && { "Idempotent-Replayed": ref("IdempotentReplayed") }),
      ...(file && status === "200" && { "Content-Disposition": ref("ContentDisposition") }),
      ...(session && { "Set-Cookie": ref("SetCookie") }),
      ...res.headers,
    };
  }
}

/**
 * Which shared error response an operation's refusal points at (errors.ts): the plain one, a page's (HTML or JSON),
 * an operator route's (with Cache-Control), or a signed mutation's 409 (a conflict, or the replay of its key).
 */
export type ResponseKind = "plain" | "page" | "operator" | "replay";

/**
 * The shared error responses' headers (components.responses): every answer's, the limits', Retry-After on 429 and
 * 503, Cache-Control where the refusal carries it (an operator route's, a page's) and Idempotent-Replayed on a replay.
 */
export function errorResponseHeaders(status: number | null, kind: ResponseKind): Json {
  const page = kind === "page";
  return {
    ...COMMON,
    ...(page && { ...PAGE, "Set-Cookie": ref("SetCookie") }),
    // Operator refusals carry the core's `private, no-store`; a page's refusal its page's policy (no-store).
    ...((page || kind === "operator") && { "Cache-Control": ref("CacheControl") }),
    // Only the replay of a completed signed mutation (409 idempotency_replay) says it is one.
    ...(kind === "replay" && { "Idempotent-Replayed": ref("IdempotentReplayed") }),
    // A refusal of a limited route carries the limit's headers too; on 429 with Retry-After.
    ...RATE,
    // On 429 and 503 when to try again; on a 409 of a cooldown (a spin too soon) or of a request still running, when
    // it ends. No other refusal sends it.
    ...((status === null || status === 409 || status === 429 || status === 503) && { "Retry-After": ref("RetryAfter") }),
  };
}

/**
 * The headers routes declared with `sendsHeaders()`, on each of their answers: a shared error response the route
 * points at becomes its own copy with them (components.responses are shared by every route).
 */
export function addRouteHeaders(op: Operation, shared: Record<string, Json>): void {
  const mark = takeMark<{ refusals: boolean; headers: Json }>(op, ROUTE_HEADERS);
  if (!mark) return;
  for (const [status, res] of Object.entries(op.responses ?? {})) {
    // Bun's own 431 carries none of the route's headers.
    if (status === "default" || status === "431" || (!mark.refusals && Number(status) >= 400)) continue;
    const base = typeof res.$ref === "string" ? shared[String(res.$ref).split("/").pop()!] : res;
    if (base) op.responses![status] = { ...base, headers: { ...base.headers, ...mark.headers } };
  }
}
