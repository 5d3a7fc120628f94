import { Elysia } from "elysia";
import type { Server } from "bun";
import type { AppContext } from "../context";
import { epochMs } from "../clock";
import { AppError, invalidRequest, type ProblemDetail } from "./errors/errors";
import { metaRequested } from "./envelope";
import { isOperatorPath, OPERATOR_NO_STORE } from "./caching/cache-control";
import { rateLimitHeaders } from "./rate-limit/rate-limit";
import { publicRateGroup } from "./rate-limit/route-groups";
import { describeValidationErrors } from "./errors/validation";
import { contentTypeProblem, parseJsonBytes } from "./body/json-body";
import { parseFormBytes } from "./body/form-body";
import { CompressedCache, compressedAnswer } from "./compression";
import { isSignedRoute, onEveryRoute, ResumeLater, type ScopedRoute, scopedHook, synchronousHook } from "./hook-scope";
import type { TSchema } from "@sinclair/typebox";
import type { TypeCheck } from "@sinclair/typebox/compiler";
import type { RouteIndex } from "./routes/route-index";
import { errorAnswers } from "./errors/error-answers";
import { declaredTooLarge, errorResponse, newRequestState, type RequestStates, targetOf, targetRefusal } from "./request-state";
import { hasScalarParameter, hasSeveralParameters, repeatedQueryKey, repeatedScalarIn } from "./query-once";
import { BodyReads } from "./body/body-deadline";
import { CONTENT_TYPE_OPTIONS, NOSNIFF, STRICT_TRANSPORT, STRICT_TRANSPORT_SECURITY } from "./security-headers";

/** The code Elysia's catch gives a thrown error (its `code`, else UNKNOWN), for an error thrown outside its catch. */
const codeOf = (error: unknown): string => {
  const code = (error as { code?: unknown } | null)?.code;
  return typeof code === "string" || typeof code === "number" ? String(code) : "UNKNOWN";
};

export { clientIp, errorResponse, MAX_TARGET_CHARS, newRequestState, type RequestState, RequestStates, targetOf } from "./request-state";

/** The first problems of a body against its route's schema, as `[{ field, problem }]`; bounded in count. */
function bodyProblems(check: TypeCheck<TSchema>, value: unknown): ProblemDetail[] {
  const errors = [];
  for (const e of check.Errors(value)) {
    errors.push(e);
    if (errors.length >= 20) break;
  }
  return describeValidationErrors("body", errors);
}

/** Health probes arrive every few seconds: logging each would bury partner traffic. They still count in /metrics. */
const PROBE_ROUTES = new Set(["/healthz", "/readyz", "/metrics"]);
/** The `route` label of requests the public per-IP limit refused, before any route was matched. */
const PUBLIC_LIMIT_ROUTE = "(public rate limit)";
const isProbe = (route: ScopedRoute) => PROBE_ROUTES.has(route.path);

/**
 * The routes whose requests can carry a body. A parse hook compiles a route async even on GET (pinned elysia 1.4.30),
 * a promise per request, so the body hooks are kept off GET and HEAD routes.
 */
const takesBody = (route: ScopedRoute) => route.method !== "GET" && route.method !== "HEAD";

type MapResponseHook = (c: { request: Request; response: unknown; set: { status?: unknown } }) => Response | Promise<Response> | undefined;
/** What a request-answering hook reads of Elysia's context. */
type AnswerContext = { request: Request; route: string; response: unknown; set: { status?: unknown } };

/** The status of a route's answer: a Response's own, else the one the route set (200 by default). */
const statusOf = (response: unknown, set: { status?: unknown }) =>
  response instanceof Response ? response.status : typeof set.status === "number" ? set.status : 200;
const COMPRESSION_HOOKS = new WeakSet<MapResponseHook>();

/** Whether a route's lifecycle includes the compression hook. */
export const compressesAnswers = (route: ScopedRoute) =>
  ((route.hooks.mapResponse ?? []) as Array<{ fn: unknown }>).some((h) => COMPRESSION_HOOKS.has(h.fn as MapResponseHook));

/**
 * The conventions every route gets: request id, body guardrail, JSON parsing, public rate limits, the error
 * envelope, include_meta, and the request log / metrics. Registered first so its onError covers every route.
 * `globalAfterHandle`: a domain's global afterHandle hooks (the export-usage recorder), registered here so they
 * precede every route; mark them with `scopedHook` (src/http/hook-scope.ts) to keep them off other routes.
 */
