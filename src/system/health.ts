import type { AppContext } from "../context";
import { requestedMeta } from "../http/envelope";
import { observe } from "../http/metrics";
import { requestIdFor } from "../http/request-id";
import pkg from "../../package.json";

// The liveness probe. One function builds its answer (`health`); two doors lead to it, as with the short-link
// redirect (src/audio-share/redirect.ts): the Elysia route (tests, app.handle, the OpenAPI document) and a native
// Bun route that `herald serve` installs in front of Elysia. A probe needs its request id and its count in
// /metrics, nothing else of the HTTP core: no request-log row (probes never had one), no rate limit, no client
// address, no body. Through Elysia's hooks and response mapping it ran at 0.65–0.73 of a bare Bun.serve JSON route;
// natively it is one object, one JSON.stringify and one Response (bench/README.md, "http").

export const HEALTH_ROUTE = "/healthz";

/** What /healthz says: the process answers, its version, how long it has run. */
export const health = (ctx: AppContext) => ({
  success: true as const,
  status: "up" as const,
  version: pkg.version,
  uptime_seconds: Math.round((Date.now() - ctx.startedAt.getTime()) / 1000),
});

/** Elysia's own content type for an object answer, so both doors send the same bytes and headers. */
const JSON_TYPE = "application/json;charset=utf-8";

/**
 * Bun.serve routes for `herald serve`: GET and HEAD /healthz without Elysia, with the Elysia route's answer
 * (test/system/native-health.test.ts holds both doors to it). Other methods fall through to Elysia (its 405).
 */
export function nativeHealthRoutes(ctx: AppContext) {
  const door = (method: "GET" | "HEAD") => {
    const series = ctx.metrics.route(method, HEALTH_ROUTE);
    return function nativeHealth(request: Request): Response {
      const startedNs = Bun.nanoseconds();
      const id = requestIdFor(request.headers.get("x-request-id"), ctx.rng);
      // include_meta works here as on every route (the core's includeMetaAdded hook, DESIGN.md §2).
      const meta = requestedMeta(request, id, ctx.clock.now());
      const res = new Response(JSON.stringify(meta ? { ...health(ctx), meta } : health(ctx)), {
        headers: { "content-type": JSON_TYPE, "x-request-id": id },
      });
      observe(series, 200, (Bun.nanoseconds() - startedNs) / 1e9);
      return res;
    };
  };
  return { [HEALTH_ROUTE]: { GET: door("GET"), HEAD: door("HEAD") } };
}
