import type { AppContext } from "../context";
import { DAILY_PRUNE_MAX_MS } from "../db/batched-delete";
import { deliveryHealth } from "./deliveries";
import { pruneDeliveries } from "./deliveries-store";

const DAY_MS = 86_400_000;
const DEAD_LETTER_RETENTION_DAYS = 90;

export function registerWebhookJobs(ctx: AppContext): void {
  ctx.jobs.register({
    name: "webhook-dispatch",
    pattern: "* * * * * *",
    description: "Sends due webhook deliveries (also nudged right after each commit); records only runs that sent something",
    quietWhenIdle: true,
    everyInstance: true, // deliveries are leased one by one: every instance drains the queue
    run: () => ctx.dispatcher.runOnceCounted(),
  });
  ctx.jobs.register({
    name: "webhook-prune",
    pattern: "0 41 4 * * *",
    description: "Deletes succeeded deliveries and their attempts after WEBHOOK_RETENTION_DAYS, dead letters after 90 days",
    run: async () => {
      const now = ctx.clock.now().getTime();
      const succeededBefore = new Date(now - ctx.config.webhooks.retentionDays * DAY_MS).toISOString();
      const deadBefore = new Date(now - DEAD_LETTER_RETENTION_DAYS * DAY_MS).toISOString();
      // Bounded batches, bounded in time: rows the bound left (done: false) go at the next day's run.
      const { deleted, done } = await pruneDeliveries(ctx.store, succeededBefore, deadBefore, { maxMs: DAILY_PRUNE_MAX_MS });
      ctx.log.info("webhook deliveries pruned", { deleted, done });
    },
  });
  // Read at scrape time, over the store (either engine): the counts are the database's, the same on every instance.
  ctx.metrics.asyncGauge("herald_webhook_backlog", "Webhook deliveries queued or in flight.", async () => (await deliveryHealth(ctx, null)).pending_events);
  ctx.metrics.asyncGauge(
    "herald_webhook_dead_letters",
    "Webhook deliveries in the dead-letter queue.",
    async () => (await deliveryHealth(ctx, null)).dead_letter_events,
  );
}
