import { Elysia } from "elysia";
import { bodyChecks, createOrUpdate } from "../../http/openapi/contract";
import type { Guards } from "../../auth/guards";
import type { AppContext } from "../../context";
import { isTruthyFlag } from "../../http/envelope";
import { PromoModel } from "../games/promos-model";
import { createPromo, listPromos } from "../games/promos";
import { answers, ok, requireMessengerBot } from "../route-common";
import { listAudienceGroups, saveAudienceGroup } from "../config/audiences";
import { listCatalogCampaigns, saveCatalogCampaign } from "../config/campaigns";
import { catalogPreview } from "./catalog-preview";
import { messengerConsolePageRoutes } from "./console-page";
import { GamesConfigModel as M } from "../config/model";
import { listWheelCampaigns, saveWheelCampaign } from "../config/wheel-campaigns";

/**
 * Operator routes for the games configuration (docs/messenger-admin-games.md); every change is audited in its own
 * transaction. The console page (console-page.ts) is mounted first, before the bot-token hook: without a bot token it
 * says so itself.
 */
export function adminGamesConfigRoutes(ctx: AppContext, guards: Guards) {
  return new Elysia({ name: "herald:messenger-admin-games-config" })
    .use(messengerConsolePageRoutes(ctx, guards))
    .use(guards.admin.plugin)
    .use(guards.operator.plugin)
    .onBeforeHandle(requireMessengerBot(ctx))
    .get("/api/messenger/admin/games/audience-groups", async ({ query }) => ok(await listAudienceGroups(ctx, query)), {
      operator: "api",
      query: M.groupsQuery,
      ...answers(M.groups, "Audience groups: the built-in ones, then the operator groups with their rules (operator; limit/offset/cursor)"),
    })
    .post("/api/messenger/admin/games/audience-groups", async ({ admin, body }) => ok(await saveAudienceGroup(ctx, admin, body)), {
      admin: true,
      body: M.groupBody,
      ...answers(
        M.groupSaved,
        "Create an audience group, or change one with update: true (operator; audited)",
        // An empty rule would be the built-in group all: saveAudienceGroup refuses it.
        { ...createOrUpdate("update", ["group_key", "title", "rule"]), ...bodyChecks({ rule: { minProperties: 1 } }) },
      ),
    })
    .get(
      "/api/messenger/admin/games/catalog-campaigns",
      async ({ query }) => ok(await listCatalogCampaigns(ctx, { game_key: query.game_key, include_disabled: isTruthyFlag(query.include_disabled) }, query)),
      {
        operator: "api",
        query: M.campaignsQuery,
        ...answers(M.campaigns, "Catalog campaigns: which audience may launch which game, and when (operator; limit/offset/cursor)"),
      },
    )
    .post("/api/messenger/admin/games/catalog-campaigns", async ({ admin, body }) => ok(await saveCatalogCampaign(ctx, admin, body)), {
      admin: true,
      body: M.campaignBody,
      ...answers(
        M.campaignSaved,
        "Create a catalog campaign, or update/disable one by id (operator; audited; overlaps are 409)",
        createOrUpdate("id", ["game_key", "audience_group", "title"]),
      ),
    })
    .get("/api/messenger/admin/games/wheel-campaigns", async ({ query }) => ok(await listWheelCampaigns(ctx, isTruthyFlag(query.include_disabled), query)), {
      operator: "api",
      query: M.wheelsQuery,
      ...answers(M.wheels, "Wheel campaigns with segments and expected value per spin, and the built-in default (operator; limit/offset/cursor)"),
    })
    .post("/api/messenger/admin/games/wheel-campaigns", async ({ admin, body }) => ok(await saveWheelCampaign(ctx, admin, body)), {
      admin: true,
      body: M.wheelBody,
      ...answers(
        M.wheelSaved,
        "Create a wheel campaign, or change one with update: true (operator; audited; weights validated, overlaps are 409)",
        createOrUpdate("update", ["campaign_key", "title", "audience_group", "segments", "cooldown_seconds"]),
      ),
    })
    .get("/api/messenger/admin/games/promos", async ({ query }) => ok(await listPromos(ctx, isTruthyFlag(query.include_disabled), query)), {
      operator: "api",
      query: PromoModel.listQuery,
      ...answers(PromoModel.list, "Promo codes, enabled ones unless include_disabled (operator; limit/offset/cursor)"),
    })
    .post("/api/messenger/admin/games/promos", async ({ admin, body }) => ok(await createPromo(ctx, admin, body)), {
      admin: true,
      body: PromoModel.createBody,
      ...answers(
        PromoModel.created,
        "Create a promo code, or change its cap, expiry, audience or state with update: true (operator; audited)",
        createOrUpdate("update", ["code", "reward", "max_claims"]),
      ),
    })
    .get(
      "/api/messenger/admin/games/catalog-preview",
      async ({ query }) =>
        ok(
          await catalogPreview(ctx, {
            telegram_user_id: query.telegram_user_id,
            linked_user_id: query.linked_user_id,
            admin_view: isTruthyFlag(query.admin_view),
          }),
        ),
      {
        operator: "api",
        query: M.previewQuery,
        ...answers(M.preview, "What a player (or a hypothetical one) sees in the catalog and on the wheel, and why (operator; read-only)"),
      },
    );
}
