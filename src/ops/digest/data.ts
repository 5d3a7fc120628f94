import type { AppContext } from "../../context";
import { firstRolledHour, forbiddenRollups, hourlyRequests } from "./store";

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

/** Reads the rollups (never request_log): both range scans run on the tables' primary keys, which begin with `hour`. */
export async function loadDigestData(ctx: Pick<AppContext, "store">, fromHour: string, toHour: string): Promise<DigestData> {
  const forbidden = (await forbiddenRollups(ctx.store, fromHour, toHour)).map(
    (r): ForbiddenRollupRow => [r.hour, r.route, r.partner_key_id, r.client_prefix, r.count],
  );
  const requests = new Map((await hourlyRequests(ctx.store, fromHour, toHour)).map((r) => [r.hour, r.requests]));
  return { forbidden, requests, dataSince: await firstRolledHour(ctx.store) };
}
