import { csvRecords } from "../../http/formats/csv";
import { ALERT_SIDE_KEYS, ALERT_SIDES, type AlertsAnswer } from "./alerts";
import type { compare, diffExport } from "./diffs";

// The CSV twins of alerts.json and the diffs, written by src/http/formats/csv.ts (RFC 4180; null is an empty cell,
// booleans true/false, formula-leading text neutralised). Each is built from its JSON answer, so the two cannot
// disagree.

type Cell = string | number | boolean | null;
const csvOf = (columns: readonly string[], records: Cell[][]) => csvRecords([[...columns], ...records]);

/** alerts.csv's columns (dotted names) and how each is read from the JSON answer: one record, the same values. */
const ALERT_CELLS: Record<string, (a: AlertsAnswer) => Cell> = {
  selected_run: (a) => a.selected_run,
  evaluated_at: (a) => a.evaluated_at,
  alert_level: (a) => a.snapshot.alert_level,
  should_alert: (a) => a.snapshot.should_alert,
  reasons: (a) => a.snapshot.reasons.join("; "),
  "thresholds.sigs_increase_threshold_pct": (a) => a.snapshot.thresholds.sigs_increase_threshold_pct,
  "thresholds.rows_increase_threshold_pct": (a) => a.snapshot.thresholds.rows_increase_threshold_pct,
  points_available: (a) => a.snapshot.points_available,
  ...Object.fromEntries(ALERT_SIDES.flatMap((side) => ALERT_SIDE_KEYS.map((k) => [`${side}.${k}`, (a: AlertsAnswer) => a.snapshot[side]?.[k] ?? null]))),
};
export const ALERTS_CSV_COLUMNS = Object.keys(ALERT_CELLS);
export const COMPARE_CSV_COLUMNS = ["run_a", "run_b", "type", "selected", "latest", "delta"] as const;
export const DIFF_CSV_COLUMNS = ["run", "baseline_run", "type", "selected", "latest", "delta", "pct_delta"] as const;

export const alertsCsv = (a: AlertsAnswer): string => csvOf(ALERTS_CSV_COLUMNS, [Object.values(ALERT_CELLS).map((cell) => cell(a))]);

export function compareCsv(c: Awaited<ReturnType<typeof compare>>): string {
  return csvOf(
    COMPARE_CSV_COLUMNS,
    c.rows.map((r) => [c.run_a.resolved_run, c.run_b.resolved_run, r.type, r.selected, r.latest, r.delta]),
  );
}

export function diffCsv(d: Awaited<ReturnType<typeof diffExport>>): string {
  return csvOf(
    DIFF_CSV_COLUMNS,
    d.rows.map((r) => [d.run.resolved_run, d.baseline_run.resolved_run, r.type, r.selected, r.latest, r.delta, (r as { pct_delta: number | null }).pct_delta]),
  );
}
