import type { Param, Queryable } from "../../db/port";
import type { RowOf } from "../../db/rows";
import { SEVERITIES } from "../audit/glossary";
import type { auditRows, auditTriage } from "../tables";

// The exports' pages of audit_rows: keyset on (run, id) through audit_rows_run_idx, PAGE rows a read. export.json's
// page is written by the database itself as one text — a JSON object per row, joined with string_agg — so that a
// page is one string and one buffer in the process, with no per-row JS objects or strings: what kept a million-row
// export's heap growth under its 50 MB budget (bench/README.md). Written once for both engines: the JSON text is
// built with || from the row's columns (no json_object: PostgreSQL's json_build_object writes other spacing than
// JSON.stringify), and string_agg(… ORDER BY …) is common to PostgreSQL and SQLite ≥ 3.44.

export const PAGE = 1000;

type Row = RowOf<typeof auditRows>;
export type RawRow = Pick<
  Row,
  "id" | "run_id" | "signature" | "kind" | "slot" | "block_time" | "delta_raw" | "types" | "severity_rank" | "declaration_id" | "detail"
> & {
  triage: RowOf<typeof auditTriage>["status"] | null;
};

export interface Conditions {
  sql: string;
  params: Param[];
}

/** The next page of a run's rows after row id `after` that pass the conditions (filters.ts rowConditions). */
export function rowsPage(q: Queryable, runId: number, after: number, c: Conditions): Promise<RawRow[]> {
  return q.all<RawRow>(
    `SELECT r.id, r.run_id, r.signature, r.kind, r.slot, r.block_time, r.delta_raw, r.types, r.severity_rank, r.declaration_id, r.detail, t.status AS triage
     FROM audit_rows r LEFT JOIN audit_triage t ON t.signature = r.signature
     WHERE r.run_id = ? AND r.id > ?${c.sql} ORDER BY r.id LIMIT ${PAGE}`,
    [runId, after, ...c.params],
  );
}

/**
 * A decimal string of raw units in SQL, exactly as formatUnits writes it, from audit_rows.abs_key (|raw| as 40
 * zero-padded digits) and the sign of delta_raw: whole part without leading zeros ("0" when empty), fraction
 * without trailing zeros (no point when empty).
 */
function sqlUnits(decimals: number, signed: boolean): string {
  if (!Number.isInteger(decimals) || decimals < 0 || decimals > 30) throw new Error(`unexpected decimals ${decimals}`);
  const whole = `coalesce(nullif(ltrim(substr(r.abs_key, 1, ${40 - decimals}), '0'), ''), '0')`;
  const frac = decimals ? `rtrim(substr(r.abs_key, ${41 - decimals}, ${decimals}), '0')` : "''";
  const sign = signed ? "(CASE WHEN substr(r.delta_raw, 1, 1) = '-' THEN '-' ELSE '' END) || " : "";
  return `${sign}${whole} || (CASE WHEN ${frac} = '' THEN '' ELSE '.' || ${frac} END)`;
}

/**
 * A JSON string of a text column: backslash and quote escaped. Control characters are not escaped here (no common
 * SQL spells them); a page holding one is rebuilt in TypeScript instead (src/transparency/reports/exports.ts).
 */
const jsonText = (column: string) => `'"' || replace(replace(${column}, '\\', '\\\\'), '"', '\\"') || '"'`;
const orNull = (text: string) => `coalesce(${text}, 'null')`;

/** One export row as JSON text: the same keys, order and values as JSON.stringify(exportRowOf(r)). */
function sqlRowJson(decimals: number): string {
  const severity = `CASE r.severity_rank ${SEVERITIES.map((s, i) => `WHEN ${i + 1} THEN '"${s}"'`).join(" ")} ELSE 'null' END`;
  return `'{"run_id":' || CAST(r.run_id AS text)
    || ',"signature":' || ${jsonText("r.signature")}
    || ',"kind":' || ${jsonText("r.kind")}
    || ',"slot":' || ${orNull("CAST(r.slot AS text)")}
    || ',"block_time":' || ${orNull(jsonText("r.block_time"))}
    || ',"delta":"' || ${sqlUnits(decimals, true)} || '"'
    || ',"max_abs_delta":"' || ${sqlUnits(decimals, false)} || '"'
    || ',"anomaly_types":' || (CASE WHEN r.types = '' THEN '[]' ELSE '["' || replace(r.types, ',', '","') || '"]' END)
    || ',"severity":' || ${severity}
    || ',"declaration_id":' || ${orNull("CAST(r.declaration_id AS text)")}
    || ',"triage_status":' || ${orNull(jsonText("t.status"))}
    || ',"detail":' || ${orNull("r.detail")}
    || '}'`;
}

export interface JsonPage {
  /** The page's rows as JSON objects joined by commas; null when the page is empty. */
  chunk: string | null;
  n: number;
  last: number | null;
}

/** The next page of export.json rows after row id `after`, as one text (see the top of this file). */
export async function jsonPage(q: Queryable, runId: number, decimals: number, after: number, c: Conditions): Promise<JsonPage> {
  const row = await q.get<JsonPage>(
    `SELECT string_agg(p.j, ',' ORDER BY p.id) AS chunk, count(*) AS n, max(p.id) AS last
     FROM (SELECT r.id, ${sqlRowJson(decimals)} AS j
           FROM audit_rows r LEFT JOIN audit_triage t ON t.signature = r.signature
           WHERE r.run_id = ? AND r.id > ?${c.sql} ORDER BY r.id LIMIT ${PAGE}) p`,
    [runId, after, ...c.params],
  );
  return row ?? { chunk: null, n: 0, last: null };
}
