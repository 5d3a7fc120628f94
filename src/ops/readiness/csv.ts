import { csvTable } from "../../http/formats/csv";
import type { NoiseExport, NoiseFigures } from "./service";
import type { ProbeRunRow } from "./probes";

// The CSV twins of the readiness exports, written by src/http/formats/csv.ts: null is an empty cell, booleans are
// true/false, formula-leading text neutralised — the same conventions as every CSV Herald writes.

type Cell = string | number | boolean | null;

export const NOISE_CSV_COLUMNS = [
  "row_type",
  "window_days",
  "date",
  "requests",
  "forbidden",
  "noise_percent",
  "forbidden_per_hour",
  "within_threshold",
  "max_percent",
  "max_per_hour",
  "from",
  "to",
  "hours_total",
  "hours_with_data",
] as const;

export type NoiseCsvMode = "summary" | "points";

/**
 * One column set for both kinds of row, told apart by row_type: `window` rows (mode=summary) carry a window's
 * figures and its span (the JSON's windows[] with include_windows_meta=1); `day` rows (mode=points, the default,
 * or summary with include_points=1) carry one UTC day (the JSON's points[]).
 */
export function noiseCsv(exp: NoiseExport, mode: NoiseCsvMode, includePoints: boolean): string {
  const base = (f: NoiseFigures) => ({
    requests: f.requests,
    forbidden: f.forbidden,
    noise_percent: f.noise_percent,
    forbidden_per_hour: f.forbidden_per_hour,
    within_threshold: f.within_threshold,
    max_percent: exp.threshold.max_percent,
    max_per_hour: exp.threshold.max_per_hour,
  });
  const rows: Array<Record<string, Cell>> = [];
  if (mode === "summary") {
    for (const w of exp.windows) {
      rows.push({
        row_type: "window",
        window_days: w.window_days,
        date: null,
        ...base(w),
        from: w.meta?.from ?? null,
        to: w.meta?.to ?? null,
        hours_total: w.meta?.hours_total ?? null,
        hours_with_data: w.meta?.hours_with_data ?? null,
      });
    }
  }
  if (mode === "points" || includePoints) {
    for (const p of exp.points ?? []) {
      rows.push({ row_type: "day", window_days: null, date: p.date, ...base(p), from: null, to: null, hours_total: null, hours_with_data: null });
    }
  }
  return csvTable(rows, NOISE_CSV_COLUMNS);
}

export const PROBE_HISTORY_COLUMNS = ["at", "run_id", "probe", "url", "outcome", "status", "latency_ms", "had_data", "ok", "error"] as const;

/** The probe runs that came back empty or failing; outcome says which (a failing run is not also "empty"). */
export function probeHistoryCsv(rows: ProbeRunRow[]): string {
  return csvTable(
    rows.map((r) => ({ ...r, outcome: r.ok ? "empty" : "failed" })),
    PROBE_HISTORY_COLUMNS,
  );
}
