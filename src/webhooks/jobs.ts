import type { AppContext } from "../context";
import { deliveryHealth } from "./deliveries";

const DAY_MS = 86_400_000;
const DEAD_LETTER_RETENTION_DAYS = 90;

export function registerWebhookJobs(ctx: AppContext): void {
  ctx.jobs.register({
    name: "webhook-dispatch",
    pattern: "* * * * * *",
    description: "Sends due webhook deliveries (also nudged right after each commit); records only runs that sent something",
    quietWhenIdle: true,
    run: () => ctx.dispatcher.runOnceCounted(),
  });
  ctx.jobs.register({
    name: "webhook-prune",
    pattern: "0 41 4 * * *",
    description: "Deletes succeeded deliveries and their attempts after WEBHOOK_RETENTION_DAYS, dead letters after 90 days",
    run: () => {
      const now = ctx.clock.now().getTime();
      const succeededBefore = new Date(now - ctx.config.webhooks.retentionDays * DAY_MS).toISOString();
      const deadBefore = new Date(now - DEAD_LETTER_RETENTION_DAYS * DAY_MS).toISOString();
      const db = ctx.db.sqlite;
      const deleted = db.transaction(() => {
        const doomed = `SELECT id FROM webhook_deliveries WHERE (status IN ('succeeded', 'cancelled') AND updated_at < ?1) OR (status = 'dead_letter' AND updated_at < ?2)`;
        db.query(`DELETE FROM webhook_attempts WHERE delivery_id IN (${doomed})`).run(succeededBefore, deadBefore);
        return db.query(`DELETE FROM webhook_deliveries WHERE id IN (${doomed})`).run(succeededBefore, deadBefore).changes;
      })();
      ctx.log.info("webhook deliveries pruned", { deleted });
    },
  });
  ctx.metrics.gauge("herald_webhook_backlog", "Webhook deliveries queued or in flight.", () => deliveryHealth(ctx, null).pending_events);
  ctx.metrics.gauge("herald_webhook_dead_letters", "Webhook deliveries in the dead-letter queue.", () => deliveryHealth(ctx, null).dead_letter_events);
}
