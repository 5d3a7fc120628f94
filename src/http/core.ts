import { Elysia } from "elysia";
import type { Server } from "bun";
import type { AppContext } from "../context";
import { errorFields } from "../log";
import { AppError, ERROR_CATALOG, type ErrorCode } from "./errors";
import { isTruthyFlag } from "./envelope";
import { rateLimitHeaders } from "./rate-limit";
import { requestIdFor } from "./request-id";
import { publicRateGroup } from "./route-groups";
import { describeValidationErrors, type RequestPart } from "./validation";
import type { RouteIndex } from "./route-index";

/** What Herald knows about one request while it runs; keyed by the Request object, dropped with it. */
export interface RequestState {
  id: string;
  startedNs: number;
  ip: string;
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

/** A request's state as it arrives: its id, start time and client address. */
export function newRequestState(ctx: AppContext, request: Request, server: Server<unknown> | null): RequestState {
  return {
    id: requestIdFor(request.headers.get("x-request-id"), ctx.rng),
    startedNs: Bun.nanoseconds(),
    ip: clientIp(ctx, request, server),
    rawBody: null,
    partnerKeyId: null,
    status: null,
    errorCode: null,
    headers: {},
    parseError: null,
    partner: null,
  };
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

async function readJsonBody(request: Request, maxBytes: number): Promise<{ raw: Uint8Array; value: unknown; error: AppError | null }> {
  // With a Content-Length (already checked against the limit in onRequest, and enforced by Bun) the body is read
  // in one go; without one (chunked) it is counted while read, so it cannot slip past the limit.
  let raw: Uint8Array;
  if (request.headers.get("content-length") !== null || !request.body) {
    raw = new Uint8Array(await request.arrayBuffer());
    if (raw.byteLength > maxBytes) throw tooLarge(maxBytes);
  } else {
    const chunks: Uint8Array[] = [];
    let size = 0;
    for await (const chunk of request.body as unknown as AsyncIterable<Uint8Array>) {
      size += chunk.byteLength;
      if (size > maxBytes) throw tooLarge(maxBytes);
      chunks.push(chunk);
    }
    raw = Buffer.concat(chunks);
  }
  const text = new TextDecoder("utf-8", { fatal: false }).decode(raw);
  if (text.trim() === "") return { raw, value: undefined, error: null };
  try {
    return { raw, value: JSON.parse(text), error: null };
  } catch (err) {
    const error = new AppError("invalid_payload", `Request body is not valid JSON: ${(err as Error).message}`, {
      details: [{ field: "body", problem: "must be valid JSON" }],
    });
    return { raw, value: undefined, error };
  }
}

/**
 * Health probes arrive every few seconds from load balancers and orchestrators; recording each in request_log
 * would bury partner traffic and cost a write per probe. They still count in /metrics.
 */
const PROBE_ROUTES = new Set(["/healthz", "/readyz", "/metrics"]);

const tooLarge = (maxBytes: number) =>
  new AppError("payload_too_large", `Request body exceeds the ${maxBytes}-byte limit`, { details: { max_bytes: maxBytes } });

/**
 * The conventions every route gets: request id, body guardrail, JSON parsing, public rate limits, the error
 * envelope, include_meta, and the request log / metrics. Registered first so its onError covers every route.
 */
export function httpCore(ctx: AppContext, states: RequestStates, routes: RouteIndex) {
  const { config } = ctx;
  return new Elysia({ name: "herald:http-core" })
    .onRequest(({ request, server, set }) => {
      const state = newRequestState(ctx, request, server);
      states.set(request, state);
      set.headers["x-request-id"] = state.id;
      const length = request.headers.get("content-length");
      if (length && Number(length) > config.maxBodyBytes) return errorResponse(tooLarge(config.maxBodyBytes), state);
      const group = publicRateGroup(new URL(request.url).pathname);
      if (group && config.rateLimits.publicPerMin > 0) {
        const decision = ctx.rateLimiter.hit(group, state.ip, config.rateLimits.publicPerMin);
        Object.assign(state.headers, rateLimitHeaders(decision));
        Object.assign(set.headers, state.headers);
        if (!decision.allowed) {
          return errorResponse(new AppError("rate_limited", `Rate limit of ${decision.limit} requests per minute per IP exceeded; retry after ${decision.retryAfterSeconds} s`), state);
        }
      }
    })
    .onParse({ as: "global" }, async ({ request, contentType }) => {
      const state = states.get(request);
      const type = (contentType ?? "").split(";")[0]!.trim().toLowerCase();
      if (type !== "" && type !== "application/json" && !type.endsWith("+json")) {
        throw new AppError("unsupported_media_type", `Content-Type ${type} is not accepted; send application/json`);
      }
      const { raw, value, error } = await readJsonBody(request, config.maxBodyBytes);
      if (state) {
        state.rawBody = raw;
        state.parseError = error;
      }
      if (error && !state) throw error;
      // Returning undefined would hand the bytes to Elysia's own parser; a placeholder keeps them ours, and
      // the stored parseError is thrown after authentication (validation or beforeHandle).
      return error ? {} : value;
    })
    .onBeforeHandle({ as: "global" }, ({ request }) => {
      // Routes without a body schema: validation did not catch the malformed body, so report it here.
      const parseError = states.get(request)?.parseError;
      if (parseError) throw parseError;
    })
    .onError({ as: "global" }, ({ code, error, request, path }) => {
      const state = states.get(request);
      if (error instanceof AppError) return errorResponse(error, state);
      // Elysia wraps anything thrown by a parser in ParseError; our own parser throws AppErrors.
      const cause = (error as { cause?: unknown }).cause;
      if (code === "PARSE" && cause instanceof AppError) return errorResponse(cause, state);
      if (code === "VALIDATION" && state?.parseError) return errorResponse(state.parseError, state);
      if (code === "VALIDATION") {
        const v = error as unknown as { type: RequestPart; all: Parameters<typeof describeValidationErrors>[1] };
        if (v.type === "response") {
          ctx.log.error("response failed its schema", { request_id: state?.id, path, errors: v.all.slice(0, 5) });
          return errorResponse(new AppError("server_error", "The server produced an invalid response; quote the request_id"), state);
        }
        const details = describeValidationErrors(v.type, v.all);
        const errCode: ErrorCode = v.type === "body" ? "invalid_payload" : "invalid_query";
        const summary = details.map((d) => `${d.field} ${d.problem}`).join("; ");
        return errorResponse(new AppError(errCode, `Invalid ${v.type === "body" ? "request body" : "request parameters"}: ${summary}`, { details }), state);
      }
      if (code === "PARSE") {
        return errorResponse(new AppError("invalid_payload", "Request body could not be parsed as JSON", { details: [{ field: "body", problem: "must be valid JSON" }] }), state);
      }
      if (code === "NOT_FOUND") {
        const url = new URL(request.url);
        const allowed = routes.methodsFor(url.pathname);
        if (allowed.length && !allowed.includes(request.method)) {
          return errorResponse(new AppError("method_not_allowed", `${request.method} is not allowed on ${url.pathname}; use ${allowed.join(", ")}`, { headers: { allow: allowed.join(", ") } }), state);
        }
        return errorResponse(new AppError("not_found", `No route ${request.method} ${url.pathname}; see /api/docs`), state);
      }
      ctx.log.error("unhandled error", { request_id: state?.id, path, code: String(code), ...errorFields(error) });
      return errorResponse(new AppError("server_error", "Unexpected server error; quote the request_id when reporting it"), state);
    })
    .onAfterHandle({ as: "global" }, ({ request, response }) => {
      if (!response || typeof response !== "object" || response instanceof Response || Array.isArray(response)) return;
      const url = request.url;
      const q = url.indexOf("include_meta=");
      if (q === -1) return;
      const flag = new URL(url).searchParams.get("include_meta");
      if (!isTruthyFlag(flag)) return;
      const state = states.get(request);
      return { ...(response as Record<string, unknown>), meta: { request_id: state?.id ?? "unknown", generated_at_utc: ctx.clock.now().toISOString() } };
    })
    .onAfterResponse({ as: "global" }, ({ request, route, set, responseValue }) => {
      const state = states.get(request);
      if (!state) return;
      const status =
        state.status ?? (responseValue instanceof Response ? responseValue.status : typeof set.status === "number" ? set.status : 200);
      const latencyUs = Math.round((Bun.nanoseconds() - state.startedNs) / 1000);
      const routeName = route || "(unmatched)";
      ctx.metrics.observeRequest(request.method, routeName, status, latencyUs / 1e6);
      if (PROBE_ROUTES.has(routeName)) return; // load-balancer probes: counted in metrics, not logged per request
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
    });
}

export const catalogStatus = (code: ErrorCode) => ERROR_CATALOG[code].http_status;
