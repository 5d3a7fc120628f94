import { Elysia } from "elysia";
import type { Guards } from "../auth/guards";
import type { AppContext } from "../context";
import { alertsMonitorRoutes } from "./alerts/routes";
import { backupsRoutes } from "./backups/routes";
import { digestRoutes } from "./digest/routes";
import { opsIncidentsRoutes } from "./incidents/routes";
import { linkExportsRoutes } from "./link-inbox/exports-routes";
import { linkInboxRoutes } from "./link-inbox/routes";
import { preflightRoutes } from "./preflight/routes";
import { readinessRoutes } from "./readiness/routes";
import { alertPagesRoutes } from "./alerts/alert-pages";
import { alertsFiringRoutes } from "./alerts/firing-routes";
import { alertsPageRoutes } from "./alerts/alerts-page";
import { backupsPageRoutes } from "./backups/backups-page";
import { digestPageRoutes } from "./digest/digest-page";
import { incidentsPageRoutes } from "./incidents/incidents-page";
import { preflightPageRoutes } from "./preflight/preflight-page";
import { readinessPageRoutes } from "./readiness/readiness-page";

/** Every operator route, one plugin per area of src/ops/, then the areas' console pages, mounted by app.ts as one. */
export function opsRoutes(ctx: AppContext, guards: Guards) {
  return new Elysia({ name: "herald:ops" })
    .use(backupsRoutes(ctx, guards))
    .use(alertsMonitorRoutes(ctx, guards))
    .use(linkExportsRoutes(ctx, guards))
    .use(preflightRoutes(ctx, guards))
    .use(linkInboxRoutes(ctx, guards))
    .use(digestRoutes(ctx, guards))
    .use(opsIncidentsRoutes(ctx, guards))
    .use(readinessRoutes(ctx, guards))
    .use(opsPagesRoutes(ctx, guards));
}

/**
 * The console's pages of the ops areas, each beside its area (src/ops/<area>/<name>-page.ts; the link inbox's is
 * composed with its exports, src/ops/link-inbox/exports-routes.ts). The console's own pages are src/console/'s.
 */
function opsPagesRoutes(ctx: AppContext, guards: Guards) {
  return (
    new Elysia({ name: "herald:operator-pages" })
      .use(readinessPageRoutes(ctx, guards))
      .use(alertPagesRoutes(ctx, guards))
      // The firing view and silences (JSON) live with the alert pages they link to (composed here, not in app.ts,
      // whose plugin chain is at the type checker's depth limit).
      .use(alertsFiringRoutes(ctx, guards))
      // The console's pages, one per operator area (the header in src/console/frame.ts reaches them all).
      .use(alertsPageRoutes(ctx, guards))
      .use(incidentsPageRoutes(ctx, guards))
      .use(digestPageRoutes(ctx, guards))
      .use(preflightPageRoutes(ctx, guards))
      .use(backupsPageRoutes(ctx, guards))
  );
}
