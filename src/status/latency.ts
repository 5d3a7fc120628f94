import type { AppContext } from "../context";
import { completedHoursWindow, latencyOf, routeSummariesTask, usageWindow } from "../http/request-log/latency";

// Service-wide latency percentiles (from the request log's hourly histograms, src/http/request-log/latency.ts; never averages:
// an average hides the slow tail a partner feels). Only route templates are published, never a partner key or a
// client IP.

/** Routes listed in the breakdown, busiest first; the overall figure covers every request. */
const MAX_ROUTES = 50;

/**
 * Over the last `hours` (whole UTC hours, the current one included: src/http/request-log/latency.ts), or the `hours` whole hours
 * before the hour of `requestsBefore` when given (figures that stay put until the next hour begins).
 */
export async function latencyPercentiles(ctx: AppContext, hours: number, requestsBefore?: Date) {
  await ctx.requestLog.flush(); // buffered off the request path: include the latest requests
  const w = requestsBefore ? completedHoursWindow(hours, requestsBefore) : usageWindow(ctx, hours);
  const routes = await ctx.store.apart(routeSummariesTask, { keyId: null, fromHour: w.fromHour, toHour: w.toHour });
  return { window: { hours: w.hours, start_utc: w.startIso, end_utc: w.endIso }, ...latencyOf(routes, MAX_ROUTES) };
}
