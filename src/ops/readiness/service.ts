import type { AppContext } from "../../context";
import { queryProblem } from "../../http/errors/errors";
import { dailyRollups } from "./store";

// The 403 noise level behind the readiness exports: from request_log_hourly only (at most 30 × 24 rollup rows,
// never a scan of request_log). Days are UTC calendar days and "today" is one of them, counted up to the
// current hour, so the figures of a window are exactly the sums of its last N per-day points.

/** The export windows the spec allows (Limits: "Export windows: 7, 14, 30 days"); `days` takes the same values. */
export const NOISE_WINDOW_DAYS = [7, 14, 30] as const;
export const DEFAULT_NOISE_DAYS = 30;
const DAY_MS = 86_400_000;

export type NoiseExport = Awaited<ReturnType<typeof noiseExport>>;
type NoiseThreshold = ReturnType<typeof thresholdOf>;

export interface NoiseInput {
  days?: number;
  windows?: string;
  compact?: boolean;
  includeWindowsMeta?: boolean;
}

const quote = (raw: string) => JSON.stringify(raw.length > 40 ? `${raw.slice(0, 40)}…` : raw);

/** `days` arrives as an integer 7–30 (intQuery); only the three export lengths are meaningful. */
export function noiseDaysOrThrow(days: number | undefined): number {
  if (days === undefined) return DEFAULT_NOISE_DAYS;
  if (!(NOISE_WINDOW_DAYS as readonly number[]).includes(days)) throw queryProblem("days", `must be one of: 7, 14, 30; got ${days}`);
  return days;
}

/** `windows`: distinct 7, 14 or 30, sorted; absent: all three whatever `days` is (that only sets the daily points listed). */
export function noiseWindowsOrThrow(raw: string | undefined): number[] {
  if (raw === undefined) return [...NOISE_WINDOW_DAYS];
  const parts = raw.split(",").map((p) => p.trim());
  const out: number[] = [];
  for (const p of parts) {
    if (!/^(7|14|30)$/.test(p)) throw queryProblem("windows", `must be a comma list of 7, 14 and 30; got ${quote(p)} in ${quote(raw)}`);
    const n = Number(p);
    if (out.includes(n)) throw queryProblem("windows", `lists ${n} twice`);
    out.push(n);
  }
  return out.sort((a, b) => a - b);
}

const round2 = (x: number) => Math.round(x * 100) / 100;
const hourKey = (d: Date) => d.toISOString().slice(0, 13);
const dayKey = (d: Date) => d.toISOString().slice(0, 10);

/**
 * Compared before rounding: 5.004 % is over a 5 % threshold even though it prints as 5. noise_percent: 403s per 100
 * requests, 2 decimals, null without requests; forbidden_per_hour: 403s per elapsed hour of the span, 2 decimals.
 */
function figures(t: NoiseThreshold, requests: number, forbidden: number, hours: number) {
  const overPercent = forbidden * 100 > t.max_percent * requests;
  const overHourly = t.max_per_hour !== null && forbidden > t.max_per_hour * hours;
  return {
    requests,
    forbidden,
    noise_percent: requests > 0 ? round2((forbidden * 100) / requests) : null,
    forbidden_per_hour: hours > 0 ? round2(forbidden / hours) : 0,
    within_threshold: !overPercent && !overHourly,
  };
}

/** max_per_hour null: the absolute threshold is off. */
export function thresholdOf(ctx: AppContext) {
  const r = ctx.config.readiness;
  return { max_percent: r.noiseMaxPercent, max_per_hour: r.noiseMaxPerHour > 0 ? r.noiseMaxPerHour : null };
}

/** The 403 noise export: per-window figures against the threshold, and (unless compact) one point per day. */
export async function noiseExport(ctx: AppContext, input: NoiseInput) {
  const days = noiseDaysOrThrow(input.days);
  const windows = noiseWindowsOrThrow(input.windows);
  // The days read: enough for the listed points and for the longest window.
  const span = Math.max(days, ...windows);
  const now = ctx.clock.now();
  const threshold = thresholdOf(ctx);
  const today = Date.UTC(now.getUTCFullYear(), now.getUTCMonth(), now.getUTCDate());
  const hoursToday = now.getUTCHours() + 1;
  const first = new Date(today - (span - 1) * DAY_MS);
  const byDay = new Map((await dailyRollups(ctx.store, hourKey(first), hourKey(now))).map((r) => [r.day, r]));

  // Oldest first; the last row is today.
  const dayRows = Array.from({ length: span }, (_, i) => {
    const date = dayKey(new Date(first.getTime() + i * DAY_MS));
    const row = byDay.get(date);
    return { date, requests: row?.requests ?? 0, forbidden: row?.forbidden ?? 0, hours: i === span - 1 ? hoursToday : 24, withData: row?.hours_with_data ?? 0 };
  });
  const points = dayRows.slice(span - days).map((d) => ({ date: d.date, ...figures(threshold, d.requests, d.forbidden, d.hours) }));

  const out = windows.map((n) => {
    const rows = dayRows.slice(span - n);
    const sum = (k: "requests" | "forbidden" | "hours" | "withData") => rows.reduce((acc, d) => acc + d[k], 0);
    const hours = sum("hours");
    const from = new Date(today - (n - 1) * DAY_MS);
    const meta = {
      from: from.toISOString(),
      to: now.toISOString(),
      from_hour: hourKey(from),
      to_hour: hourKey(now),
      hours_total: hours,
      hours_with_data: sum("withData"),
    };
    const counted = figures(threshold, sum("requests"), sum("forbidden"), hours);
    return { window_days: n, ...counted, ...(input.includeWindowsMeta ? { meta } : {}) };
  });

  return {
    generated_at: now.toISOString(),
    days,
    threshold,
    within_threshold: out.every((w) => w.within_threshold),
    windows: out,
    ...(input.compact ? {} : { points }),
    query: { days, windows, compact: input.compact === true, include_windows_meta: input.includeWindowsMeta === true },
  };
}
