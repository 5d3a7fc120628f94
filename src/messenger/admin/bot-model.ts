// Schemas of the operators' bot routes (docs/messenger-admin-bot.md).
import { t } from "elysia";
import { Envelope, FLAG_VALUES } from "../../http/envelope";
import { named } from "../../http/openapi/names";
import { intQuery } from "../../http/params";
import { nullable } from "../../http/routes/declare";

const counts = t.Record(t.String(), t.Integer());
const liveFlag = t.Optional(
  t.Union(
    FLAG_VALUES.map((v) => t.Literal(v)),
    { description: "1, true or the bare flag: also ask the Bot API (getMe, getWebhookInfo; 5 s timeout each); default off" },
  ),
);

export const ReadinessCheck = named(
  "MessengerBotReadinessCheck",
  t.Object({
    name: t.String(),
    status: t.Union([t.Literal("pass"), t.Literal("warn"), t.Literal("fail"), t.Literal("skipped")]),
    observed: t.String({ description: "what was seen (never a secret; the token only as a fingerprint)" }),
    expected: t.String(),
    fix: t.Union([t.String(), t.Null()], { description: "the exact change that makes the check pass; null when it passes" }),
  }),
);

const BotApiCall = (name: string) =>
  named(
    name,
    t.Object({
      method: t.String(),
      endpoint: t.String({ description: "MESSENGER_BOT_API_BASE with a <BOT_TOKEN> placeholder" }),
      payload: t.Record(t.String(), t.Any()),
      curl: t.String(),
    }),
  );

const RecentUpdate = t.Object({
  update_id: t.Integer(),
  kind: t.String(),
  command: nullable(t.String()),
  chat_id: nullable(t.Integer()),
  received_at: t.String(),
});
const RecentSent = t.Object({
  id: t.Integer(),
  update_id: nullable(t.Integer()),
  chat_id: t.Integer(),
  method: t.String(),
  status: t.String(),
  attempts: t.Integer(),
  created_at: t.String(),
  sent_at: nullable(t.String()),
  last_error: nullable(t.String()),
});

export const BotAdminModel = {
  readinessQuery: t.Object({ live: liveFlag, include_meta: t.Optional(t.String()) }),
  helperQuery: t.Object({ include_meta: t.Optional(t.String()) }),
  readiness: named(
    "MessengerBotReadiness",
    Envelope({
      live: t.Boolean(),
      checked_at: t.String(),
      ready: t.Boolean({ description: "true when no check fails" }),
      summary: t.Object({ pass: t.Integer(), warn: t.Integer(), fail: t.Integer(), skipped: t.Integer() }),
      expected_webhook_url: t.String(),
      set_webhook: BotApiCall("MessengerBotSetWebhookCall"),
      checks: t.Array(ReadinessCheck),
    }),
  ),
  commandHelper: named(
    "MessengerBotCommandHelper",
    Envelope({
      commands: t.Array(t.Object({ command: t.String(), description: t.String(), valid_for_telegram: t.Boolean() })),
      unknown_command_reply: t.String(),
      set_my_commands: BotApiCall("MessengerBotSetMyCommandsCall"),
    }),
  ),
  previewQuery: t.Object({
    hours: intQuery({ minimum: 1, maximum: 168, defaultValue: 24, description: "hours of history, the current hour included" }),
    limit: intQuery({ minimum: 1, maximum: 100, defaultValue: 20, description: "recent updates, replies and errors listed" }),
    live: liveFlag,
    include_meta: t.Optional(t.String()),
  }),
  preview: named(
    "MessengerBotPreview",
    Envelope({
      window: t.Object({ hours: t.Integer(), since_hour_utc: t.String(), limit: t.Integer() }),
      received: t.Object({
        total: t.Integer(),
        by_kind: counts,
        by_command: counts,
        by_command_capped: t.Boolean(),
        recent: t.Array(RecentUpdate),
      }),
      sent: t.Object({
        total_sent: t.Integer(),
        bot_api_errors: t.Integer(),
        queued_by_status: counts,
        queued_by_method: counts,
        queued_capped: t.Boolean(),
        backlog: t.Object({ pending: t.Integer(), dead: t.Integer(), oldest_pending_at: nullable(t.String()) }),
        recent: t.Array(RecentSent),
        last_errors: t.Array(
          t.Object({ id: t.Integer(), method: t.String(), status: t.String(), attempts: t.Integer(), last_error: t.String(), next_attempt_at: t.String() }),
        ),
      }),
      hourly: t.Array(
        t.Object({ hour: t.String(), updates_by_kind: counts, updates_by_command: counts, sent_by_method: counts, bot_api_errors_by_status: counts }),
      ),
      live: t.Union([
        t.Object({
          ok: t.Boolean(),
          error: nullable(t.String()),
          pending_update_count: nullable(t.Integer()),
          url_matches: nullable(t.Boolean()),
          last_error_date: nullable(t.String()),
          last_error_message: nullable(t.String()),
        }),
        t.Null(),
      ]),
    }),
  ),
};
