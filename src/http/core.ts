import { Elysia } from "elysia";
import type { Server } from "bun";
import type { AppContext } from "../context";
import { errorFields } from "../log";
import { AppError, ERROR_CATALOG, type ErrorCode, type ProblemDetail } from "./errors";
import { isTruthyFlag } from "./envelope";
import { isOperatorPath, OPERATOR_NO_STORE } from "./cache-control";
import { rateLimitHeaders } from "./rate-limit";
import { requestIdFor } from "./request-id";
import { publicRateGroup } from "./route-groups";
import { describeValidationErrors, type RequestPart } from "./validation";
import { SerializationFailure, StoreUnavailable, UnstorableText } from "../db/port";
import { contentTypeProblem, parseJsonBytes } from "./json-body";
import { parseFormBytes } from "./form-body";
import { describeParamProblems } from "./params";
import { CompressedCache, compressedAnswer } from "./compression";
import { isSignedRoute, onEveryRoute, type ScopedRoute, scopedHook } from "./hook-scope";
import type { TSchema } from "@sinclair/typebox";
import type { TypeCheck } from "@sinclair/typebox/compiler";
import type { RouteIndex } from "./route-index";

/** What Herald knows about one request while it runs; keyed by the Request object, dropped with it. */
export interface RequestState {
  readonly id: string;
  readonly startedNs: number;
  readonly ip: string;
  /** Exact request body bytes, kept for signature verification. */
  rawBody: Uint8Array | null;
  partnerKeyId: string | null;
  status: number | null;
  errorCode: string | null;
  headers: Record<string, string>;
  /**
   * A malformed JSON body is reported after authentication, not before: a request with a bad signature gets 401
   * whatever its body looks like, so the body is never parsed into an answer for an unauthenticated caller.
   */
  parseError: AppError | null;
  /** What the partner guard proved about this request (src/auth/partner-plugin.ts); null before or without it. */
  partner: object | null;
}

export class RequestStates {
  private readonly map = new WeakMap<Request, RequestState>();
  get(request: Request): RequestState | undefined {
    return this.map.get(request);
  }
  set(request: Request, state: RequestState): void {
    this.map.set(request, state);
  }
}

export function clientIp(ctx: AppContext, request: Request, server: Server<unknown> | null): string {
  if (ctx.config.trustProxy) {
    // The RIGHTMOST entry is the one our proxy appended; everything left of it is whatever the client sent.
    const xff = request.headers.get("x-forwarded-for");
    const last = xff?.split(",").pop()?.trim();
    if (last) return last;
  }
  return server?.requestIP(request)?.address ?? "127.0.0.1";
}

/**
 * A request's state as it arrives: its id, start time and client address. The address is read when first asked
 * for: `server.requestIP` costs about 5 µs of a health probe's ~25 (bench/README.md, "profile"), and a probe never
 * asks (no rate limit, no request-log row). A request that will be logged reads it at once (`ipNow`), while its
 * connection is certainly open.
 */
class Incoming implements RequestState {
  readonly id: string;
  readonly startedNs = Bun.nanoseconds();
  rawBody: Uint8Array | null = null;
  partnerKeyId: string | null = null;
  status: number | null = null;
  errorCode: string | null = null;
  headers: Record<string, string> = {};
  parseError: AppError | null = null;
  partner: object | null = null;
  private address: string | null = null;

  constructor(
    private readonly ctx: AppContext,
    private readonly request: Request,
    private readonly server: Server<unknown> | null,
    ipNow: boolean,
  ) {
    this.id = requestIdFor(request.headers.get("x-request-id"), ctx.rng);
    if (ipNow) this.address = clientIp(ctx, request, server);
  }

  get ip(): string {
    this.address ??= clientIp(this.ctx, this.request, this.server);
    return this.address;
  }
}

export function newRequestState(ctx: AppContext, request: Request, server: Server<unknown> | null, ipNow = true): RequestState {
  return new Incoming(ctx, request, server, ipNow);
}

