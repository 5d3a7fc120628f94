import type { AppContext } from "../context";
import { apartTask } from "../db/apart";
import { latencyTask, usageWindow, type UsageWindow } from "../http/latency";
import { KEY_REF } from "../http/request-log/log";

export { usageWindow, type UsageWindow };

interface RouteCounts {
  path: string;
  requests: number;
  errors: number;
  rate_limited: number;
}

/** The counts' read walks every request of the key in the window: apart from the event loop (src/db/apart.ts). */
export const requestCountsTask = apartTask("request-counts", (q, a: { keyId: string; startIso: string; endIso: string }) =>
  q.all<RouteCounts>(
    `SELECT route AS path, count(*) AS requests, count(*) FILTER (WHERE status >= 400) AS errors, count(*) FILTER (WHERE status = 429) AS rate_limited
     FROM request_log WHERE key_ref = (${KEY_REF}) AND at > ? AND at <= ? GROUP BY route`,
    [a.keyId, a.startIso, a.endIso],
  ),
);

/** Exact counts per route template for one key over the window (served by request_log_key_at_idx). */
export async function requestCounts(ctx: AppContext, keyId: string, w: UsageWindow) {
  const rows = await ctx.store.apart(requestCountsTask, { keyId, startIso: w.startIso, endIso: w.endIso });
  const total = rows.reduce((n, r) => n + r.requests, 0);
  const errors = rows.reduce((n, r) => n + r.errors, 0);
  const rateLimited = rows.reduce((n, r) => n + r.rate_limited, 0);
  const breakdown = rows
    .sort((a, b) => b.requests - a.requests || (a.path < b.path ? -1 : a.path > b.path ? 1 : 0))
    .map((r) => ({ path: r.path, requests: r.requests, errors: r.errors, error_rate_pct: Math.round((r.errors / r.requests) * 10_000) / 100 }));
  return { total_requests: total, success_requests: total - errors, error_requests: errors, rate_limited_requests: rateLimited, endpoint_breakdown: breakdown };
}

/** Latency percentiles of one key's requests over the window (nearest rank, see src/http/latency.ts). */
export function latencyMetrics(ctx: AppContext, keyId: string, w: UsageWindow) {
  return ctx.store.apart(latencyTask, { keyId, startIso: w.startIso, endIso: w.endIso, maxRoutes: null });
}

/** GET /api/partner/analytics/usage: one key's traffic over the window, from the (flushed) request log. */
export async function usageAnalytics(ctx: AppContext, keyId: string, hours: number) {
  // The log is buffered off the request path; write what is pending so the answer includes the latest requests.
  await ctx.requestLog.flush();
  const w = usageWindow(ctx, hours);
  return {
    key_id: keyId,
    window: { hours: w.hours, start_utc: w.startIso, end_utc: w.endIso },
    request_metrics: await requestCounts(ctx, keyId, w),
    latency_metrics_ms: await latencyMetrics(ctx, keyId, w),
  };
}
