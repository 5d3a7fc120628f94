import type { AppContext } from "../context";
import { epochMs } from "../clock";
import type { Server } from "bun";
import { metaRequested, ok } from "../http/envelope";
import { observe } from "../http/metrics";
import { requestIdFor } from "../http/request-id";
import { MAX_TARGET_CHARS, newRequestState, sizeRefusal, targetOf } from "../http/request-state";
import { CONTENT_TYPE_OPTIONS, NOSNIFF, STRICT_TRANSPORT, STRICT_TRANSPORT_SECURITY } from "../http/security-headers";
import pkg from "../../package.json";

// The liveness probe. One function builds its answer (`health`); two doors lead to it, as with the short-link
// redirect (src/audio-share/redirect.ts): the Elysia route (tests, app.handle, the OpenAPI document) and a native
// Bun route that `herald serve` installs in front of Elysia. A probe needs its request id and its count in
// /metrics, nothing else of the HTTP core: no request-log row (probes never had one), no rate limit, no client
// address, no body. Through Elysia's hooks and response mapping it ran at 0.65–0.73 of a bare Bun.serve JSON route;
// natively it is one object, one JSON.stringify and one Response (bench/README.md, "http").

export const HEALTH_ROUTE = "/healthz";

/** What /healthz says: the process answers, its version, how long it has run. */
export const health = (ctx: AppContext) =>
  ok({ status: "up" as const, version: pkg.version, uptime_seconds: Math.round((epochMs(ctx.clock) - ctx.startedAt.getTime()) / 1000) });

/** include_meta works here as on every route (the core's includeMetaAdded hook, docs/design.md §2). */
function withMeta(body: ReturnType<typeof health>, url: string, requestId: string, ctx: AppContext) {
  return metaRequested(url) ? { ...body, meta: { request_id: requestId, generated_at_utc: ctx.clock.now().toISOString() } } : body;
}

/** Elysia's own content type for an object answer, so both doors send the same bytes and headers. */
const JSON_TYPE = "application/json;charset=utf-8";

/**
 * Bun.serve routes for `herald serve`: GET and HEAD /healthz without Elysia, with the Elysia route's answer
 * (test/system/native-health.test.ts holds both doors to it). Other methods fall through to Elysia (its 405).
 */
export function nativeHealthRoutes(ctx: AppContext) {
  const door = (method: "GET" | "HEAD") => {
    const series = ctx.metrics.route(method, HEALTH_ROUTE);
    return function nativeHealth(request: Request, server: Server<unknown>): Response {
      const startedNs = Bun.nanoseconds();
      const url = request.url;
      // The size guards every request passes (a 20 KB query is the JSON 414, as through Elysia). Only a long URL or
      // a declared body can fail them, so an ordinary probe skips the request state they answer with (~1 µs of CPU a
      // probe, measured in the server; bench/README.md).
      if (url.length > MAX_TARGET_CHARS || request.headers.get("content-length") !== null) {
        const state = newRequestState(ctx, request, server);
        const refused = sizeRefusal(ctx.config.maxBodyBytes, request, targetOf(url).targetLength, state);
        if (refused) {
          observe(series, refused.status, (Bun.nanoseconds() - startedNs) / 1e9);
          return refused;
        }
      }
      const id = requestIdFor(request.headers.get("x-request-id"), ctx.rng);
      const headers: Record<string, string> = { "content-type": JSON_TYPE, "x-request-id": id, [CONTENT_TYPE_OPTIONS]: NOSNIFF };
      // HSTS in production, as on every answer (src/http/security-headers.ts).
      if (ctx.config.isProduction) headers[STRICT_TRANSPORT] = STRICT_TRANSPORT_SECURITY;
      const res = new Response(JSON.stringify(withMeta(health(ctx), url, id, ctx)), { headers });
      observe(series, 200, (Bun.nanoseconds() - startedNs) / 1e9);
      return res;
    };
  };
  return { [HEALTH_ROUTE]: { GET: door("GET"), HEAD: door("HEAD") } };
}