export function httpCore(ctx: AppContext, states: RequestStates, routes: RouteIndex, globalAfterHandle: readonly object[] = []) {
  const { config } = ctx;
  const compressed = new CompressedCache();
  // Every body is read under MAX_BODY_BYTES and the body deadline (src/http/body/body-deadline.ts).
  const bodies = new BodyReads(config.requestBody, config.maxBodyBytes);

  /** A body under the policy of src/http/body/json-body.ts, then checked against its route's schema. */
  const parseBody = (raw: Uint8Array, request: Request, route: string): { value: unknown; error: AppError | null } => {
    // The one exception to JSON: routes that declare a form body (the operator sign-in forms; form-body.ts).
    const form = routes.takesForm(request.method, route);
    // An HTML form with no fields posts an empty body: that is the empty form, so a missing field is judged by
    // the route (a missing csrf_token is the CSRF refusal, 403), not refused as an absent body. Likewise a route that
    // takes a JSON object reads no body as `{}` (RouteIndex.absentBodyIsEmpty).
    if (raw.byteLength === 0) return { value: form || routes.absentBodyIsEmpty(request.method, route) ? {} : undefined, error: null };
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
    return { value: undefined, error: invalidRequest("body", bodyProblems(check, parsed.value)) };
  };

  // Off the signed partner routes (small JSON on the hottest paths) and the health probes. Marked synchronous: Elysia
  // reads `return compressedAnswer(` as async and compiled every compressible route to a promise, though it never
  // awaits a mapResponse hook not declared `async` (pinned elysia 1.4.30): its response mapper takes the promise.
  const compressionHook: MapResponseHook = scopedHook(
    synchronousHook(function compressionMapped({ request, response, set }) {
      const acceptEncoding = request.headers.get("accept-encoding");
      if (!acceptEncoding) return;
      return compressedAnswer(response, acceptEncoding, typeof set.status === "number" ? set.status : 200, compressed);
    }),
    (route) => !isSignedRoute(route) && route.path !== "/healthz" && route.path !== "/readyz",
  );
  COMPRESSION_HOOKS.add(compressionHook);

  const refusal = errorAnswers(ctx, states, routes);

  let resumedRuns = 0;
  ctx.metrics.counter(
    "herald_http_resumed_total",
    "Requests whose route ran again after a synchronous hook had to await (a signed GET whose key was not in memory, or with a nonce).",
    () => resumedRuns,
  );

  /** The route run again after its hook's await (ResumeLater); a failed await is the answer, as if the hook threw it. */
  const resumed = (pause: ResumeLater, at: { code: string | number; request: Request; path: string; route: string; params?: unknown }): Promise<unknown> => {
    const handler = routes.handlerOf(at.request.method, at.route);
    resumedRuns++;
    return pause.prepare().then(
      () =>
        handler && pause.context ? handler(pause.context) : refusal({ ...at, error: new Error(`no compiled handler for ${at.request.method} ${at.route}`) }),
      (error: unknown) => refusal({ ...at, code: codeOf(error), error }),
    );
  };

  /**
   * A probe's answer in the metrics, when it is made as every request's is (`answered`); probes write no request-log
   * row (the answered hook is not on their routes). A refused probe is counted by the error hook.
   */
  const probeObserved = (request: Request, route: string, status: number) => {
    const state = states.get(request);
    ctx.metrics.observeRequest(request.method, route, status, state ? (Bun.nanoseconds() - state.startedNs) / 1e9 : 0);
  };

  /** What every request gets before routing; a Response refuses it (413, 414, 429). */
  const started = (request: Request, server: Server<unknown> | null, headers: Record<string, string | number>): Response | Promise<Response> | undefined => {
    const { path, targetLength } = targetOf(request.url);
    const state = newRequestState(ctx, request, server);
    states.set(request, state);
    headers["x-request-id"] = state.id;
    // Elysia copies these headers onto a Response a route returns as well as onto the answers it serialises.
    headers[CONTENT_TYPE_OPTIONS] = NOSNIFF;
    if (config.isProduction) headers[STRICT_TRANSPORT] = STRICT_TRANSPORT_SECURITY;
    // Operator answers are never stored, refusals included; a route with validators sets its own.
    if (isOperatorPath(path)) headers["cache-control"] = state.headers["cache-control"] = OPERATOR_NO_STORE;
    // A Content-Length over the limit: the 413 once the body is read and dropped (a promise, on this rare path only).
    if (declaredTooLarge(config.maxBodyBytes, request)) return bodies.refuseDeclared(request, state);
    const refused = targetRefusal(targetLength, state);
    if (refused) return refused;
    const group = config.rateLimits.publicPerMin > 0 ? publicRateGroup(path) : null;
    if (group) {
      const decision = ctx.rateLimiter.hit(group, state.ip, config.rateLimits.publicPerMin);
      Object.assign(state.headers, rateLimitHeaders(decision));
      Object.assign(headers, state.headers);
      if (!decision.allowed) {
        // Refused before routing, so counted here under a name of its own (the HeraldRateLimitRefusalsHigh alert reads it).
        ctx.metrics.observeRequest(request.method, PUBLIC_LIMIT_ROUTE, 429, (Bun.nanoseconds() - state.startedNs) / 1e9);
        return errorResponse(
          new AppError("rate_limited", `Rate limit of ${decision.limit} requests per minute per IP exceeded; retry after ${decision.retryAfterSeconds} s`),
          state,
        );
      }
    }
    return undefined;
  };

  /**
   * A request's request-log row and metrics count, taken once (RequestState.finished) when its answer is made: by
   * the answered hook below, or by the error hook for a refusal. Not in an after-response hook: Elysia runs those in
   * a setImmediate with an async function (pinned elysia 1.4.30), ~1.5 µs of CPU a request (bench/README.md
   * "The ordinary request path"). So the latency is the time to the answer, before Bun writes it to the socket.
   */
  const answered = (request: Request, route: string | undefined, answerStatus: number) => {
    const state = states.get(request);
    if (!state || state.finished) return;
    state.finished = true;
    const status = state.status ?? answerStatus;
    const latencyUs = Math.round((Bun.nanoseconds() - state.startedNs) / 1000);
    const routeName = route || "(unmatched)";
    ctx.metrics.observeRequest(request.method, routeName, status, latencyUs / 1e6);
    ctx.requestLog.record({
      at: epochMs(ctx.clock),
      method: request.method,
      route: routeName,
      status,
      latencyUs,
      partnerKeyId: state.partnerKeyId,
      clientIp: state.knownIp,
      requestId: state.id,
      errorCode: state.errorCode,
    });
    if (ctx.log.enabled("info")) ctx.log.info("request", { request_id: state.id, method: request.method, route: routeName, status, ms: latencyUs / 1000 });
  };

  // Every answer a route makes passes the mapResponse hooks: a handler's, an early one from beforeHandle, and the
  // error hook's (which has logged it already). Registered first and returns nothing, so the compression hook still runs.
  const answeredHook = scopedHook(
    synchronousHook(function requestAnswered({ request, route, response, set }: AnswerContext) {
      answered(request, route, statusOf(response, set));
    }),
    (route) => !isProbe(route),
  );

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
        // A route run again after an await (ResumeLater, src/http/hook-scope.ts) has read its body already.
        const raw = state?.rawBody ?? (await bodies.read(request));
        if (state) state.rawBody = raw;
        const { value, error } = parseBody(raw, request, route);
        if (!error) return value;
        // Reported after authentication (a bad signature is 401 whatever the body). The placeholder `{}` keeps
        // Elysia's validator away from the bytes: its error stringifies the value, a denial of service for a hostile body.
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
    .onBeforeHandle(
      { as: "global" },
      // Only on routes with a scalar query parameter. Not on signed routes: the partner guard checks after the
      // signature (this hook cost GET /api/partner/capabilities ~3 µs of CPU a request).
      scopedHook(
        function queryGivenOnce({ request, route }) {
          // Most requests have one parameter or none: they never build the route's key (a string and a map lookup).
          const url = request.url;
          if (!hasSeveralParameters(url)) return;
          const repeated = repeatedScalarIn(url, routes.repeatableQueryKeys(request.method, route));
          if (repeated !== null) throw repeatedQueryKey(repeated);
        },
        (route) => hasScalarParameter((route.hooks.query ?? null) as TSchema | null) && !isSignedRoute(route),
      ),
    )
    .onError(
      { as: "global" },
      // Destructured, never taken whole: Elysia reads from a hook's source which parts of the context it uses, and a
      // hook that takes the whole context makes every route parse the headers, query and cookies it never reads.
      onEveryRoute(function errorAnswered({ code, error, request, path, route, params }) {
        // A synchronous hook that must await first (src/http/hook-scope.ts): once it has, the route runs again.
        if (error instanceof ResumeLater) return resumed(error, { code, request, path, route, params });
        const answer = refusal({ code, error, request, path, route, params });
        if (PROBE_ROUTES.has(route)) {
          // A refused probe: counted here, since its after-handle hook (probeCounted) does not run (a probe is no
          // console page, so its answer is never a promise).
          if (answer instanceof Response) probeObserved(request, route, answer.status);
          return answer;
        }
        // Logged here as well as by the answered hook: Elysia runs no mapResponse hook for a Response the error
        // hook gives a request no route matched (pinned elysia 1.4.30, composeErrorHandler). A console page's
        // refusal is a promise (a page to render): logged when it is made.
        if (answer instanceof Response) answered(request, route, answer.status);
        else return answer.then((page) => (answered(request, route, page.status), page));
        return answer;
      }, "every refusal and failure answers in the one JSON envelope"),
    )
    .onAfterHandle(
      { as: "global" },
      onEveryRoute(function includeMetaAdded({ request, response }) {
        if (!response || typeof response !== "object" || response instanceof Response || Array.isArray(response)) return;
        if (!metaRequested(request.url)) return;
        const state = states.get(request);
        return { ...(response as Record<string, unknown>), meta: { request_id: state?.id ?? "unknown", generated_at_utc: ctx.clock.now().toISOString() } };
      }, "include_meta=1 works on every route (docs/design.md §2)"),
    )
    .mapResponse({ as: "global" }, answeredHook)
    .mapResponse({ as: "global" }, compressionHook)
    .onAfterHandle(
      { as: "global" },
      scopedHook(function probeCounted({ request, route, response, set }) {
        probeObserved(request, route, statusOf(response, set));
      }, isProbe),
    );
  for (const hook of globalAfterHandle) core.onAfterHandle({ as: "global" }, hook as never);
  return core;
}
