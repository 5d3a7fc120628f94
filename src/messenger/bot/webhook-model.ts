// The bot webhook's request and answer schemas (POST /api/messenger/webhook; docs/messenger.md, Bot webhook).
import { t } from "elysia";
import { Envelope } from "../../http/envelope";
import { named } from "../../http/openapi/names";
import { IGNORED_REASONS } from "./webhook";
import { nullable } from "../../http/routes/declare";

const TgUser = t.Object(
  {
    id: t.Integer({ minimum: 1, maximum: Number.MAX_SAFE_INTEGER }),
    is_bot: t.Optional(t.Boolean()),
    first_name: t.Optional(t.String({ maxLength: 256 })),
    last_name: t.Optional(t.String({ maxLength: 256 })),
    username: t.Optional(t.String({ maxLength: 64 })),
    language_code: t.Optional(t.String({ maxLength: 35 })),
    is_premium: t.Optional(t.Boolean()),
  },
  { additionalProperties: true },
);

/** A Telegram Update: only the fields the bot acts on are typed; the other update kinds pass through unread. */
export const WebhookModel = {
  /**
   * The secret-token headers, for the OpenAPI document: the check itself runs before validation (a wrong or
   * missing secret is 401 webhook_secret_invalid, not 400). Other headers are allowed.
   */
  headers: t.Object(
    {
      "x-telegram-bot-api-secret-token": t.Optional(
        t.String({
          maxLength: 256,
          description: "The secret_token given to setWebhook; Telegram sends it on every update (required unless the next one is sent)",
        }),
      ),
      "x-messenger-bot-api-secret-token": t.Optional(
        t.String({ maxLength: 256, description: "The spec's name for the same header (read when X-Telegram-Bot-Api-Secret-Token is absent)" }),
      ),
    },
    { additionalProperties: true },
  ),
  update: named(
    "MessengerUpdate",
    t.Object(
      {
        update_id: t.Integer({
          minimum: 0,
          maximum: Number.MAX_SAFE_INTEGER,
          description: "Telegram's update id: a repeated id is acknowledged and not processed again",
        }),
        message: t.Optional(
          t.Object(
            {
              message_id: t.Integer({ minimum: 0, maximum: Number.MAX_SAFE_INTEGER }),
              date: t.Optional(t.Integer({ minimum: 0, maximum: Number.MAX_SAFE_INTEGER })),
              chat: t.Object(
                { id: t.Integer({ minimum: -Number.MAX_SAFE_INTEGER, maximum: Number.MAX_SAFE_INTEGER }), type: t.Optional(t.String({ maxLength: 32 })) },
                { additionalProperties: true },
              ),
              from: t.Optional(TgUser),
              text: t.Optional(t.String({ maxLength: 4096 })),
            },
            { additionalProperties: true },
          ),
        ),
      },
      { additionalProperties: true },
    ),
  ),
  ack: named(
    "MessengerUpdateAck",
    Envelope({
      update_id: t.Integer(),
      duplicate: t.Boolean({ description: "true: this update_id was seen before; nothing was done again" }),
      handled: t.Boolean({ description: "true: a command this bot answers (private chat, addressed to no bot or to this one)" }),
      ignored_reason: nullable(
        t.UnionEnum(["duplicate", ...IGNORED_REASONS] as const, {
          description: "Why the update got no answer (null when handled); recorded in the updates_ignored counter",
        }),
      ),
      replies_queued: t.Integer({ description: "Bot replies written to the outbox (sent by the messenger-bot-outbox job)" }),
    }),
  ),
};
