// What every messenger route module shares: the error responses it documents, its OpenAPI tag, and the 503 of
// an unconfigured bot.
import type { AppContext } from "../context";
import { ErrorBody } from "../http/envelope";
import { AppError } from "../http/errors";

export const messengerErrors = {
  400: ErrorBody,
  401: ErrorBody,
  403: ErrorBody,
  404: ErrorBody,
  409: ErrorBody,
  410: ErrorBody,
  422: ErrorBody,
  429: ErrorBody,
  503: ErrorBody,
};
export const messengerTag = (summary: string) => ({ tags: ["messenger"], summary });

/**
 * A beforeHandle hook: every messenger route, the operator ones included, answers 503 without a bot token. On
 * operator routes it runs after the admin check (the admin macro's transform hook), so only operators see the 503.
 */
export const requireMessengerBot = (ctx: AppContext) => () => {
  if (!ctx.config.messenger.botToken)
    throw new AppError("messenger_not_configured", "The messenger bot is not configured on this service (MESSENGER_BOT_TOKEN is unset)");
};
