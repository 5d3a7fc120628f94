import type { AppContext } from "../context";
import { latencyOf, requestCountsOf, routeSummariesTask, usageWindow } from "../http/request-log/latency";

/**
 * GET /api/partner/analytics/usage (and the traffic part of GET /api/partner/status): one key's traffic over the
 * window, from the request log's hourly summaries (src/http/request-log/latency.ts): a few rows per hour, whatever
 * the log holds.
 */
export async function usageAnalytics(ctx: AppContext, keyId: string, hours: number) {
  // The log is buffered off the request path; write what is pending so the answer includes the latest requests.
  await ctx.requestLog.flush();
  const w = usageWindow(ctx, hours);
  const routes = await ctx.store.apart(routeSummariesTask, { keyId, fromHour: w.fromHour, toHour: w.toHour });
  return {
    key_id: keyId,
    window: { hours: w.hours, start_utc: w.startIso, end_utc: w.endIso },
    request_metrics: requestCountsOf(routes),
    latency_metrics_ms: latencyOf(routes),
  };
}
