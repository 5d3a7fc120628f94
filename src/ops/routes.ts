import { Elysia } from "elysia";
import type { Guards } from "../auth/guards";
import type { AppContext } from "../context";
import { alertsMonitorRoutes } from "./alerts/routes";
import { backupsRoutes } from "./backups/routes";
import { operatorPagesRoutes } from "./console/config-page";
import { digestRoutes } from "./digest/routes";
import { opsIncidentsRoutes } from "./incidents/routes";
import { linkExportsRoutes } from "./link-inbox/exports-routes";
import { linkInboxRoutes } from "./link-inbox/routes";
import { preflightRoutes } from "./preflight/routes";
import { readinessRoutes } from "./readiness/routes";

/**
 * Every operator route, one plugin per area (the sub-rooms of src/ops/: alerts, backups, digest, incidents,
 * link-inbox, preflight, readiness, and console/ for the pages and the sign-in), mounted by app.ts as one.
 */
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
    .use(operatorPagesRoutes(ctx, guards));
}
