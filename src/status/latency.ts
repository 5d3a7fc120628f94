import type { AppContext } from "../context";
import { MAX_LATENCY_SAMPLES, percentilesMs, usageWindow } from "../partner/usage-service";

// Service-wide latency percentiles (nearest rank, never averages: an average hides the slow tail a partner
// feels) over the request log. Only route templates are published, never a partner key or a client IP.

export const MAX_LATENCY_HOURS = 24 * 30;
/** Routes listed in the breakdown, busiest first; the overall figure covers every request. */
const MAX_ROUTES = 50;

export function latencyPercentiles(ctx: AppContext, hours: number) {
  ctx.requestLog.flush(); // buffered off the request path: include the latest requests
  const w = usageWindow(ctx, hours);
  const rows = ctx.db.sqlite
    .query("SELECT route, latency_us FROM request_log WHERE at > ? AND at <= ? ORDER BY at DESC LIMIT ?")
    .values(w.startIso, w.endIso, MAX_LATENCY_SAMPLES + 1) as Array<[string, number]>;
  const truncated = rows.length > MAX_LATENCY_SAMPLES;
  if (truncated) rows.length = MAX_LATENCY_SAMPLES;
  const byRoute = new Map<string, number[]>();
  for (const [route, us] of rows) {
    let list = byRoute.get(route);
    if (!list) byRoute.set(route, (list = []));
    list.push(us);
  }
  const breakdown = [...byRoute.entries()]
    .map(([path, us]) => ({ path, ...percentilesMs(us) }))
    .sort((a, b) => b.samples - a.samples || (a.path < b.path ? -1 : a.path > b.path ? 1 : 0))
    .slice(0, MAX_ROUTES);
  return {
    window: { hours: w.hours, start_utc: w.startIso, end_utc: w.endIso },
    available: rows.length > 0,
    method: "nearest_rank" as const,
    sample_limit: MAX_LATENCY_SAMPLES,
    truncated,
    overall: percentilesMs(rows.map((r) => r[1])),
    endpoint_breakdown: breakdown,
  };
}
