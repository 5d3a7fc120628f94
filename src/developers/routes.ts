import { Elysia, type AnyElysia } from "elysia";
import { cachedRoutes } from "../http/openapi/contract";
import type { Guards } from "../auth/guards";
import type { AppContext } from "../context";
import { deprecationsFeed } from "./feed";
import { DevelopersModel as M } from "./model";
import { playbook, playbookMarkdown } from "./playbook";
import { loadRegistry, type Registry } from "./registry";
import { portalRoutes } from "./portal-routes";
import { sdkRoutes } from "./sdk-routes";
import { calendar, migrationStatus, simulateHeaders } from "./service";
import { publicTag, refuses, transparencyTag } from "../http/routes/declare";
import { ok } from "../http/envelope";

/** A document of the calendar in another format than JSON: its detail (a string of `type`). */
const raw = (summary: string, type: string) => ({
  ...transparencyTag(summary),
  responses: { 200: { description: type, content: { [type]: { schema: { type: "string" as const } } } } },
});
/** A JSON document of the calendar that takes no query but include_meta. */
const doc = <S>(schema: S, summary: string) => ({ query: M.metaQuery, response: { 200: schema }, detail: transparencyTag(summary) });
const CACHE = "public, max-age=300";

/**
 * The developer portal: its pages (/developers, portal-routes.ts), the SDK (sdk-routes.ts), and the deprecation
 * calendar, all from one deprecation registry (deprecations.yaml; tests pass a fixture). The
 * public+transparency OpenAPI subset (/api/openapi-transparency.yaml) is served with the other documents by
 * src/http/openapi/routes.ts, which builds all three once.
 */
export function developerRoutes(ctx: AppContext, _guards: Guards, registry: Registry = loadRegistry()) {
  return (app: AnyElysia) => {
    const text = (body: string, type: string) => new Response(body, { headers: { "content-type": type, "cache-control": CACHE } });
    return app
      .use(sdkRoutes(ctx))
      .use(portalRoutes(ctx, registry))
      .use(
        // Every route of this instance answers with CACHE (the hook below): said once for the document (cached()).
        new Elysia({ name: "herald:developers", detail: cachedRoutes(CACHE) })
          .onAfterHandle(({ set }) => {
            set.headers["cache-control"] = CACHE;
          })
          .get(
            "/developers/deprecations.json",
            () => ok(calendar(ctx, registry)),
            doc(M.calendar, "Deprecation calendar (empty schedule: no sunsets are planned)"),
          )
          .get("/developers/deprecations.rss", () => text(deprecationsFeed(ctx, registry), "application/rss+xml; charset=utf-8"), {
            detail: raw("Deprecation calendar as RSS 2.0", "application/rss+xml"),
          })
          .get("/developers/deprecations-playbook.json", () => ok(playbook(ctx, registry)), doc(M.playbook, "Deprecation policy and migration steps"))
          .get("/developers/deprecations-playbook.md", () => text(playbookMarkdown(ctx, registry), "text/markdown; charset=utf-8"), {
            detail: raw("Deprecation policy and migration steps (Markdown)", "text/markdown"),
          })
          .get("/developers/migration-status.json", ({ query }) => ok(migrationStatus(ctx, registry, query.id)), {
            query: M.migrationQuery,
            response: { 200: M.migration, ...refuses(404) },
            detail: transparencyTag("Phase and required action of one deprecation (id) or of all"),
          })
          .get("/api/public/deprecations/header-simulator", ({ query }) => ok(simulateHeaders(ctx, registry, query)), {
            query: M.simulatorQuery,
            response: { 200: M.simulator, ...refuses(404) },
            detail: publicTag("The Deprecation, Sunset and Link headers a deprecated endpoint sends (by id and/or endpoint; neither: the soonest sunset)"),
          }),
      );
  };
}
