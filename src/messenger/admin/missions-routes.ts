import { Elysia } from "elysia";
import type { Guards } from "../../auth/guards";
import type { AppContext } from "../../context";
import { requireMessengerBot } from "../route-common";

/** Operator routes under /api/messenger/admin (docs/messenger-admin.md). Admin token; 503 without a bot token. */
export function adminMissionsRoutes(ctx: AppContext, guards: Guards) {
  return new Elysia({ name: "herald:messenger-admin-missions" }).use(guards.admin.plugin).onBeforeHandle(requireMessengerBot(ctx));
}
