import type { AppContext } from "../context";

/**
 * Latency percentiles are computed in memory over at most this many samples — the most recent requests of
 * the window. 200k integers sort in tens of milliseconds; request counts are always exact (SQL aggregates).
 */
export const MAX_LATENCY_SAMPLES = 200_000;
export const PERCENTILES = [50, 95, 99] as const;

export interface UsageWindow {
  hours: number;
  startIso: string;
  endIso: string;
}

/** The last `hours` hours up to and including now: (start, end]. A row exactly `hours` old is outside. */
export function usageWindow(ctx: Pick<AppContext, "clock">, hours: number): UsageWindow {
  const end = ctx.clock.now();
  return { hours, startIso: new Date(end.getTime() - hours * 3_600_000).toISOString(), endIso: end.toISOString() };
}

/**
 * Nearest-rank percentile of ascending values: the value at rank ceil(p/100 × n), 1-based. It is always one
 * of the observed samples (no interpolation), so a partner can check it against their own logs.
 */
export function nearestRank(sortedAsc: readonly number[], p: number): number {
  const rank = Math.max(1, Math.ceil((p * sortedAsc.length) / 100)); // p × n stays an exact integer
  return sortedAsc[rank - 1]!;
}

/** Microseconds (as logged) to milliseconds with 3 decimals — exact, since the log keeps whole µs. */
const msOf = (us: number) => Math.round(us) / 1000;

export function percentilesMs(latenciesUs: number[]) {
  const sorted = Float64Array.from(latenciesUs).sort();
  const values = Array.from(sorted);
  return {
    samples: values.length,
    p50_ms: values.length ? msOf(nearestRank(values, 50)) : null,
    p95_ms: values.length ? msOf(nearestRank(values, 95)) : null,
    p99_ms: values.length ? msOf(nearestRank(values, 99)) : null,
  };
}

interface RouteCounts {
  path: string;
  requests: number;
  errors: number;
  rate_limited: number;
}

/** Exact counts per route template for one key over the window (served by request_log_key_at_idx). */
export function requestCounts(ctx: AppContext, keyId: string, w: UsageWindow) {
  const rows = ctx.db.sqlite
    .query(
      `SELECT route AS path, count(*) AS requests, sum(status >= 400) AS errors, sum(status = 429) AS rate_limited
       FROM request_log WHERE partner_key_id = ? AND at > ? AND at <= ? GROUP BY route`,
    )
    .all(keyId, w.startIso, w.endIso) as RouteCounts[];
  const total = rows.reduce((n, r) => n + r.requests, 0);
  const errors = rows.reduce((n, r) => n + r.errors, 0);
  const rateLimited = rows.reduce((n, r) => n + r.rate_limited, 0);
  const breakdown = rows
    .sort((a, b) => b.requests - a.requests || (a.path < b.path ? -1 : a.path > b.path ? 1 : 0))
    .map((r) => ({ path: r.path, requests: r.requests, errors: r.errors, error_rate_pct: Math.round((r.errors / r.requests) * 10_000) / 100 }));
  return { total_requests: total, success_requests: total - errors, error_requests: errors, rate_limited_requests: rateLimited, endpoint_breakdown: breakdown };
}

/** The most recent MAX_LATENCY_SAMPLES latencies of the window, grouped by route template. */
function latencySamples(ctx: AppContext, keyId: string, w: UsageWindow) {
  const rows = ctx.db.sqlite
    .query("SELECT route, latency_us FROM request_log WHERE partner_key_id = ? AND at > ? AND at <= ? ORDER BY at DESC LIMIT ?")
    .values(keyId, w.startIso, w.endIso, MAX_LATENCY_SAMPLES + 1) as Array<[string, number]>;
  const truncated = rows.length > MAX_LATENCY_SAMPLES;
  if (truncated) rows.length = MAX_LATENCY_SAMPLES;
  return { rows, truncated };
}

export function latencyMetrics(ctx: AppContext, keyId: string, w: UsageWindow) {
  const { rows, truncated } = latencySamples(ctx, keyId, w);
  const byRoute = new Map<string, number[]>();
  for (const [route, us] of rows) {
    let list = byRoute.get(route);
    if (!list) byRoute.set(route, (list = []));
    list.push(us);
  }
  const breakdown = [...byRoute.entries()]
    .map(([path, us]) => ({ path, ...percentilesMs(us) }))
    .sort((a, b) => b.samples - a.samples || (a.path < b.path ? -1 : a.path > b.path ? 1 : 0));
  return {
    available: rows.length > 0,
    method: "nearest_rank" as const,
    sample_limit: MAX_LATENCY_SAMPLES,
    truncated,
    overall: percentilesMs(rows.map((r) => r[1])),
    endpoint_breakdown: breakdown,
  };
}

/** GET /api/partner/analytics/usage: one key's traffic over the window, from the (flushed) request log. */
export function usageAnalytics(ctx: AppContext, keyId: string, hours: number) {
  // The log is buffered off the request path; write what is pending so the answer includes the latest requests.
  ctx.requestLog.flush();
  const w = usageWindow(ctx, hours);
  return {
    key_id: keyId,
    window: { hours: w.hours, start_utc: w.startIso, end_utc: w.endIso },
    request_metrics: requestCounts(ctx, keyId, w),
    latency_metrics_ms: latencyMetrics(ctx, keyId, w),
  };
}
