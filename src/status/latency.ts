import type { AppContext } from "../context";
import { latencyTask, usageWindow } from "../http/latency";

// Service-wide latency percentiles (nearest rank, never averages: an average hides the slow tail a partner
// feels) over the request log. Only route templates are published, never a partner key or a client IP.

export const MAX_LATENCY_HOURS = 24 * 30;
/** Routes listed in the breakdown, busiest first; the overall figure covers every request. */
const MAX_ROUTES = 50;

/** Over the last `hours`, or the `hours` before `requestsBefore` (excluded) when given. */
export async function latencyPercentiles(ctx: AppContext, hours: number, requestsBefore?: Date) {
  await ctx.requestLog.flush(); // buffered off the request path: include the latest requests
  // The log's window is (start, end]: one millisecond before `requestsBefore` leaves a request made at it out.
  const w = usageWindow(ctx, hours, requestsBefore && new Date(requestsBefore.getTime() - 1));
  return {
    window: { hours: w.hours, start_utc: w.startIso, end_utc: w.endIso },
    ...(await ctx.store.apart(latencyTask, { keyId: null, startIso: w.startIso, endIso: w.endIso, maxRoutes: MAX_ROUTES })),
  };
}
