import type { PartnerActor } from "../auth/actors";
import { ownerOf } from "../auth/actors";
import type { AppContext } from "../context";
import { AppError } from "../http/errors/errors";
import { deadLettersSince, deliveryHealth, deliverySloControls } from "../webhooks/service";
import { usageAnalytics } from "./usage-service";

/** Status describes the last hour: the percentile window and the dead-letter look-back. */
export const STATUS_WINDOW_HOURS = 1;

/**
 * GET /api/partner/status for one key. overall_status is `ok` when the database answers and none of this
 * owner's webhook deliveries was dead-lettered in the last hour, `degraded` (with reasons) when one was;
 * older dead letters stay visible in webhook_delivery_health but no longer colour the status.
 */
export async function partnerStatus(ctx: AppContext, actor: PartnerActor) {
  await ctx.store.ping().catch((err: unknown) => {
    throw new AppError("db_unavailable", "The database did not answer; retry with backoff", { internal: String(err), cause: err });
  });
  const owner = ownerOf(actor);
  const { window, request_metrics: counts, latency_metrics_ms: latency } = await usageAnalytics(ctx, actor.keyId, STATUS_WINDOW_HOURS);
  // Dead letters of the last hour (not of the window, which starts at the previous hour's top): the only
  // partner-visible sign that deliveries need attention, gone an hour after the last one.
  const hourAgo = new Date(ctx.clock.now().getTime() - STATUS_WINDOW_HOURS * 3_600_000).toISOString();
  const deadLetters = await deadLettersSince(ctx.store, owner, hourAgo);
  const reasons = deadLetters > 0 ? [`${deadLetters} webhook deliveries dead-lettered in the last hour (GET /api/partner/webhooks/dlq)`] : [];
  const { samples: _samples, ...percentiles } = latency.overall;
  return {
    overall_status: reasons.length ? ("degraded" as const) : ("ok" as const),
    status_reasons: reasons,
    key_id: actor.keyId,
    key_mode: actor.mode,
    window,
    endpoint_percentiles_available: latency.available,
    endpoint_percentiles_ms: percentiles,
    request_metrics: { total_requests: counts.total_requests, error_requests: counts.error_requests },
    webhook_delivery_health: await deliveryHealth(ctx, owner, window.start_utc),
    delivery_slo_controls: deliverySloControls(ctx),
  };
}
