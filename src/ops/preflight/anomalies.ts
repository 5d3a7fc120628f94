import type { AppContext } from "../../context";
import type { Queryable } from "../../db/port";
import { addDays, dayOf, type Selection, selects } from "./service";
import { snapshotRowsBetween } from "./store";

// The preflight anomaly detector (docs/ops-preflight.md, "Anomaly detector"): a z-score of each day's number of
// guard changes against the days before it, for each selected field (`<section>.<field>`), each section (the
// selected fields of that section that changed that day) and `all`. A field has one value per day, so its own
// daily count is 0 or 1: it can be flagged only with min_change_count 1; the section and `all` series reach the
// default of 2.

export const ANOMALY_DEFAULTS = { days: 30, baseline_days: 7, min_baseline_points: 3, zscore_threshold: 2.0, min_change_count: 2 } as const;

export type AnomalyParams = Record<keyof typeof ANOMALY_DEFAULTS, number>;

export interface Evaluation {
  day: string;
  series: string;
  count: number;
  baseline_points: number;
  /** null when the baseline has fewer than min_baseline_points points (not evaluated). */
  baseline_mean: number | null;
  baseline_sd: number | null;
  /** null when not evaluated or when sd = 0 (then any count above the mean is anomalous). */
  z: number | null;
  status: "anomaly" | "ok" | "insufficient_baseline";
}

const round6 = (x: number) => Math.round(x * 1e6) / 1e6;

/**
 * Daily change counts per series: a day is a point only when it and the day before both have a snapshot;
 * a field counts as changed when its fingerprint differs between them or it is in only one of the two.
 */
export async function changeSeries(
  ctx: AppContext,
  from: string,
  to: string,
  sel: Selection,
  q: Queryable = ctx.store,
): Promise<Map<string, Map<string, number>>> {
  const rows = await snapshotRowsBetween(q, addDays(from, -1), to);
  const byDay = new Map<string, Map<string, { section: string; fingerprint: string }>>();
  for (const r of rows) {
    if (!byDay.has(r.day)) byDay.set(r.day, new Map());
    if (selects(sel, r)) byDay.get(r.day)!.set(`${r.section}.${r.field}`, { section: r.section, fingerprint: r.fingerprint });
  }
  const sections = new Set(rows.filter((r) => selects(sel, r)).map((r) => r.section));
  const series = new Map<string, Map<string, number>>([["all", new Map()], ...[...sections].sort().map((s) => [s, new Map<string, number>()] as const)]);
  const fieldSeries = new Map<string, Map<string, number>>();
  for (let day = from; day <= to; day = addDays(day, 1)) {
    const cur = byDay.get(day);
    const prev = byDay.get(addDays(day, -1));
    if (!cur || !prev) continue;
    for (const counts of series.values()) counts.set(day, 0);
    const keys = new Set([...cur.keys(), ...prev.keys()]);
    for (const key of keys) if (!fieldSeries.has(key)) fieldSeries.set(key, new Map());
    for (const counts of fieldSeries.values()) counts.set(day, 0);
    for (const key of keys) {
      const a = prev.get(key);
      const b = cur.get(key);
      if (a?.fingerprint === b?.fingerprint) continue;
      const section = (a ?? b)!.section;
      series.get("all")!.set(day, series.get("all")!.get(day)! + 1);
      series.get(section)!.set(day, series.get(section)!.get(day)! + 1);
      fieldSeries.get(key)!.set(day, 1);
    }
  }
  for (const [key, counts] of [...fieldSeries].sort(([a], [b]) => a.localeCompare(b))) series.set(key, counts);
  return series;
}

/** One day of one series against its baseline: the points of the baseline_days days before it. */
export function evaluate(points: Map<string, number>, day: string, series: string, p: AnomalyParams): Evaluation {
  const count = points.get(day) ?? 0;
  const baseline: number[] = [];
  for (let i = p.baseline_days; i >= 1; i--) {
    const v = points.get(addDays(day, -i));
    if (v !== undefined) baseline.push(v);
  }
  const n = baseline.length;
  if (n < p.min_baseline_points || n === 0) {
    return { day, series, count, baseline_points: n, baseline_mean: null, baseline_sd: null, z: null, status: "insufficient_baseline" };
  }
  const mean = baseline.reduce((a, b) => a + b, 0) / n;
  // Population standard deviation (divide by n): the baseline is the whole reference window, not a sample of it.
  const sd = Math.sqrt(baseline.reduce((a, b) => a + (b - mean) ** 2, 0) / n);
  const z = sd > 0 ? (count - mean) / sd : null;
  const anomalous = count >= p.min_change_count && (z !== null ? z >= p.zscore_threshold : count > mean);
  return {
    day,
    series,
    count,
    baseline_points: n,
    baseline_mean: round6(mean),
    baseline_sd: round6(sd),
    z: z === null ? null : round6(z),
    status: anomalous ? "anomaly" : "ok",
  };
}

/** Every day of the last `days` days (today included) that is a point, per series; the anomalous ones listed. */
export async function preflightAnomalies(ctx: AppContext, p: AnomalyParams, sel: Selection) {
  const to = dayOf(ctx.clock.now());
  const from = addDays(to, -(p.days - 1));
  const all = await changeSeries(ctx, addDays(from, -p.baseline_days), to, sel);
  const anomalies: Evaluation[] = [];
  let evaluated = 0;
  for (const [name, points] of all) {
    for (const day of [...points.keys()].filter((d) => d >= from).sort()) {
      const e = evaluate(points, day, name, p);
      if (e.status !== "insufficient_baseline") evaluated++;
      if (e.status === "anomaly") anomalies.push(e);
    }
  }
  anomalies.sort((a, b) => a.day.localeCompare(b.day) || a.series.localeCompare(b.series));
  return { from, to, series: [...all.keys()], evaluated, anomalies };
}
