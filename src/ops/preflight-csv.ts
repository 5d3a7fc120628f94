import { stringify } from "csv-stringify/sync";
import type { DeltaEntry, HistoryRow } from "./preflight";
import type { Evaluation } from "./preflight-anomalies";
import type { GuardRow } from "./preflight-guards";

// The CSV twins of the preflight JSON exports: the same rows and columns, RFC 4180 by csv-stringify. null is an
// empty cell, booleans are true/false.

type Cell = string | number | boolean | null;
const toCsv = (rows: Array<Record<string, Cell>>, columns: readonly string[]) =>
  stringify(rows, { header: true, columns: [...columns], record_delimiter: "windows", cast: { boolean: (b) => (b ? "true" : "false") } });

export const GUARD_COLUMNS = ["section", "field", "value", "fingerprint", "secret"] as const;
export const DELTA_COLUMNS = ["section", "field", "change", "before", "after", "before_fingerprint", "after_fingerprint"] as const;
export const HISTORY_COLUMNS = ["day", "section", "field", "value", "fingerprint", "changed"] as const;
export const ANOMALY_COLUMNS = ["day", "series", "count", "baseline_points", "baseline_mean", "baseline_sd", "z", "status"] as const;

export const guardsCsv = (rows: GuardRow[]) => toCsv(rows as unknown as Array<Record<string, Cell>>, GUARD_COLUMNS);
export const deltaCsv = (rows: DeltaEntry[]) => toCsv(rows as unknown as Array<Record<string, Cell>>, DELTA_COLUMNS);
export const historyCsv = (rows: HistoryRow[]) => toCsv(rows as unknown as Array<Record<string, Cell>>, HISTORY_COLUMNS);
export const anomaliesCsv = (rows: Evaluation[]) => toCsv(rows as unknown as Array<Record<string, Cell>>, ANOMALY_COLUMNS);

export const csvResponse = (body: string, filename: string) =>
  new Response(body, { headers: { "content-type": "text/csv; charset=utf-8", "content-disposition": `attachment; filename="${filename}"` } });
