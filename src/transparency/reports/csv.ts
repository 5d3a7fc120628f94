import { csvRecords } from "../../http/formats/csv";
import { ALERT_SIDE_KEYS, ALERT_SIDES, alertsRow, type AlertsAnswer } from "./alerts";
import type { compare, diffExport } from "./diffs";

// The CSV twins of alerts.json and the diffs, written by src/http/formats/csv.ts (RFC 4180; null is an empty cell,
// booleans true/false, formula-leading text neutralised). Each is built from its JSON answer, so the two cannot
// disagree.

type Cell = string | number | boolean | null;
const csvOf = (columns: readonly string[], records: Cell[][]) => csvRecords([[...columns], ...records]);

export const ALERTS_CSV_COLUMNS = [
  "selected_run",
  "evaluated_at",
  "alert_level",
  "should_alert",
  "reasons",
  "thresholds.sigs_increase_threshold_pct",
  "thresholds.rows_increase_threshold_pct",
  "points_available",
  ...ALERT_SIDES.flatMap((side) => ALERT_SIDE_KEYS.map((k) => `${side}.${k}`)),
];
export const COMPARE_CSV_COLUMNS = ["run_a", "run_b", "type", "selected", "latest", "delta"] as const;
export const DIFF_CSV_COLUMNS = ["run", "baseline_run", "type", "selected", "latest", "delta", "pct_delta"] as const;

export function alertsCsv(a: AlertsAnswer): string {
  const row = alertsRow(a);
  return csvOf(ALERTS_CSV_COLUMNS, [ALERTS_CSV_COLUMNS.map((c) => row[c] ?? null)]);
}

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
