import type { Server } from "bun";
import type { AppContext } from "../context";
import { epochMs } from "../clock";
import { errorResponse, newRequestState, type RequestState } from "../http/core";
import { MAX_TARGET_CHARS, sizeRefusal, targetOf } from "../http/request-state";
import { AppError } from "../http/errors/errors";
import { rateLimitHeaders } from "../http/rate-limit/rate-limit";
import { observe } from "../http/metrics";
import { installNativeRoutes, type NativeRoutesHost } from "../http/native-routes";
import { CONTENT_TYPE_OPTIONS, NOSNIFF, STRICT_TRANSPORT, STRICT_TRANSPORT_SECURITY } from "../http/security-headers";
import { hitRecorder, type HitRecorder } from "./hits";
import { errorPage, prefersHtml } from "./pages";
import { findLink, peekLink, type ResolvedLink, usableOrThrow } from "./short-links";

// Following a short link: `followLink`, reached by the Elysia route (tests, app.handle) and by a native Bun route
// `herald serve` installs in front of Elysia, whose global hooks cost the hottest path about two thirds of its
// throughput (bench/README.md). The native door repeats only what the HTTP core does for every request (request id,
// public rate limit, error envelope, metrics). A cached link is answered without awaiting anything, and the click is
// buffered in memory (hits.ts): the redirect never writes.

export const REDIRECT_ROUTE = "/s/audio/:code";

/** The link when it may be followed; otherwise the error page (browsers: Accept text/html) or a thrown AppError. */
function usableOrPageOf(
  ctx: AppContext,
  link: ResolvedLink | null,
  code: string,
  request: Request,
  requestId: string,
  nowMs?: number,
): ResolvedLink | Response {
  try {
    return usableOrThrow(ctx, link, code, nowMs);
  } catch (err) {
    if (err instanceof AppError && prefersHtml(request.headers.get("accept"))) return errorPage(err, requestId);
    throw err;
  }
}

/** The link the code names when it may be followed; otherwise the error page or a thrown AppError (the QR routes). */
export async function usableOrPage(ctx: AppContext, code: string, request: Request, requestId: string): Promise<ResolvedLink | Response> {
  return usableOrPageOf(ctx, await findLink(ctx, code), code, request, requestId);
}

function redirectTo(
  ctx: AppContext,
  hits: HitRecorder,
  request: Request,
  known: ResolvedLink | null,
  code: string,
  ip: string,
  requestId: string,
  nowMs: number,
  extraHeaders: Record<string, string> | undefined,
) {
  const link = usableOrPageOf(ctx, known, code, request, requestId, nowMs);
  if (link instanceof Response) {
    // The error page of an unusable link (rare): its rate-limit headers are set on it.
    if (extraHeaders) for (const [k, v] of Object.entries(extraHeaders)) link.headers.set(k, v);
    if (ctx.config.isProduction) link.headers.set(STRICT_TRANSPORT, STRICT_TRANSPORT_SECURITY);
    return link;
  }
  const ua = request.headers.get("user-agent");
  hits.record(link.row.id, hits.classify(request.method, ua), ip, ua, nowMs);
  // no-store: every click must reach us to be counted, and a revoked link must stop working at once; nosniff as on
  // every answer (src/http/security-headers.ts). Each header costs ~0.2 µs on the hottest path, so nothing more (a 302
  // is never indexed on its own). The rate-limit headers go in the same object: set on the Response afterwards, one by
  // one, they cost ~4 µs (bench "profile").
  const headers: Record<string, string> = {
    location: link.row.destination_url,
    "cache-control": "private, no-store",
    "x-request-id": requestId,
    [CONTENT_TYPE_OPTIONS]: NOSNIFF,
  };
  // HSTS in production, as on every answer (src/http/security-headers.ts); outside production nothing is added.
  if (ctx.config.isProduction) headers[STRICT_TRANSPORT] = STRICT_TRANSPORT_SECURITY;
  return new Response(null, { status: 302, headers: extraHeaders ? { ...headers, ...extraHeaders } : headers });
}

