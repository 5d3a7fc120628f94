import { Elysia } from "elysia";
import { createOrUpdate } from "../../http/openapi/contract";
import type { Guards } from "../../auth/guards";
import type { AppContext } from "../../context";
import { isTruthyFlag } from "../../http/envelope";
import { PromoModel } from "../games/promos-model";
import { createPromo, listPromos } from "../games/promos";
import { messengerErrors, messengerTag, requireMessengerBot } from "../route-common";
import { listAudienceGroups, saveAudienceGroup } from "../config/audiences";
import { listCatalogCampaigns, saveCatalogCampaign } from "../config/campaigns";
import { catalogPreview } from "./catalog-preview";
import { messengerConsolePageRoutes } from "./console-page";
import { GamesConfigModel as M } from "../config/model";
import { listWheelCampaigns, saveWheelCampaign } from "../config/wheel-campaigns";

/**
 * Operator routes for the games configuration under /api/messenger/admin/games (docs/messenger-admin-games.md):
 * audience groups, catalog campaigns, wheel campaigns, promo codes and the catalog preview. Admin token (the GETs
 * also the operator session cookie: `operator: "api"`); 503 without a bot token. Every change is audited in its own
 * transaction. The console page /admin/console/messenger (console-page.ts) is mounted first, before the bot-token
 * hook: without a bot token it says so itself.
 */
export function adminGamesConfigRoutes(ctx: AppContext, guards: Guards) {
  return new Elysia({ name: "herald:messenger-admin-games-config" })
    .use(messengerConsolePageRoutes(ctx, guards))
    .use(guards.admin.plugin)
    .use(guards.operator.plugin)
    .onBeforeHandle(requireMessengerBot(ctx))
    .get("/api/messenger/admin/games/audience-groups", async ({ query }) => ({ success: true as const, ...(await listAudienceGroups(ctx, query)) }), {
      operator: "api",
      query: M.groupsQuery,
      response: { 200: M.groups, ...messengerErrors },
      detail: messengerTag("Audience groups: the built-in ones, then the operator groups with their rules (operator; limit/offset/cursor)"),
    })
    .post(
      "/api/messenger/admin/games/audience-groups",
      async ({ admin, body }) => ({ success: true as const, ...(await saveAudienceGroup(ctx, admin, body)) }),
      {
        admin: true,
        body: M.groupBody,
        response: { 200: M.groupSaved, ...messengerErrors },
        detail: {
          ...messengerTag("Create an audience group, or change one with update: true (operator; audited)"),
          ...createOrUpdate("update", ["group_key", "title", "rule"]),
        },
      },
    )
    .get(
      "/api/messenger/admin/games/catalog-campaigns",
      async ({ query }) => ({
        success: true as const,
        ...(await listCatalogCampaigns(ctx, { game_key: query.game_key, include_disabled: isTruthyFlag(query.include_disabled) }, query)),
      }),
      {
        operator: "api",
        query: M.campaignsQuery,
        response: { 200: M.campaigns, ...messengerErrors },
        detail: messengerTag("Catalog campaigns: which audience may launch which game, and when (operator; limit/offset/cursor)"),
      },
    )
    .post(
      "/api/messenger/admin/games/catalog-campaigns",
      async ({ admin, body }) => ({ success: true as const, ...(await saveCatalogCampaign(ctx, admin, body)) }),
      {
        admin: true,
        body: M.campaignBody,
        response: { 200: M.campaignSaved, ...messengerErrors },
        detail: {
          ...messengerTag("Create a catalog campaign, or update/disable one by id (operator; audited; overlaps are 409)"),
          ...createOrUpdate("id", ["game_key", "audience_group", "title"]),
        },
      },
    )
    .get(
      "/api/messenger/admin/games/wheel-campaigns",
      async ({ query }) => ({ success: true as const, ...(await listWheelCampaigns(ctx, isTruthyFlag(query.include_disabled), query)) }),
      {
        operator: "api",
        query: M.wheelsQuery,
        response: { 200: M.wheels, ...messengerErrors },
        detail: messengerTag("Wheel campaigns with segments and expected value per spin, and the built-in default (operator; limit/offset/cursor)"),
      },
    )
    .post(
      "/api/messenger/admin/games/wheel-campaigns",
      async ({ admin, body }) => ({ success: true as const, ...(await saveWheelCampaign(ctx, admin, body)) }),
      {
        admin: true,
        body: M.wheelBody,
        response: { 200: M.wheelSaved, ...messengerErrors },
        detail: {
          ...messengerTag("Create a wheel campaign, or change one with update: true (operator; audited; weights validated, overlaps are 409)"),
          ...createOrUpdate("update", ["campaign_key", "title", "audience_group", "segments", "cooldown_seconds"]),
        },
      },
    )
    .get(
      "/api/messenger/admin/games/promos",
      async ({ query }) => ({ success: true as const, ...(await listPromos(ctx, isTruthyFlag(query.include_disabled), query)) }),
      {
        operator: "api",
        query: PromoModel.listQuery,
        response: { 200: PromoModel.list, ...messengerErrors },
        detail: messengerTag("Promo codes, enabled ones unless include_disabled (operator; limit/offset/cursor)"),
      },
    )
    .post("/api/messenger/admin/games/promos", async ({ admin, body }) => ({ success: true as const, ...(await createPromo(ctx, admin, body)) }), {
      admin: true,
      body: PromoModel.createBody,
      response: { 200: PromoModel.created, ...messengerErrors },
      detail: messengerTag("Create a promo code, or change its cap, expiry, audience or state with update: true (operator; audited)"),
    })
    .get(
      "/api/messenger/admin/games/catalog-preview",
      async ({ query }) => ({
        success: true as const,
        ...(await catalogPreview(ctx, {
          telegram_user_id: query.telegram_user_id,
          linked_user_id: query.linked_user_id,
          admin_view: isTruthyFlag(query.admin_view),
        })),
      }),
      {
        operator: "api",
        query: M.previewQuery,
        response: { 200: M.preview, ...messengerErrors },
        detail: messengerTag("What a player (or a hypothetical one) sees in the catalog and on the wheel, and why (operator; read-only)"),
      },
    );
}
