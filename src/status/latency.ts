import type { AppContext } from "../context";
import { latencyFromLog, usageWindow } from "../http/latency";

// Service-wide latency percentiles (nearest rank, never averages: an average hides the slow tail a partner
// feels) over the request log. Only route templates are published, never a partner key or a client IP.

export const MAX_LATENCY_HOURS = 24 * 30;
/** Routes listed in the breakdown, busiest first; the overall figure covers every request. */
const MAX_ROUTES = 50;

export async function latencyPercentiles(ctx: AppContext, hours: number) {
  await ctx.requestLog.flush(); // buffered off the request path: include the latest requests
  const w = usageWindow(ctx, hours);
  return {
    window: { hours: w.hours, start_utc: w.startIso, end_utc: w.endIso },
    ...(await latencyFromLog(ctx.store, { keyId: null, startIso: w.startIso, endIso: w.endIso }, MAX_ROUTES)),
  };
}
