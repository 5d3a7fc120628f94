import type { AppContext } from "../context";
import { DAILY_PRUNE_MAX_MS } from "../db/batched-delete";
import { deliveryHealth } from "./deliveries";
import { pruneDeliveries } from "./deliveries-store";
import { cancelPendingOfDeleted } from "./store";

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
    description:
      "Cancels what deleted webhooks still have pending; deletes succeeded deliveries and their attempts after WEBHOOK_RETENTION_DAYS, dead letters after 90 days",
    run: async () => {
      const now = ctx.clock.now().getTime();
      // A delete whose batches after its commit were cut short (the process stopped) left pending deliveries; the
      // dispatcher cancels each as it comes due, and this sweep the rest, in batches.
      const swept = await cancelPendingOfDeleted(ctx.store, new Date(now).toISOString(), { maxMs: DAILY_PRUNE_MAX_MS });
      if (swept.cancelled > 0 || !swept.done) ctx.log.info("deleted webhooks' deliveries cancelled", { cancelled: swept.cancelled, done: swept.done });
      const succeededBefore = new Date(now - ctx.config.webhooks.retentionDays * DAY_MS).toISOString();
      const deadBefore = new Date(now - DEAD_LETTER_RETENTION_DAYS * DAY_MS).toISOString();
      // Bounded batches, bounded in time: rows the bound left (done: false) go at the next day's run.
      const { deleted, done } = await pruneDeliveries(ctx.store, succeededBefore, deadBefore, { maxMs: DAILY_PRUNE_MAX_MS });
      ctx.log.info("webhook deliveries pruned", { deleted, done });
    },
  });
  // One read (at most one a second, apart from the event loop) serves both gauges, and a scrape answers from the last
  // read while a newer one runs: /metrics never waits on a count whose cost is the backlog's.
  const counts = sharedRead(() => deliveryHealth(ctx, null), 1_000);
  ctx.metrics.gauge("herald_webhook_backlog", "Webhook deliveries queued or in flight.", async () => (await counts()).pending_events);
  ctx.metrics.gauge("herald_webhook_dead_letters", "Webhook deliveries in the dead-letter queue.", async () => (await counts()).dead_letter_events);
}

/**
 * `read` shared by callers within `maxAgeMs` of its last start; past that, the next caller starts a new read and,
 * while it runs, gets the last value read (a caller with no value yet waits for the read, and gets its error).
 */
function sharedRead<T>(read: () => Promise<T>, maxAgeMs: number): () => Promise<T> {
  type Outcome = { ok: true; value: T } | { ok: false; error: unknown };
  let last: T | undefined;
  let hasLast = false;
  let running: Promise<Outcome> | null = null;
  let startedAt = Number.NEGATIVE_INFINITY;
  return async () => {
    if (!running && performance.now() - startedAt >= maxAgeMs) {
      startedAt = performance.now();
      // Never rejects: a failure reaches only the callers waiting for this read.
      running = read().then(
        (value): Outcome => {
          last = value;
          hasLast = true;
          return { ok: true, value };
        },
        (error: unknown): Outcome => {
          startedAt = Number.NEGATIVE_INFINITY;
          return { ok: false, error };
        },
      );
      void running.finally(() => {
        running = null;
      });
    }
    if (hasLast) return last as T;
    const outcome = await running!;
    if (!outcome.ok) throw outcome.error;
    return outcome.value;
  };
}
