// What every messenger route module shares: the error responses it documents, its OpenAPI tag, the 503 of an
// unconfigured bot, and the shape of an answer.
import { Elysia, type TSchema } from "elysia";
import type { Guards } from "../auth/guards";
import type { AppContext } from "../context";
import { refuses, tagged } from "../http/routes/declare";
import { AppError } from "../http/errors/errors";

export const messengerErrors = refuses(401, 403, 404, 409, 410, 422, 429);
export const messengerTag = tagged("messenger");

export { ok } from "../http/envelope";

/**
 * A route's `response` and `detail`: its 200 schema beside the messenger refusals, its summary under the messenger
 * tag, and what else its detail says (`more`).
 */
export const answers = <S extends TSchema, D extends object = Record<never, never>>(schema: S, summary: string, more?: D) => ({
  response: { 200: schema, ...messengerErrors },
  detail: { ...messengerTag(summary), ...(more as D) },
});

/**
 * A beforeHandle hook: every messenger route, the operator ones included, answers 503 without a bot token. On
 * operator routes it runs after the admin check (the admin macro's transform hook), so only operators see the 503.
 */
export const requireMessengerBot = (ctx: AppContext) => () => {
  if (!ctx.config.messenger.botToken) throw botNotConfigured();
};

/** An operator route module: the admin token or the operator session cookie, then requireMessengerBot. */
export const operatorRoutes = (ctx: AppContext, guards: Guards, name: string) =>
  new Elysia({ name }).use(guards.admin.plugin).use(guards.operator.plugin).onBeforeHandle(requireMessengerBot(ctx));

export const botNotConfigured = () =>
  new AppError("messenger_not_configured", "The messenger bot is not configured on this service (MESSENGER_BOT_TOKEN is unset)");
