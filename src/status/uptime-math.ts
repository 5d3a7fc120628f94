import type { Level } from "./checks/types";
import type { Interval } from "./incidents/maintenance";
import type { UptimeTotals } from "./model";

// Time-weighted uptime from snapshots; pure, so the tests can check it against windows worked out by hand.
//
// A snapshot speaks for the time from its own generated_at until the next snapshot, but for at most
// maxGapMs: beyond that nobody was looking (the process was down, or the job stalled) and the time is
// "unobserved" — neither up nor degraded. The snapshot just before the window speaks for the window's start.
// Maintenance time is cut out of the observed time when excludeMaintenance is set (and always reported).
// degraded_pct = degraded time / observed time × 100; null when nothing was observed.

export interface Point {
  at: number;
  /**
   * For a point standing for a run of identical snapshots: the last one's time (every gap inside the run is
   * at most maxGapMs). Absent for a single snapshot.
   */
  last?: number;
  overall: Level;
  /** Checks that were not ok at this point. */
  degraded: Record<string, Level>;
  /** Checks that existed at this point. */
  checks: readonly string[];
}

export type WindowTotals = typeof UptimeTotals.static;

export interface UptimeResult {
  overall: WindowTotals;
  checks: Record<string, WindowTotals>;
}

interface Acc {
  observed: number;
  degraded: number;
}

/** Merges overlapping maintenance windows so overlapping ones are not subtracted twice. */
export function mergeIntervals(list: readonly Interval[]): Interval[] {
  const sorted = [...list].filter((i) => i.end > i.start).sort((a, b) => a.start - b.start);
  const out: Interval[] = [];
  for (const i of sorted) {
    const last = out[out.length - 1];
    if (last && i.start <= last.end) last.end = Math.max(last.end, i.end);
    else out.push({ ...i });
  }
  return out;
}

const overlapMs = (a: number, b: number, merged: readonly Interval[]) =>
  merged.reduce((sum, m) => sum + Math.max(0, Math.min(b, m.end) - Math.max(a, m.start)), 0);

const minutes = (ms: number) => Math.round((ms / 60_000) * 100) / 100;

function totals(acc: Acc, maintenanceMs: number, unobservedMs: number): WindowTotals {
  const pct = acc.observed > 0 ? Math.round((acc.degraded / acc.observed) * 100_000) / 1000 : null;
  return {
    observed_minutes: minutes(acc.observed),
    degraded_minutes: minutes(acc.degraded),
    maintenance_minutes: minutes(maintenanceMs),
    unobserved_minutes: minutes(unobservedMs),
    degraded_pct: pct,
    uptime_pct: pct === null ? null : Math.round((100 - pct) * 1000) / 1000,
  };
}

/** Index of the last point at or before `t` (0 when none is): the one that speaks for `t`. Binary search. */
function lastAtOrBefore(points: readonly Point[], t: number): number {
  let lo = 0;
  let hi = points.length - 1;
  let found = 0;
  while (lo <= hi) {
    const mid = (lo + hi) >> 1;
    if (points[mid]!.at <= t) {
      found = mid;
      lo = mid + 1;
    } else hi = mid - 1;
  }
  return found;
}

export interface UptimeInput {
  start: number;
  end: number;
  /** Ascending by `at`; may include points before `start` (only the last of those matters). */
  points: readonly Point[];
  maintenance: readonly Interval[];
  excludeMaintenance: boolean;
  maxGapMs: number;
  /** Checks to report (each gets totals, even if never observed). */
  checkNames: readonly string[];
}

export function computeUptime(input: UptimeInput): UptimeResult {
  const { start, end, points, maxGapMs } = input;
  const merged = mergeIntervals(input.maintenance);
  const overall: Acc = { observed: 0, degraded: 0 };
  const perCheck = new Map<string, Acc>(input.checkNames.map((n) => [n, { observed: 0, degraded: 0 }]));
  let covered = 0;
  for (let i = lastAtOrBefore(points, start); i < points.length; i++) {
    const p = points[i]!;
    if (p.at >= end) break;
    const next = points[i + 1]?.at ?? Infinity;
    const a = Math.max(p.at, start);
    const b = Math.min(next, (p.last ?? p.at) + maxGapMs, end);
    if (b <= a) continue;
    covered += b - a;
    const effective = b - a - (input.excludeMaintenance ? overlapMs(a, b, merged) : 0);
    if (effective <= 0) continue;
    overall.observed += effective;
    if (p.overall !== "ok") overall.degraded += effective;
    for (const name of p.checks) {
      const acc = perCheck.get(name);
      if (!acc) continue;
      acc.observed += effective;
      if (p.degraded[name] !== undefined) acc.degraded += effective;
    }
  }
  const maintenanceMs = overlapMs(start, end, merged);
  const unobservedMs = end - start - covered;
  const checks: Record<string, WindowTotals> = {};
  for (const [name, acc] of perCheck) checks[name] = totals(acc, maintenanceMs, unobservedMs);
  return { overall: totals(overall, maintenanceMs, unobservedMs), checks };
}
