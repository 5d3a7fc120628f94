import { csvTable } from "../../http/formats/csv";
import type { NoiseExport } from "./service";
import type { ProbeRunRow } from "./probes";

// The CSV twins of the readiness exports, written by src/http/formats/csv.ts: null is an empty cell, booleans are
// true/false, formula-leading text neutralised — the same conventions as every CSV Herald writes.

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
  // A column a row has no value for (a day's window, a window's date) is an empty cell, as null is.
  const windows = mode === "summary" ? exp.windows.map((w) => ({ row_type: "window", ...w, ...w.meta, ...exp.threshold })) : [];
  const days = mode === "points" || includePoints ? (exp.points ?? []).map((p) => ({ row_type: "day", ...p, ...exp.threshold })) : [];
  return csvTable([...windows, ...days], NOISE_CSV_COLUMNS);
}

export const PROBE_HISTORY_COLUMNS = ["at", "run_id", "probe", "url", "outcome", "status", "latency_ms", "had_data", "ok", "error"] as const;

/** The probe runs that came back empty or failing; outcome says which (a failing run is not also "empty"). */
const withOutcome = (r: ProbeRunRow) => ({ ...r, outcome: r.ok ? "empty" : "failed" });
export const probeHistoryCsv = (rows: ProbeRunRow[]) => csvTable(rows.map(withOutcome), PROBE_HISTORY_COLUMNS);
