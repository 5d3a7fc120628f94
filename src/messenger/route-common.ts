// What every messenger route module shares: the error responses it documents, its OpenAPI tag, and the 503 of
// an unconfigured bot.
import type { AppContext } from "../context";
import { refuses, tagged } from "../http/routes/declare";
import { AppError } from "../http/errors";

export const messengerErrors = refuses(401, 403, 404, 409, 410, 422, 429);
export const messengerTag = tagged("messenger");

/**
 * A beforeHandle hook: every messenger route, the operator ones included, answers 503 without a bot token. On
 * operator routes it runs after the admin check (the admin macro's transform hook), so only operators see the 503.
 */
export const requireMessengerBot = (ctx: AppContext) => () => {
  if (!ctx.config.messenger.botToken)
    throw new AppError("messenger_not_configured", "The messenger bot is not configured on this service (MESSENGER_BOT_TOKEN is unset)");
};
