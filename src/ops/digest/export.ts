import type { Digest } from "./service";

// The digest as one flat table: export.json and export.csv carry the same rows (hours, groups, findings, suppressed
// findings), a `section` column saying which. A cell a section does not use is null in JSON and empty in CSV.

export const EXPORT_COLUMNS = [
  "section",
  "hour",
  "dimension",
  "value",
  "kind",
  "first_hour",
  "last_hour",
  "hours",
  "requests",
  "forbidden",
  "suppressed",
  "observed",
  "baseline",
  "ratio",
  "rule_id",
  "why",
] as const;

export type ExportColumn = (typeof EXPORT_COLUMNS)[number];
export type ExportRow = Record<ExportColumn, string | number | null>;

const blank = (): ExportRow => Object.fromEntries(EXPORT_COLUMNS.map((c) => [c, null])) as ExportRow;

export function digestRows(d: Digest): ExportRow[] {
  // A spread over blank() keeps the columns' order: a key that exists keeps its place when assigned again.
  const rows: ExportRow[] = d.hours.map(({ spike: _, ...h }) => ({ ...blank(), section: "hour", ...h }));
  for (const dimension of ["route", "partner_key", "client_prefix"] as const) {
    for (const { count, ...g } of d.groups[dimension].items) {
      rows.push({ ...blank(), section: "group", dimension, ...g, forbidden: count, observed: count - g.suppressed });
    }
  }
  for (const f of d.findings) rows.push({ ...blank(), section: "finding", ...f });
  for (const f of d.suppressed) rows.push({ ...blank(), section: "suppressed", ...f });
  return rows;
}

/** `403-digest-<from>-<to>.<ext>` (hours as YYYY-MM-DDTHH, safe in a header). */
export const exportFilename = (d: Digest, ext: string) => `403-digest-${d.window.from_hour}-${d.window.to_hour}.${ext}`;
