import { csvTable } from "../../http/formats/csv";
import { columnsOf } from "../csv-columns";
import type { Evaluation } from "./anomalies";
import type { GuardRow } from "./guards";
import { PreflightModel as M } from "./model";
import type { DeltaEntry, HistoryRow } from "./service";

// The CSV twins of the preflight JSON exports: the same rows and columns, written by src/http/formats/csv.ts (null is an
// empty cell, booleans are true/false, formula-leading text neutralised).

export const guardsCsv = (rows: GuardRow[]) => csvTable(rows, columnsOf(M.guards.properties.guards.items));
export const deltaCsv = (rows: DeltaEntry[]) => csvTable(rows, columnsOf(M.delta.properties.changes.items));
export const historyCsv = (rows: HistoryRow[]) => csvTable(rows, columnsOf(M.history.properties.rows.items));
export const anomaliesCsv = (rows: Evaluation[]) => csvTable(rows, columnsOf(M.anomalies.properties.anomalies.items));
