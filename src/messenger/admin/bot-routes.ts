import type { Guards } from "../../auth/guards";
import type { AppContext } from "../../context";
import { flagOn } from "../../http/envelope";
import { answers, ok, operatorRoutes } from "../route-common";
import { botCommandHelper } from "./bot-command-helper";
import { BotAdminModel as B } from "./bot-model";
import { botPreview } from "./bot-preview";
import { botReadiness } from "./bot-readiness";

/**
 * Operator routes under /api/messenger/admin/bot (docs/messenger-admin-bot.md). Admin token or the operator session
 * cookie (`operator: "api"`, linked from /admin/console/messenger); 503 without a bot token.
 */
export function adminBotRoutes(ctx: AppContext, guards: Guards) {
  return operatorRoutes(ctx, guards, "herald:messenger-admin-bot")
    .get("/api/messenger/admin/bot/bootstrap-readiness", async ({ query }) => ok(await botReadiness(ctx, flagOn(query.live))), {
      operator: "api",
      query: B.readinessQuery,
      ...answers(
        B.readiness,
        "Bot readiness: named checks of token, secret, base URL, outbox, updates, the mini-app URL; live=1 asks getMe, getWebhookInfo and getChatMenuButton (the menu button opens the mini-app)",
      ),
    })
    .get("/api/messenger/admin/bot/command-helper", () => ok(botCommandHelper(ctx)), {
      operator: "api",
      query: B.helperQuery,
      ...answers(B.commandHelper, "The commands the bot answers and the exact setMyCommands payload"),
    })
    .get(
      "/api/messenger/admin/bot/preview",
      async ({ query }) => ok(await botPreview(ctx, { hours: query.hours ?? 24, limit: query.limit ?? 20, live: flagOn(query.live) })),
      {
        operator: "api",
        query: B.previewQuery,
        ...answers(B.preview, "What the bot received and sent per hour, recent updates and replies; live=1 adds Telegram's pending update count"),
      },
    );
}
