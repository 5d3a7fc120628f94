import type { Clock } from "../clock";
import { apartTask } from "../db/apart";
import type { Queryable } from "../db/port";
import { KEY_REF } from "./request-log/log";

// Latency percentiles from the request log, shared by partner usage/status (one key) and the public
// latency-percentiles route (every request). Nearest rank, never averages: an average hides the slow tail.

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
export function usageWindow(ctx: { clock: Clock }, hours: number, end: Date = ctx.clock.now()): UsageWindow {
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

/**
 * Percentiles overall and per route template over (start, end], from the most recent MAX_LATENCY_SAMPLES
 * requests — of one key, or of every request when keyId is null.
 */
export async function latencyFromLog(db: Queryable, q: { keyId: string | null; startIso: string; endIso: string }, maxRoutes = Infinity) {
  const found =
    q.keyId === null
      ? await db.all<{ route: string; latency_us: number }>("SELECT route, latency_us FROM request_log WHERE at > ? AND at <= ? ORDER BY at DESC LIMIT ?", [
          q.startIso,
          q.endIso,
          MAX_LATENCY_SAMPLES + 1,
        ])
      : await db.all<{ route: string; latency_us: number }>(
          `SELECT route, latency_us FROM request_log WHERE key_ref = (${KEY_REF}) AND at > ? AND at <= ? ORDER BY at DESC LIMIT ?`,
          [q.keyId, q.startIso, q.endIso, MAX_LATENCY_SAMPLES + 1],
        );
  const rows = found.map((r) => [r.route, r.latency_us] as [string, number]);
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
    .slice(0, maxRoutes);
  return {
    available: rows.length > 0,
    method: "nearest_rank" as const,
    sample_limit: MAX_LATENCY_SAMPLES,
    truncated,
    overall: percentilesMs(rows.map((r) => r[1])),
    endpoint_breakdown: breakdown,
  };
}

/**
 * latencyFromLog apart from the event loop (src/db/apart.ts): its read and its sort grow with the window's requests
 * (up to MAX_LATENCY_SAMPLES rows, ~0.3–1.5 s at millions of rows), so on SQLite both run in the read worker.
 */
export const latencyTask = apartTask("latency-from-log", (q, a: { keyId: string | null; startIso: string; endIso: string; maxRoutes: number | null }) =>
  latencyFromLog(q, a, a.maxRoutes ?? Infinity),
);
