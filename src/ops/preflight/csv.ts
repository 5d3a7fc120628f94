import { csvTable } from "../../http/formats/csv";
import type { DeltaEntry, HistoryRow } from "./service";
import type { Evaluation } from "./anomalies";
import type { GuardRow } from "./guards";

// The CSV twins of the preflight JSON exports: the same rows and columns, written by src/http/formats/csv.ts (null is an
// empty cell, booleans are true/false, formula-leading text neutralised).

export const GUARD_COLUMNS = ["section", "field", "value", "fingerprint", "secret"] as const;
export const DELTA_COLUMNS = ["section", "field", "change", "before", "after", "before_fingerprint", "after_fingerprint"] as const;
export const HISTORY_COLUMNS = ["day", "section", "field", "value", "fingerprint", "changed"] as const;
export const ANOMALY_COLUMNS = ["day", "series", "count", "baseline_points", "baseline_mean", "baseline_sd", "z", "status"] as const;

export const guardsCsv = (rows: GuardRow[]) => csvTable(rows, GUARD_COLUMNS);
export const deltaCsv = (rows: DeltaEntry[]) => csvTable(rows, DELTA_COLUMNS);
export const historyCsv = (rows: HistoryRow[]) => csvTable(rows, HISTORY_COLUMNS);
export const anomaliesCsv = (rows: Evaluation[]) => csvTable(rows, ANOMALY_COLUMNS);
