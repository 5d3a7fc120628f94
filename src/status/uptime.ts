import type { AppContext } from "../context";
import { worst, type Level } from "./checks/types";
import { COMPONENT_IDS, componentOfCheck } from "./components";
import { CHECK_NAMES } from "./checks/engine";
import { intervalsOf } from "./incidents/maintenance";
import { windowsOverlappingRows } from "./store/maintenance";
import { loadPolicy } from "./checks/policy";
import { loadPoints } from "./snapshots";
import { oldestSnapshotAt, uptimeInputsKey } from "./store/snapshots";
import { computeUptime, type UptimeInput, type UptimeResult } from "./uptime-math";

export const MAX_UPTIME_HOURS = 24 * 90;
const DAY_MS = 86_400_000;

/** Snapshots and maintenance windows loaded for a window: the uptime maths' input but what a reader asks. */
export type UptimeSource = Omit<UptimeInput, "excludeMaintenance" | "checkNames">;

/** How long a loaded source may serve later asks, at most, even when its inputs look unchanged (see UptimeCache). */
export const UPTIME_REUSE_MS = 60_000;

/**
 * Loaded sources by window length, reused while nothing they were built from has changed: no new snapshot,
 * the same maintenance windows, the same gap policy. Reuse for a later `now` is exact (the loaded points
 * start earlier and nothing was added since), so only the cheap maths runs again. A per-process cache, held
 * by whoever serves the routes; coordination state it is not. Its inputs are read from the database at every
 * ask, so a snapshot or a window written by another instance is seen at once; and a source is reused for at most
 * UPTIME_REUSE_MS after it was built, because on PostgreSQL a row can commit after one with a higher id (the key
 * would not show it) — a minute, the snapshot job's own period, bounds how stale an answer can be.
 */
export class UptimeCache {
  private deps = "";
  private sources: UptimeSource[] = [];
  constructor(private readonly maxEntries = 8) {}

  /** A loaded source covering [start, end) built from the same inputs (a 90-day one serves a 24-hour ask). */
  get(deps: string, start: number, end: number): UptimeSource | null {
    if (deps !== this.deps) return null;
    const src = this.sources.find((s) => s.start <= start && s.end <= end && end - s.end <= UPTIME_REUSE_MS);
    return src ? { ...src, start, end } : null;
  }

  put(deps: string, src: UptimeSource): void {
    // Inputs only move forward (new snapshots, new windows): sources built from older ones are never wanted again.
    if (deps !== this.deps) [this.deps, this.sources] = [deps, []];
    this.sources = [src, ...this.sources].slice(0, this.maxEntries);
  }
}

/** Everything the uptime maths needs for the last `hours`, read once (a page reuses it for every window). */
export async function uptimeSource(ctx: AppContext, hours: number, cache?: UptimeCache): Promise<UptimeSource> {
  const end = ctx.clock.now().getTime();
  const start = end - hours * 3_600_000;
  const maxGapMs = loadPolicy(ctx).policy.checks.uptime.max_sample_gap_seconds * 1000;
  const key = cache ? `${maxGapMs}|${await uptimeInputsKey(ctx.store)}` : "";
  const hit = cache?.get(key, start, end);
  if (hit) return hit;
  const startIso = new Date(start).toISOString();
  const endIso = new Date(end).toISOString();
  const src = {
    start,
    end,
    points: await loadPoints(ctx, startIso, endIso, maxGapMs),
    // Windows that end after the cached end are included too, so a later reuse still sees them.
    maintenance: intervalsOf(await windowsOverlappingRows(ctx.store, startIso, "9999-12-31T23:59:59.999Z")),
    maxGapMs,
  };
  cache?.put(key, src);
  return src;
}

/** Uptime over [end - hours, end) of an already loaded source (which must cover that window). */
export function uptimeFrom(src: UptimeSource, hours: number, excludeMaintenance: boolean, end = src.end, names: readonly string[] = CHECK_NAMES): UptimeResult {
  return computeUptime({ ...src, start: end - hours * 3_600_000, end, excludeMaintenance, checkNames: names });
}