/**
 * 302 to the destination of a usable link, counting the hit (HEAD and bots apart). Synchronous when the link is
 * in memory; a promise when it must be read. Either way an unusable link throws (or rejects with) its AppError.
 */
export function followLink(
  ctx: AppContext,
  hits: HitRecorder,
  request: Request,
  code: string,
  ip: string,
  requestId: string,
  extraHeaders?: Record<string, string>,
): Response | Promise<Response> {
  const nowMs = epochMs(ctx.clock);
  const known = peekLink(ctx, code);
  if (known !== undefined) return redirectTo(ctx, hits, request, known, code, ip, requestId, nowMs, extraHeaders);
  return findLink(ctx, code).then((link) => redirectTo(ctx, hits, request, link, code, ip, requestId, nowMs, extraHeaders));
}

/** The error envelope of a failed redirect (its catalog error, or a 500 that names the request id). */
function failed(ctx: AppContext, err: unknown, state: RequestState): Response {
  if (err instanceof AppError) return errorResponse(err, state);
  ctx.log.error("redirect failed", { request_id: state.id, error: (err as Error).message });
  return errorResponse(new AppError("server_error", "Unexpected server error; quote the request_id when reporting it"), state);
}

function answer(ctx: AppContext, hits: HitRecorder, request: Request & { params: { code: string } }, state: RequestState): Response | Promise<Response> {
  const limit = ctx.config.rateLimits.publicPerMin;
  if (limit > 0) {
    const decision = ctx.rateLimiter.hit("public", state.ip, limit);
    Object.assign(state.headers, rateLimitHeaders(decision));
    if (!decision.allowed) {
      return errorResponse(
        new AppError("rate_limited", `Rate limit of ${decision.limit} requests per minute per IP exceeded; retry after ${decision.retryAfterSeconds} s`),
        state,
      );
    }
  }
  try {
    const res = followLink(ctx, hits, request, request.params.code, state.ip, state.id, limit > 0 ? state.headers : undefined);
    if (res instanceof Response) return res;
    return res.catch((err) => failed(ctx, err, state));
  } catch (err) {
    return failed(ctx, err, state);
  }
}

/**
 * Bun.serve routes for `herald serve`: GET and HEAD /s/audio/:code answered without Elysia, with the same
 * answers as the Elysia route (test/audio-share/native-redirect.test.ts holds both doors to that). Unlike the
 * Elysia door it writes no request_log row: a click is already counted in audio_share_link_hits and in
 * /metrics, and a row per click (like a row per health probe) would be most of the table and about 40% of the
 * redirect's cost (bench/README.md).
 */
export function nativeRedirectRoutes(ctx: AppContext) {
  const hits = hitRecorder(ctx);
  const door = (method: "GET" | "HEAD") => {
    const series = ctx.metrics.route(method, REDIRECT_ROUTE);
    const observed = (res: Response, startedNs: number) => {
      observe(series, res.status, (Bun.nanoseconds() - startedNs) / 1e9);
      return res;
    };
    return function nativeRedirect(request: Request & { params: { code: string } }, server: Server<unknown>): Response | Promise<Response> {
      const state = newRequestState(ctx, request, server);
      // The size guards every request passes, as through Elysia (a 20 KB query is the JSON 414, not a redirect). Only
      // a long URL or a declared body can fail them: the common click skips the target's slicing.
      const url = request.url;
      if (url.length > MAX_TARGET_CHARS || request.headers.get("content-length") !== null) {
        const refused = sizeRefusal(ctx.config.maxBodyBytes, request, targetOf(url).targetLength, state);
        if (refused) return observed(refused, state.startedNs);
      }
      const res = answer(ctx, hits, request, state);
      return res instanceof Response ? observed(res, state.startedNs) : res.then((r) => observed(r, state.startedNs));
    };
  };
  return { [REDIRECT_ROUTE]: { GET: door("GET"), HEAD: door("HEAD") } };
}

/** Puts the native redirect in front of Elysia when the app listens (src/http/native-routes.ts). */
export function installNativeRedirects(app: NativeRoutesHost, ctx: AppContext): void {
  installNativeRoutes(app, nativeRedirectRoutes(ctx));
}