/**
 * The path and the length of the request target (path and query) of a URL as Bun hands it to a handler: already
 * normalised (dot segments resolved, percent-encoded), so slicing the string finds what `new URL` would, without
 * building one for every request (about 1 µs, bench/README.md "profile").
 */
export function targetOf(url: string): { path: string; targetLength: number } {
  const start = url.indexOf("/", url.indexOf("//") + 2);
  if (start === -1) return { path: "/", targetLength: 1 };
  let end = url.indexOf("?", start);
  if (end === -1) end = url.indexOf("#", start);
  return { path: end === -1 ? url.slice(start) : url.slice(start, end), targetLength: url.length - start };
}

export function errorResponse(err: AppError, state: RequestState | undefined): Response {
  const body: Record<string, unknown> = {
    success: false,
    error: err.code,
    message: err.message,
    request_id: state?.id ?? "unknown",
    ...err.extra,
  };
  if (err.details !== undefined) body.details = err.details;
  const headers: Record<string, string> = { "content-type": "application/json", ...state?.headers, ...err.headers };
  if (state) headers["x-request-id"] = state.id;
  if (state) {
    state.status = err.status;
    state.errorCode = err.code;
  }
  return new Response(JSON.stringify(body), { status: err.status, headers });
}

async function readBodyBytes(request: Request, maxBytes: number): Promise<Uint8Array> {
  // With a Content-Length (already checked against the limit in onRequest, and enforced by Bun) the body is read
  // in one go; without one (chunked) it is counted while read, so it cannot slip past the limit.
  if (request.headers.get("content-length") !== null || !request.body) {
    const raw = new Uint8Array(await request.arrayBuffer());
    if (raw.byteLength > maxBytes) throw tooLarge(maxBytes);
    return raw;
  }
  const chunks: Uint8Array[] = [];
  let size = 0;
  for await (const chunk of request.body as unknown as AsyncIterable<Uint8Array>) {
    size += chunk.byteLength;
    if (size > maxBytes) throw tooLarge(maxBytes);
    chunks.push(chunk);
  }
  return Buffer.concat(chunks);
}

/** The first problems of a body against its route's schema, as `[{ field, problem }]`; bounded in count. */
function bodyProblems(check: TypeCheck<TSchema>, value: unknown): ProblemDetail[] {
  const errors = [];
  for (const e of check.Errors(value)) {
    errors.push(e);
    if (errors.length >= 20) break;
  }
  return describeValidationErrors("body", errors);
}

/**
 * Health probes arrive every few seconds from load balancers and orchestrators; recording each in request_log
 * would bury partner traffic and cost a write per probe. They still count in /metrics.
 */
const PROBE_ROUTES = new Set(["/healthz", "/readyz", "/metrics"]);
const isProbe = (route: ScopedRoute) => PROBE_ROUTES.has(route.path);
const notProbe = (route: ScopedRoute) => !isProbe(route);

/**
 * The longest path + query Herald reads. Bun refuses a request whose header section (request line included)
 * exceeds its --max-http-header-size with a bare 431 before any code runs; `herald` and `npm start` raise that
 * to 64 KiB (package.json, the build's --compile-exec-argv) so that anything between this limit and 64 KiB
 * gets Herald's JSON 414 instead. Past 64 KiB the bare 431 remains (docs/http-conventions.md).
 */
export const MAX_TARGET_CHARS = 8192;

/**
 * The routes whose requests can carry a body. Elysia never parses a GET or HEAD body, but a parse hook on a route
 * still compiles its handler as async (pinned elysia 1.4.30: any parse hook makes it "maybe async"), which cost the
 * GET routes — /healthz among them — a promise per request; so the body hooks are kept off GET and HEAD routes.
 */
const takesBody = (route: ScopedRoute) => route.method !== "GET" && route.method !== "HEAD";

const tooLarge = (maxBytes: number) =>
  new AppError("payload_too_large", `Request body exceeds the ${maxBytes}-byte limit`, { details: { max_bytes: maxBytes } });

type MapResponseHook = (c: { request: Request; response: unknown; set: { status?: unknown } }) => Response | Promise<Response> | undefined;
const COMPRESSION_HOOKS = new WeakSet<MapResponseHook>();

