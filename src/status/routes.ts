import { Elysia, type TSchema } from "elysia";
import { cached, cachedRoutes } from "../http/openapi/contract";
import type { Guards } from "../auth/guards";
import type { AppContext } from "../context";
import { htmlResponse } from "../http/formats/html";
import { pageSecurityHeaders, withPageSecurity } from "../http/security-headers";
import { BADGE_WINDOWS, parseBadgeName, uptimeBadge } from "./page/badge";
import { incidentsFeed, incidentsJsonFeed } from "./page/feed";
import { QUERY_DEFAULTS as D, StatusModel as M } from "./model";
import { statusPage } from "./page/page";
import { publicTag, refuses } from "../http/routes/declare";
import { canaryEcho, flagQuery, getIncidentOrThrow, latencyPercentiles, listIncidents, policyView, systemStatus, trend, uptime, UptimeCache } from "./service";
import { ok } from "../http/envelope";

const answers = <Q extends TSchema, R extends TSchema, const S extends readonly number[]>(query: Q, schema: R, summary: string, ...refusals: S) => ({
  query,
  response: { 200: schema, ...refuses(...refusals) },
  detail: publicTag(summary),
});
const raw = (summary: string, type: string, schema: Record<string, unknown> = { type: "string" }) => ({
  ...publicTag(summary),
  responses: { 200: { description: type, content: { [type]: { schema } } } },
});
/** The JSON Feed 1.1 document (https://jsonfeed.org/version/1.1) src/status/page/feed.ts writes, field by field. */
const str = { type: "string" };
const JSON_FEED = {
  type: "object",
  required: ["version", "title", "items"],
  properties: {
    version: { const: "https://jsonfeed.org/version/1.1" },
    title: str,
    home_page_url: str,
    feed_url: str,
    description: str,
    language: str,
    authors: { type: "array", items: { type: "object", properties: { name: str, url: str } } },
    items: {
      type: "array",
      items: {
        type: "object",
        required: ["id"],
        properties: {
          id: str,
          url: str,
          title: str,
          content_text: str,
          date_published: str,
          date_modified: str,
          tags: { type: "array", items: str },
          _herald: { type: "object", description: "Herald's extension: the incident's source, status, state, severity, components and times" },
        },
      },
    },
  },
};
// Status answers may be cached briefly: a minute-old status is what the snapshot job produces anyway.
const CACHE = "public, max-age=30";
/** A badge may be kept longer: it shows a day's uptime by default. */
const BADGE_CACHE = "public, max-age=300";
/** The status page shows one image, its own uptime badge; it has no forms and no script. */
const PAGE_HEADERS = pageSecurityHeaders({ images: ["'self'"] });

/** Public status API, the human page, its feeds and badges, and the canary. Operator routes: admin-routes.ts. */
export function statusRoutes(ctx: AppContext, _guards: Guards) {
  const doc = (body: string, type: string, cache = CACHE) => new Response(body, { headers: { "content-type": type, "cache-control": cache } });
  const status = async () => ok(await systemStatus(ctx));
  const cache = new UptimeCache();
  // Every success of this instance carries Cache-Control (the hook below, doc(), the page): CACHE unless a route says otherwise.
  return new Elysia({ name: "herald:status", detail: cachedRoutes(CACHE) })
    .onAfterHandle(({ set, path }) => {
      if (path.startsWith("/api/public/") || path === "/status.json") set.headers["cache-control"] = CACHE;
    })
    .get("/api/public/system-status", status, answers(M.metaQuery, M.status, "Overall ok|warn|bad and every check, evaluated now under the status policy"))
    .get("/status.json", status, answers(M.metaQuery, M.status, "Alias of /api/public/system-status"))
    .get(
      "/api/public/system-status/trend",
      async ({ query }) => ok(await trend(ctx, query.limit ?? D.trend)),
      answers(M.trendQuery, M.trend, "The latest stored snapshots (oldest first) and their ok/warn/bad counts"),
    )
    .get(
      "/api/public/system-status/uptime",
      async ({ query }) => ok(await uptime(ctx, query.hours ?? D.uptimeHours, flagQuery("exclude_maintenance", query.exclude_maintenance), cache)),
      answers(M.uptimeQuery, M.uptime, "Time-weighted degraded_pct, overall and per check, from the snapshots"),
    )
    .get(
      "/api/public/system-status/incidents",
      async ({ query }) => ok(await listIncidents(ctx, query.hours ?? D.incidentHours, query.limit ?? D.incidentLimit)),
      answers(M.incidentsQuery, M.incidents, "Incidents of both sources overlapping the last `hours`, newest first (open ones always)"),
    )
    .get("/api/public/system-status/incidents/:incident_id", async ({ params }) => ok({ incident: await getIncidentOrThrow(ctx, params.incident_id) }), {
      params: M.incidentParams,
      ...answers(M.metaQuery, M.incidentOne, "One incident with every update (operator incidents), as long as it is kept", 404),
    })
    .get(
      "/api/public/system-status/policy",
      () => ({ success: true as const, ...policyView(ctx) }),
      answers(M.metaQuery, M.policy, "The status policy in force: source, whether the file loaded, thresholds per check"),
    )
    .get(
      "/api/public/latency-percentiles",
      async ({ query }) => ok(await latencyPercentiles(ctx, query.hours ?? D.latencyHours)),
      answers(M.latencyQuery, M.latency, "p50/p95/p99 server time (nearest rank) over the request log, overall and per route"),
    )
    .post(
      "/api/canary/echo",
      ({ body, set }) => {
        set.headers["cache-control"] = "no-store";
        return ok(canaryEcho(ctx, body, String(set.headers["x-request-id"] ?? "")));
      },
      {
        body: M.canaryBody,
        response: { 200: M.canary },
        detail: {
          ...publicTag("Strictly validated echo for synthetic monitors: message and request_id required, bounded, no other field"),
          ...cached("no-store"),
        },
      },
    )
    .get("/status", async () => withPageSecurity(htmlResponse(await statusPage(ctx, cache), CACHE), PAGE_HEADERS), {
      detail: raw("Human status page (HTML, no JavaScript)", "text/html"),
    })
    .get("/status/feed.rss", async () => doc(await incidentsFeed(ctx), "application/rss+xml; charset=utf-8"), {
      detail: raw("Incidents as RSS 2.0", "application/rss+xml"),
    })
    .get("/status/feed.json", async () => doc(await incidentsJsonFeed(ctx), "application/feed+json; charset=utf-8"), {
      detail: raw("Incidents as JSON Feed 1.1", "application/feed+json", JSON_FEED),
    })
    .get(
      "/status/badge/:badge",
      async ({ params, query }) => {
        const check = parseBadgeName(params.badge);
        return doc((await uptimeBadge(ctx, check, query.window ?? "24h", cache)).svg, "image/svg+xml; charset=utf-8", BADGE_CACHE);
      },
      {
        params: M.badgeParams,
        query: M.badgeQuery,
        response: refuses(404),
        detail: {
          ...raw(`Uptime badge (SVG): {badge} is <check>.svg or overall.svg; window ${Object.keys(BADGE_WINDOWS).join("|")}`, "image/svg+xml"),
          ...cached(BADGE_CACHE),
        },
      },
    );
}