/**
 * The same source seen by component (src/status/components.ts): at each point a component is degraded with
 * the worst of its degraded checks, and it existed when any of its checks did. The uptime maths then runs
 * unchanged with the component ids as names.
 */
export function componentSource(src: UptimeSource): UptimeSource {
  const points = src.points.map((p) => {
    const degraded: Record<string, Level> = {};
    for (const [check, level] of Object.entries(p.degraded)) {
      const c = componentOfCheck(check);
      if (c) degraded[c] = worst([degraded[c] ?? "ok", level]);
    }
    const present = new Set(p.checks.map(componentOfCheck));
    return { ...p, degraded, checks: COMPONENT_IDS.filter((id) => present.has(id)) };
  });
  return { ...src, points };
}

/**
 * When monitoring began: the oldest stored snapshot (null before the first). Uptime only ever counts observed
 * time, so a window reaching back before this is really "since <observed_since>" — the page says so, and the
 * JSON says it with observed_since and coverage_pct.
 */
export function observedSince(ctx: AppContext): Promise<string | null> {
  return oldestSnapshotAt(ctx.store);
}

/** Share of a window that some snapshot spoke for (the rest is unobserved), 3 decimals. */
export const coveragePct = (hours: number, r: UptimeResult): number => {
  const windowMinutes = hours * 60;
  return Math.round(((windowMinutes - r.overall.unobserved_minutes) / windowMinutes) * 100_000) / 1000;
};

/** GET /api/public/system-status/uptime. */
export async function uptime(ctx: AppContext, hours: number, excludeMaintenance: boolean | undefined, cache?: UptimeCache) {
  const exclude = excludeMaintenance ?? loadPolicy(ctx).policy.exclude_maintenance_default;
  const src = await uptimeSource(ctx, hours, cache);
  const r = uptimeFrom(src, hours, exclude);
  const since = await observedSince(ctx);
  return {
    selected_hours: hours,
    window: { start_utc: new Date(src.start).toISOString(), end_utc: new Date(src.end).toISOString() },
    observed_since: since,
    partial_window: since === null || Date.parse(since) > src.start,
    coverage_pct: coveragePct(hours, r),
    exclude_maintenance: exclude,
    method: "time_weighted_snapshots" as const,
    max_sample_gap_seconds: src.maxGapMs / 1000,
    overall: r.overall,
    checks: r.checks,
    components: uptimeFrom(componentSource(src), hours, exclude, src.end, COMPONENT_IDS).checks,
  };
}

export interface DayBar {
  date: string;
  degraded_pct: number | null;
  uptime_pct: number | null;
  observed_minutes: number;
  level: "ok" | "warn" | "bad" | "none";
}

/**
 * One bar per UTC day for the last `days` days (today, partial, last). A day's level: none when nothing was
 * observed; bad when degraded ≥ 5% of it; warn when degraded at all; else ok.
 */
export function dailyBars(
  src: UptimeSource,
  days: number,
  excludeMaintenance: boolean,
  names: readonly string[] = CHECK_NAMES,
): { overall: DayBar[]; checks: Record<string, DayBar[]> } {
  const todayStart = Math.floor(src.end / DAY_MS) * DAY_MS;
  const overall: DayBar[] = [];
  const checks: Record<string, DayBar[]> = Object.fromEntries(names.map((n) => [n, [] as DayBar[]]));
  for (let d = days - 1; d >= 0; d--) {
    const start = todayStart - d * DAY_MS;
    const end = Math.min(start + DAY_MS, src.end);
    const r = computeUptime({ ...src, start, end, excludeMaintenance, checkNames: names });
    const date = new Date(start).toISOString().slice(0, 10);
    const bar = (t: UptimeResult["overall"]): DayBar => ({
      date,
      degraded_pct: t.degraded_pct,
      uptime_pct: t.uptime_pct,
      observed_minutes: t.observed_minutes,
      level: t.degraded_pct === null ? "none" : t.degraded_pct >= 5 ? "bad" : t.degraded_pct > 0 ? "warn" : "ok",
    });
    overall.push(bar(r.overall));
    for (const n of names) checks[n]!.push(bar(r.checks[n]!));
  }
  return { overall, checks };
}
