import type { AppContext } from "../../context";

/** One row of request_log_403_hourly: hour, route, partner_key_id, client_prefix, count (arrays read faster than objects). */
export type ForbiddenRollupRow = [string, string, string, string, number];

export interface DigestData {
  /** 403 rollup rows with from ≤ hour ≤ to, in hour order. */
  forbidden: ForbiddenRollupRow[];
  /** request_log_hourly.requests by hour, same range. */
  requests: Map<string, number>;
  /** The oldest hour of request_log_hourly: hours before it are unknown, counted as 0. */
  dataSince: string | null;
}

/**
 * Reads the rollups the digest needs (never request_log): both range scans run on the tables' primary keys,
 * which begin with `hour`. Over 35 days that is a few thousand rows for the hourly totals and one row per
 * (hour, route, key, prefix) that saw a 403.
 */
export function loadDigestData(ctx: AppContext, fromHour: string, toHour: string): DigestData {
  const sqlite = ctx.db.sqlite;
  const forbidden = sqlite
    .query("SELECT hour, route, partner_key_id, client_prefix, count FROM request_log_403_hourly WHERE hour >= ? AND hour <= ? ORDER BY hour")
    .values(fromHour, toHour) as ForbiddenRollupRow[];
  const requests = new Map(
    (
      sqlite.query("SELECT hour, requests FROM request_log_hourly WHERE hour >= ? AND hour <= ?").all(fromHour, toHour) as Array<{
        hour: string;
        requests: number;
      }>
    ).map((r) => [r.hour, r.requests]),
  );
  const first = sqlite.query("SELECT min(hour) AS hour FROM request_log_hourly").get() as { hour: string | null };
  return { forbidden, requests, dataSince: first.hour };
}
