import type { Clock } from "../../clock";
import { apartTask } from "../../db/apart";
import { BUCKET_COUNT, histogramPercentilesMs, MAX_RELATIVE_ERROR } from "./histogram";
import { compareText, hourOf, hourStartIso } from "./hours";
import { KEY_REF } from "./log";
import { type RouteSummary, routeSummaries } from "./summary";

// Request counts and latency percentiles from the request log's hourly summaries (summary.ts), for partner usage and
// status (one key) and the public latency figures (every request). Percentiles come from the histogram buckets
// (histogram.ts), never averages, which hide the slow tail; a window costs its hours × routes summary rows.

/** The largest relative error of a percentile, in percent with 2 decimals (9.05), as the answers state it. */
export const PERCENTILE_ERROR_PCT = Math.round(MAX_RELATIVE_ERROR * 10_000) / 100;

/**
 * A window of whole UTC hours: from the start of the hour that held `end − hours` up to `end` (the summaries count
 * per hour), so it spans at least `hours` and less than `hours + 1`. `toHour` is the last hour counted.
 */
export interface UsageWindow {
  hours: number;
  startIso: string;
  endIso: string;
  fromHour: string;
  toHour: string;
}

/** The window of the last `hours` hours up to `end` (now by default), `end`'s own hour included. */
export function usageWindow(ctx: { clock: Clock }, hours: number, end: Date = ctx.clock.now()): UsageWindow {
  const fromHour = hourOf(new Date(end.getTime() - hours * 3_600_000).toISOString());
  return { hours, startIso: hourStartIso(fromHour), endIso: end.toISOString(), fromHour, toHour: hourOf(end.toISOString()) };
}

/**
 * The `hours` whole hours before the hour of `before`: a window whose figures stay the same until the next hour
 * begins (a page that caches its answer per ETag: the trust dashboard).
 */
export function completedHoursWindow(hours: number, before: Date): UsageWindow {
  const endIso = hourStartIso(hourOf(before.toISOString()));
  const last = new Date(Date.parse(endIso) - 3_600_000);
  const fromHour = hourOf(new Date(Date.parse(endIso) - hours * 3_600_000).toISOString());
  return { hours, startIso: hourStartIso(fromHour), endIso, fromHour, toHour: hourOf(last.toISOString()) };
}

/**
 * The window's summaries per route, of one key or of every request (keyId null): hours × routes summary rows down
 * their primary key. Run apart from the event loop (src/db/apart.ts) all the same: 720 hours of a busy key's routes
 * are thousands of rows of 94 columns.
 */
export const routeSummariesTask = apartTask("request-summaries", (q, a: { keyId: string | null; fromHour: string; toHour: string }) =>
  routeSummaries(q, { key: a.keyId === null ? null : { sql: KEY_REF, param: a.keyId }, fromHour: a.fromHour, toHour: a.toHour }),
);

const byPath = (a: { path: string }, b: { path: string }) => compareText(a.path, b.path);

/** Percentiles overall and per route template (the busiest `maxRoutes`, busiest first) of the window's summaries. */
export function latencyOf(routes: readonly RouteSummary[], maxRoutes = Infinity) {
  const all = new Float64Array(BUCKET_COUNT);
  for (const r of routes) for (let i = 0; i < BUCKET_COUNT; i++) all[i]! += r.buckets[i]!;
  const breakdown = routes
    .map((r) => ({ path: r.route, ...histogramPercentilesMs(r.buckets) }))
    .filter((r) => r.samples > 0)
    .sort((a, b) => b.samples - a.samples || byPath(a, b))
    .slice(0, maxRoutes);
  const overall = histogramPercentilesMs(all);
  return {
    available: overall.samples > 0,
    method: "histogram" as const,
    relative_error_pct: PERCENTILE_ERROR_PCT,
    overall,
    endpoint_breakdown: breakdown,
  };
}

/** Request counts per route template (busiest first) and in all, of the window's summaries. */
export function requestCountsOf(routes: readonly RouteSummary[]) {
  let total = 0;
  let errors = 0;
  let rateLimited = 0;
  for (const r of routes) {
    total += r.requests;
    errors += r.client_errors + r.server_errors;
    rateLimited += r.rate_limited;
  }
  const breakdown = routes
    .filter((r) => r.requests > 0)
    .map((r) => {
      const e = r.client_errors + r.server_errors;
      return { path: r.route, requests: r.requests, errors: e, error_rate_pct: Math.round((e / r.requests) * 10_000) / 100 };
    })
    .sort((a, b) => b.requests - a.requests || byPath(a, b));
  return { total_requests: total, success_requests: total - errors, error_requests: errors, rate_limited_requests: rateLimited, endpoint_breakdown: breakdown };
}
