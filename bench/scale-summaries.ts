// The `scale` benchmark's request summaries (bench/scale-seed.ts builds them, bench/scale-check.ts checks them):
// request_summary_hourly from request_log's seeded rows in one INSERT … SELECT on either engine, exactly as herald's
// request-log flush counts a batch (src/http/request-log/summary.ts).
import { BOUNDED_BUCKETS, BUCKET_COLUMNS, UPPER_BOUNDS_US } from "../src/http/request-log/histogram";
import { ALL_KEYS } from "../src/http/request-log/summary";

/**
 * The latency bucket of `v` (µs) as bucketOf (src/http/request-log/histogram.ts) picks it: the first bucket whose upper
 * bound holds v, or the last, unbounded one. A binary search written as nested CASEs over the bounds (7 comparisons a
 * row), the same on both engines (PostgreSQL has no log2).
 */
export function bucketSql(v: string, lo = 0, hi = BOUNDED_BUCKETS): string {
  if (lo === hi) return String(lo);
  const mid = Math.floor((lo + hi) / 2);
  return `CASE WHEN ${v} <= ${UPPER_BOUNDS_US[mid]} THEN ${bucketSql(v, lo, mid)} ELSE ${bucketSql(v, mid + 1, hi)} END`;
}

/**
 * The summaries of request_log's rows after `afterId`, upserted as the flush adds a batch (summary.ts): one row per key,
 * hour and route, and one per hour and route for every key (key_ref 0). The rows are grouped once per key, hour, route
 * and bucket; the histogram columns are that grouping turned sideways.
 */
export function summariesSql(afterId: number): string {
  const counts = ["requests", "client_errors", "server_errors", "rate_limited"];
  const cols = [...counts, ...BUCKET_COLUMNS];
  const buckets = BUCKET_COLUMNS.map((_, i) => `SUM(CASE WHEN b = ${i} THEN n ELSE 0 END)`).join(", ");
  const g = "hour, route, b, n, client_errors, server_errors, rate_limited";
  return `WITH g AS MATERIALIZED (
  SELECT key_ref, hour, route, b, count(*) AS n, SUM(CASE WHEN status >= 400 AND status < 500 THEN 1 ELSE 0 END) AS client_errors,
    SUM(CASE WHEN status >= 500 THEN 1 ELSE 0 END) AS server_errors, SUM(CASE WHEN status = 429 THEN 1 ELSE 0 END) AS rate_limited
  FROM (SELECT key_ref, substr(at, 1, 13) AS hour, route, status, ${bucketSql("latency_us")} AS b FROM request_log WHERE id > ${afterId}) r
  GROUP BY key_ref, hour, route, b)
INSERT INTO request_summary_hourly (key_ref, hour, route, ${cols.join(", ")})
SELECT k, hour, route, SUM(n), SUM(client_errors), SUM(server_errors), SUM(rate_limited), ${buckets}
FROM (SELECT ${ALL_KEYS} AS k, ${g} FROM g UNION ALL SELECT key_ref, ${g} FROM g WHERE key_ref IS NOT NULL) x WHERE 1 = 1 GROUP BY k, hour, route
ON CONFLICT (key_ref, hour, route) DO UPDATE SET ${cols.map((c) => `${c} = request_summary_hourly.${c} + excluded.${c}`).join(", ")}`;
}

/**
 * request_summary_daily made again from the hourly rows, whole (the seed's last summary step: what herald's flush and
 * its rebuilds keep, every day the sum of its hours).
 */
export function dailySummariesSql(): string[] {
  const cols = ["requests", "client_errors", "server_errors", "rate_limited", ...BUCKET_COLUMNS];
  return [
    "DELETE FROM request_summary_daily",
    `INSERT INTO request_summary_daily (key_ref, day, route, ${cols.join(", ")})
SELECT key_ref, substr(hour, 1, 10), route, ${cols.map((c) => `SUM(${c})`).join(", ")} FROM request_summary_hourly GROUP BY key_ref, substr(hour, 1, 10), route`,
  ];
}

/** Daily summary rows that differ from the sum of their day's hourly rows, or miss, or are extra (0 when level). */
export function dailyMismatchSql(): string {
  const cols = ["requests", "client_errors", "server_errors", "rate_limited", ...BUCKET_COLUMNS];
  return `WITH f AS MATERIALIZED (
  SELECT key_ref, substr(hour, 1, 10) AS day, route, ${cols.map((c) => `SUM(${c}) AS ${c}`).join(", ")} FROM request_summary_hourly GROUP BY key_ref, substr(hour, 1, 10), route)
SELECT (SELECT count(*) FROM f LEFT JOIN request_summary_daily d ON d.key_ref = f.key_ref AND d.day = f.day AND d.route = f.route
    WHERE d.key_ref IS NULL OR ${cols.map((c) => `d.${c} <> f.${c}`).join(" OR ")})
  + abs((SELECT count(*) FROM request_summary_daily) - (SELECT count(*) FROM f))`;
}
