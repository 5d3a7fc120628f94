import { Elysia, type AnyElysia } from "elysia";
import { assertValidationSurvivesBuild } from "./http/build-check";
import type { AppContext } from "./context";
import { httpCore, RequestStates } from "./http/core";
import { applyHookScopes } from "./http/hook-scope";
import { exportUsageHook } from "./ops/export-usage/recorder";
import { openApiRoutes } from "./http/openapi/routes";
import { RouteIndex } from "./http/routes/route-index";
import { systemRoutes } from "./system/routes";
import { buildGuards } from "./auth/guards";
import { authRoutes } from "./auth/routes";
import { consoleRoutes } from "./console/routes";
import { partnerRoutes } from "./partner/routes";
import { webhookRoutes, webhookRoutesFor } from "./webhooks/routes";
import { opsRoutes } from "./ops/routes";
import { userRoutes, userRoutesFor } from "./partner/users-routes";
import { donationRoutes } from "./donations/routes";
import { claimPageRoutes } from "./donations/claim-page";
import { miniAppPageRoutes } from "./miniapp/page";
import { partnerStatusRoutes } from "./partner/status-routes";
import { salutesRoutes, salutesRoutesFor } from "./salutes/routes";
import { chainRoutes } from "./chain/routes";
import { audioShareRoutes } from "./audio-share/routes";
import { statusRoutes } from "./status/routes";
import { statusAdminRoutes } from "./status/admin-routes";
import { transparencyRoutes } from "./transparency/routes";
import { transparencyAdminRoutes } from "./transparency/admin/admin-routes";
import { developerRoutes } from "./developers/routes";
import { sandboxMount } from "./sandbox/mount";
import { sandboxRoutes } from "./sandbox/routes";
import { messengerRoutes } from "./messenger/routes";
import { adminGamesConfigRoutes } from "./messenger/admin/games-config-routes";
import { adminAnalyticsRoutes } from "./messenger/admin/analytics-routes";
import { adminMissionsRoutes } from "./messenger/admin/missions-routes";
import { adminBotRoutes } from "./messenger/admin/bot-routes";

/**
 * Composes the whole HTTP surface over a context. Pure: opens nothing, starts nothing — tests call
 * `buildApp(ctx).handle(request)` and main.ts calls `listen`.
 */
export function buildApp(ctx: AppContext) {
  assertValidationSurvivesBuild();
  const states = new RequestStates();
  const routes = new RouteIndex();
  // The OpenAPI routes describe the finished app, which exists only after they are added.
  const finished: { app?: AnyElysia } = {};
  const guards = buildGuards(ctx, states);
  const sandbox = sandboxMount(ctx);
  // normalize: false — unknown body fields are REFUSED (400) where a schema says additionalProperties: false,
  // instead of silently stripped (a typo like `descripton` must not be a quiet no-op).
  const app = new Elysia({ name: "herald", normalize: false, encodeSchema: false })
    // The export-usage recorder counts /admin/ops export downloads: a global hook, so it goes in with the core.
    .use(httpCore(ctx, states, routes, [exportUsageHook(ctx)]))
    .use(systemRoutes(ctx, guards))
    // The console's door (sign-in, sessions) and its page over the partner keys, then the keys' JSON routes.
    .use(consoleRoutes(ctx, guards))
    .use(authRoutes(guards))
    .use(partnerRoutes(ctx, guards))
    .use(webhookRoutes(ctx, guards))
    // Every operator route and page (src/ops/routes.ts composes the areas).
    .use(opsRoutes(ctx, guards))
    .use(userRoutes(ctx, guards))
    .use(donationRoutes(ctx, guards))
    // The pages for people outside the console: a donation claim's recipient, the players' mini-app.
    .use(claimPageRoutes(ctx).use(miniAppPageRoutes(ctx.config.messenger.miniAppPath)))
    .use(partnerStatusRoutes(ctx, guards))
    .use(salutesRoutes(ctx, guards))
    .use(chainRoutes(ctx, guards))
    .use(audioShareRoutes(ctx, guards))
    .use(statusRoutes(ctx, guards))
    .use(statusAdminRoutes(ctx, guards))
    .use(transparencyRoutes(ctx, guards))
    .use(transparencyAdminRoutes(ctx, guards))
    .use(developerRoutes(ctx, guards))
    // The sandbox's own routes, and the partner's users, salutes and webhooks once more, for sandbox keys on their
    // sandbox rows: declared once by their rooms, mounted live above and sandbox here (src/auth/partner-mount.ts).
    .use(
      sandboxRoutes(ctx, guards)
        .use(userRoutesFor(ctx, guards, sandbox))
        .use(salutesRoutesFor(ctx, guards, sandbox))
        .use(webhookRoutesFor(ctx, guards, sandbox)),
    )
    .use(messengerRoutes(ctx, guards, states))
    .use(adminGamesConfigRoutes(ctx, guards))
    .use(adminAnalyticsRoutes(ctx, guards))
    .use(adminMissionsRoutes(ctx, guards))
    .use(adminBotRoutes(ctx, guards))
    .use(openApiRoutes(() => finished.app!, ctx));
  finished.app = app as unknown as AnyElysia;
  routes.load(app.routes);
  // Global hooks off the routes they do not serve (compression off the signed routes, the export recorder on exports only).
  applyHookScopes(app.router.history as never);
  return app;
}

export type HeraldApp = ReturnType<typeof buildApp>;
