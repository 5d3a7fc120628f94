// GET /api/messenger/ops/health: what an operator checks when players say the bot is quiet.
import type { AppContext } from "../context";
import { countersSince, hourOf } from "./counters";
import { outboxBacklog, recentErrors } from "./store/bot";

export async function opsHealth(ctx: AppContext, hours: number, limit: number) {
  const now = ctx.clock.now().getTime();
  const since = hourOf(now - (hours - 1) * 3_600_000);
  const byMetric: Record<string, Record<string, number>> = {};
  for (const r of await countersSince(ctx, since)) (byMetric[r.metric] ??= {})[r.label] = r.count;
  const total = (m: string) => Object.values(byMetric[m] ?? {}).reduce((a, b) => a + b, 0);
  return {
    configured: {
      bot_token: ctx.config.messenger.botToken !== undefined,
      webhook_secret: ctx.config.messenger.webhookSecret !== undefined,
      init_data_mode: ctx.config.messenger.initDataMode,
    },
    window: { hours, since_hour_utc: since },
    updates: {
      received: total("updates_received"),
      replays_suppressed: total("updates_replayed"),
      by_kind: byMetric.updates_received ?? {},
      ignored: total("updates_ignored"),
      ignored_by_reason: byMetric.updates_ignored ?? {},
    },
    init_data_failures: { total: total("init_data_failures"), by_reason: byMetric.init_data_failures ?? {} },
    plays: { total: total("plays"), by_game: byMetric.plays ?? {} },
    bot_api: {
      messages_sent: total("bot_messages_sent"),
      errors: total("bot_api_errors"),
      errors_by_status: byMetric.bot_api_errors ?? {},
      recent_errors: await recentErrors(ctx.store, limit),
    },
    outbox: await outboxBacklog(ctx.store),
  };
}