/** Whether a route's lifecycle includes the compression hook. */
export const compressesAnswers = (route: ScopedRoute) =>
  ((route.hooks.mapResponse ?? []) as Array<{ fn: unknown }>).some((h) => COMPRESSION_HOOKS.has(h.fn as MapResponseHook));

/**
 * The conventions every route gets: request id, body guardrail, JSON parsing, public rate limits, the error
 * envelope, include_meta, and the request log / metrics. Registered first so its onError covers every route.
 */
/**
 * `globalAfterHandle`: a domain's global afterHandle hooks (the export-usage recorder), registered here so they
 * precede every route; mark them with `scopedHook` (src/http/hook-scope.ts) to keep them off other routes.
 */
export function httpCore(ctx: AppContext, states: RequestStates, routes: RouteIndex, globalAfterHandle: readonly object[] = []) {
  const { config } = ctx;
  const compressed = new CompressedCache();

  /** A body under the policy of src/http/json-body.ts, then checked against its route's schema. */
  const parseBody = (raw: Uint8Array, request: Request, route: string): { value: unknown; error: AppError | null } => {
    // The one exception to JSON: routes that declare a form body (the operator sign-in forms; form-body.ts).
    const form = routes.takesForm(request.method, route);
    // An HTML form with no fields posts an empty body: that is the empty form, so a missing field is judged by
    // the route (a missing csrf_token is the CSRF refusal, 403), not refused as an absent body.
    if (raw.byteLength === 0) return { value: form ? {} : undefined, error: null };
    const parsed = form ? parseFormBytes(raw, request.headers.get("content-type")) : null;
    if (parsed?.error) return parsed;
    if (!parsed) {
      const typeError = contentTypeProblem(request.headers.get("content-type"));
      if (typeError) return { value: undefined, error: typeError };
    }
    return checkBody(request, route, parsed ?? parseJsonBytes(raw));
  };

  const checkBody = (request: Request, route: string, parsed: { value: unknown; error: AppError | null }): { value: unknown; error: AppError | null } => {
    if (parsed.error || parsed.value === undefined) return parsed;
    const check = routes.bodyCheckOf(request.method, route);
    if (!check) {
      // A route without a body schema takes no body; `{}` is tolerated (some clients always send one).
      const empty = typeof parsed.value === "object" && parsed.value !== null && !Array.isArray(parsed.value) && Object.keys(parsed.value).length === 0;
      return empty
        ? parsed
        : {
            value: undefined,
            error: new AppError("invalid_payload", `${request.method} ${route} takes no request body`, {
              details: [{ field: "body", problem: "must be empty" }],
            }),
          };
    }
    if (check.Check(parsed.value)) return parsed;
    const details = bodyProblems(check, parsed.value);
    const summary = details.map((d) => `${d.field} ${d.problem}`).join("; ");
    return { value: undefined, error: new AppError("invalid_payload", `Invalid request body: ${summary}`, { details }) };
  };

  // Only clients that accept a compressed answer go past the first line; others get Elysia's own serialisation.
  // The hook is off the signed partner routes (small JSON on the hottest paths; the partners' SDK sends
  // Accept-Encoding) and the health probes altogether (src/http/hook-scope.ts).
  const compressionHook: MapResponseHook = scopedHook(
    function compressionMapped({ request, response, set }) {
      const acceptEncoding = request.headers.get("accept-encoding");
      if (!acceptEncoding) return;
      return compressedAnswer(response, acceptEncoding, typeof set.status === "number" ? set.status : 200, compressed);
    },
    (route) => !isSignedRoute(route) && route.path !== "/healthz" && route.path !== "/readyz",
  );
  COMPRESSION_HOOKS.add(compressionHook);

  /**
   * A 5xx AppError is the server's fault: the log gets its code, message, `internal` (what the caller must not
   * see) and cause, under the request id the caller was told to quote. 500 at level error; 502–504 (a
   * dependency or state the operator must fix: database, master key, backups) at warn. 4xx are the caller's
   * and are counted in the request log, not logged here.
   */
  const logged = (error: AppError, state: RequestState | undefined, path: string): AppError => {
    if (error.status < 500) return error;
    const fields = {
      request_id: state?.id,
      path,
      error_code: error.code,
      status: error.status,
      message: error.message,
      ...(error.internal === undefined ? {} : { internal: error.internal }),
      ...(error.cause === undefined ? {} : { cause: errorFields(error.cause).error }),
    };
    if (error.status === 500) ctx.log.error("request failed", fields);
    else ctx.log.warn("request failed", fields);
    return error;
  };

  /** What every request gets before routing; a Response refuses it (413, 414, 429). */
  const started = (request: Request, server: Server<unknown> | null, headers: Record<string, string | number>): Response | undefined => {
    const { path, targetLength } = targetOf(request.url);
    // A probe (PROBE_ROUTES) has no request-log row and no rate limit: its client address is never read.
    const state = newRequestState(ctx, request, server, !PROBE_ROUTES.has(path));
    states.set(request, state);
    headers["x-request-id"] = state.id;
    // Operator answers are never stored (src/http/cache-control.ts): the default for every /admin answer, errors
    // included (the 413 below too); a route with validators sets its own. One header, no allocation beyond it.
    if (isOperatorPath(path)) headers["cache-control"] = state.headers["cache-control"] = OPERATOR_NO_STORE;
    const length = request.headers.get("content-length");
    if (length && Number(length) > config.maxBodyBytes) return errorResponse(tooLarge(config.maxBodyBytes), state);
    if (targetLength > MAX_TARGET_CHARS) {
      return errorResponse(new AppError("uri_too_long", `The request target (path and query) is longer than ${MAX_TARGET_CHARS} characters`), state);
    }
    const group = publicRateGroup(path);
    if (group && config.rateLimits.publicPerMin > 0) {
      const decision = ctx.rateLimiter.hit(group, state.ip, config.rateLimits.publicPerMin);
      Object.assign(state.headers, rateLimitHeaders(decision));
      Object.assign(headers, state.headers);
      if (!decision.allowed) {
        return errorResponse(
          new AppError("rate_limited", `Rate limit of ${decision.limit} requests per minute per IP exceeded; retry after ${decision.retryAfterSeconds} s`),
          state,
        );
      }
    }
    return undefined;
  };

  /** What the error hook reads of Elysia's context. */
  interface ErrorHookContext {
    code: string | number;
    error: unknown;
    request: Request;
    path: string;
    route: string;
    params?: unknown;
  }
  /** The answer to anything thrown while serving a request: a catalog error in the JSON envelope, never a stack. */
  const refusal = ({ code, error, request, path, route, params }: ErrorHookContext): Response => {
    const state = states.get(request);
    if (error instanceof AppError) return errorResponse(logged(error, state, path), state);
    // Elysia wraps anything thrown by a parser in ParseError; our own parser throws AppErrors.
    const cause = (error as { cause?: unknown }).cause;
    if (code === "PARSE" && cause instanceof AppError) return errorResponse(logged(cause, state, path), state);
    if (code === "VALIDATION" && state?.parseError) return errorResponse(state.parseError, state);
    if (code === "VALIDATION") {
      const v = error as unknown as { type: RequestPart; all: Parameters<typeof describeValidationErrors>[1] };
      if (v.type === "response") {
        ctx.log.error("response failed its schema", { request_id: state?.id, path, errors: Array.isArray(v.all) ? v.all.slice(0, 5) : [] });
        return errorResponse(new AppError("server_error", "The server produced an invalid response; quote the request_id"), state);
      }
      // Elysia reports a refused coercion (a query "1.5" for an integer) as type "property" without the
      // parameter's name; the route's own schemas name it, with the allowed range.
      const named =
        v.type === "body"
          ? []
          : describeParamProblems(
              routes.schemasOf(request.method, route),
              new URL(request.url).searchParams,
              (params ?? {}) as Record<string, string | undefined>,
            );
      // A query value that fails while being decoded (an array item past its schema) arrives as TypeBox's
      // decode error: no `type`, no `all`, one inner ValueError. It is described like the others, never a 500.
      const inner = (error as unknown as { error?: { path?: unknown } }).error;
      const all = Array.isArray(v.all)
        ? v.all
        : inner && typeof inner.path === "string"
          ? [inner as Parameters<typeof describeValidationErrors>[1][number]]
          : [];
      const part: RequestPart = v.type === "body" ? "body" : v.type === "property" || !v.type ? "query" : v.type;
      const described = named.length ? named : describeValidationErrors(part, all);
      const details = described.length ? described : [{ field: part, problem: "is not valid for this route" }];
      const errCode: ErrorCode = part === "body" ? "invalid_payload" : "invalid_query";
      const summary = details.map((d) => `${d.field} ${d.problem}`).join("; ");
      return errorResponse(new AppError(errCode, `Invalid ${part === "body" ? "request body" : "request parameters"}: ${summary}`, { details }), state);
    }
    if (code === "PARSE") {
      return errorResponse(
        new AppError("invalid_payload", "Request body could not be parsed as JSON", { details: [{ field: "body", problem: "must be valid JSON" }] }),
        state,
      );
    }
    if (code === "NOT_FOUND") {
      const url = new URL(request.url);
      const allowed = routes.methodsFor(url.pathname);
      if (allowed.length && !allowed.includes(request.method)) {
        return errorResponse(
          new AppError("method_not_allowed", `${request.method} is not allowed on ${url.pathname}; use ${allowed.join(", ")}`, {
            headers: { allow: allowed.join(", ") },
          }),
          state,
        );
      }
      return errorResponse(new AppError("not_found", `No route ${request.method} ${url.pathname}; see /api/docs`), state);
    }
    // A text value held U+0000, which PostgreSQL cannot store (SQLite can): the client's input, so a 400 naming
    // where it was (a %00 in the request target, else the body), never a 500.
    if (error instanceof UnstorableText) {
      const inTarget = /%00/i.test(request.url);
      const field = inTarget ? "query" : "body";
      return errorResponse(
        new AppError(
          inTarget ? "invalid_query" : "invalid_payload",
          `Invalid ${inTarget ? "request parameters" : "request body"}: a text value contains U+0000 (NUL)`,
          {
            details: [{ field, problem: "contains U+0000 (NUL), which Herald cannot store" }],
            cause: error,
          },
        ),
        state,
      );
    }
    // The database did not answer (a lost connection, a server shutting down) or a transaction lost a race it
    // cannot win by waiting: a 503 the client retries, never a 500 (DESIGN.md §8a).
    if (error instanceof StoreUnavailable || error instanceof SerializationFailure) {
      ctx.log.warn("database unavailable", { request_id: state?.id, path, ...errorFields(error) });
      return errorResponse(
        new AppError("db_unavailable", "The database did not answer or was busy; retry with backoff", { headers: { "retry-after": "2" }, cause: error }),
        state,
      );
    }
    ctx.log.error("unhandled error", { request_id: state?.id, path, code: String(code), ...errorFields(error) });
    return errorResponse(new AppError("server_error", "Unexpected server error; quote the request_id when reporting it"), state);
  };

  const core = new Elysia({ name: "herald:http-core" })
    .onRequest(
      // The hook only calls `started`: Elysia decides from a hook's source text whether to await it (pinned elysia
      // 1.4.30 reads "return f(" as async), and an awaited onRequest made every request's handler a promise.
      // Nor does it take `server` from the context (Elysia would define it on every request): ctx.server is the same.
      onEveryRoute(function requestStarted({ request, set }) {
        const early = started(request, ctx.server ?? null, set.headers);
        if (early) return early;
      }, "every request gets its id, client address and public rate limit, and the size guards, before routing"),
    )
    .onParse(
      { as: "global" },
      scopedHook(async function bodyParsed({ request, route }) {
        const state = states.get(request);
        const raw = await readBodyBytes(request, config.maxBodyBytes);
        if (state) state.rawBody = raw;
        const { value, error } = parseBody(raw, request, route);
        if (!error) return value;
        // Problems are kept on the request state and reported after authentication (in validation or
        // beforeHandle): a request with a bad signature gets 401 whatever its body looks like. The placeholder
        // `{}` keeps Elysia's own parser and validator away from the bytes: its validation error stringifies the
        // value it refuses, which for a hostile body is the denial of service this policy exists to stop.
        if (!state) throw error;
        state.parseError = error;
        return {};
      }, takesBody),
    )
    .onBeforeHandle(
      { as: "global" },
      scopedHook(function parseErrorReported({ request }) {
        // Routes without a body schema: validation did not catch the malformed body, so report it here.
        const parseError = states.get(request)?.parseError;
        if (parseError) throw parseError;
      }, takesBody),
    )
    .onError(
      { as: "global" },
      // Destructured, never taken whole: Elysia reads from a hook's source which parts of the context it uses, and a
      // hook that takes the whole context makes every route parse the headers, query and cookies it never reads.
      onEveryRoute(function errorAnswered({ code, error, request, path, route, params }) {
        const answer = refusal({ code, error, request, path, route, params });
        // A refused probe: counted here, since its after-handle hook (probeCounted) does not run.
        if (PROBE_ROUTES.has(route)) {
          const state = states.get(request);
          ctx.metrics.observeRequest(request.method, route, answer.status, state ? (Bun.nanoseconds() - state.startedNs) / 1e9 : 0);
        }
        return answer;
      }, "every refusal and failure answers in the one JSON envelope"),
    )
    .onAfterHandle(
      { as: "global" },
      onEveryRoute(function includeMetaAdded({ request, response }) {
        if (!response || typeof response !== "object" || response instanceof Response || Array.isArray(response)) return;
        const url = request.url;
        const q = url.indexOf("include_meta=");
        if (q === -1) return;
        const flag = new URL(url).searchParams.get("include_meta");
        if (!isTruthyFlag(flag)) return;
        const state = states.get(request);
        return { ...(response as Record<string, unknown>), meta: { request_id: state?.id ?? "unknown", generated_at_utc: ctx.clock.now().toISOString() } };
      }, "include_meta=1 works on every route (DESIGN.md §2)"),
    )
    .mapResponse({ as: "global" }, compressionHook)
    .onAfterResponse(
      { as: "global" },
      scopedHook(function requestFinished({ request, route, set, responseValue }) {
        const state = states.get(request);
        if (!state) return;
        const status = state.status ?? (responseValue instanceof Response ? responseValue.status : typeof set.status === "number" ? set.status : 200);
        const latencyUs = Math.round((Bun.nanoseconds() - state.startedNs) / 1000);
        const routeName = route || "(unmatched)";
        ctx.metrics.observeRequest(request.method, routeName, status, latencyUs / 1e6);
        ctx.requestLog.record({
          at: ctx.clock.now().toISOString(),
          method: request.method,
          route: routeName,
          status,
          latencyUs,
          partnerKeyId: state.partnerKeyId,
          clientIp: state.ip,
          requestId: state.id,
          errorCode: state.errorCode,
        });
        if (ctx.log.enabled("info")) ctx.log.info("request", { request_id: state.id, method: request.method, route: routeName, status, ms: latencyUs / 1000 });
      }, notProbe),
    )
    .onAfterHandle(
      { as: "global" },
      // A probe is counted in the metrics when its answer is made, not after it is sent: an after-response hook costs
      // a setImmediate per request (about 2 µs of a probe's ~25, bench/README.md "profile"), and a probe writes no
      // request-log row. A refused probe is counted by the error hook.
      scopedHook(function probeCounted({ request, route, response, set }) {
        const state = states.get(request);
        const status = response instanceof Response ? response.status : typeof set.status === "number" ? set.status : 200;
        ctx.metrics.observeRequest(request.method, route, status, state ? (Bun.nanoseconds() - state.startedNs) / 1e9 : 0);
      }, isProbe),
    );
  for (const hook of globalAfterHandle) core.onAfterHandle({ as: "global" }, hook as never);
  return core;
}

export const catalogStatus = (code: ErrorCode) => ERROR_CATALOG[code].http_status;
