import { parseCalendarStrict } from "../../clock";
import { commaList } from "../../config/parse";
import { type Param, Where } from "../../db/port";
import { AppError } from "../../http/errors/errors";
import { absKey, parseUnitsOrThrow } from "../audit/amounts";
import { ANOMALY_TYPES, isAnomalyType, isSeverity, SEVERITIES, severityRank, type AnomalyType, type Severity } from "../audit/glossary";

// Row filters shared by trend.json and the exports: severity and types (lists, repeated or comma-separated; any of), signature (exact),
// min_abs_delta (a decimal token amount, compared exactly through audit_rows.abs_key). Each builds a SQL
// fragment with its own placeholders, so a filter never becomes SQL text.

export interface RowFilterQuery {
  /** Repeated or comma-separated (`severity=low&severity=high` or `severity=low,high`). */
  severity?: string | string[];
  types?: string | string[];
  signature?: string;
  min_abs_delta?: string;
}

export interface RowFilters {
  severities: Severity[] | null;
  types: AnomalyType[] | null;
  signature: string | null;
  /** Decimal text as given (echoed) and per-decimals raw conversion. */
  minAbsDelta: string | null;
}

const bad = (field: string, problem: string) => new AppError("invalid_query", `${field} ${problem}`, { details: [{ field, problem }] });

function list<T extends string>(given: string | string[] | undefined, field: string, allowed: readonly T[], ok: (v: string) => v is T): T[] | null {
  const raw = Array.isArray(given) ? given.join(",") : given;
  if (raw === undefined || raw.replaceAll(",", "").trim() === "") return null;
  const values = commaList(raw);
  const unknown = values.filter((v) => !ok(v));
  if (unknown.length)
    throw bad(
      field,
      `has unknown value${unknown.length > 1 ? "s" : ""} ${unknown.map((v) => JSON.stringify(v.slice(0, 40))).join(", ")}; use a comma list of: ${allowed.join(", ")}`,
    );
  return allowed.filter((a) => values.includes(a));
}

export function parseRowFilters(q: RowFilterQuery, decimalsForCheck: number): RowFilters {
  const severities = list(q.severity, "query.severity", SEVERITIES, isSeverity);
  const types = list(q.types, "query.types", ANOMALY_TYPES, isAnomalyType);
  const signature = q.signature?.trim() ? q.signature.trim() : null;
  let minAbsDelta: string | null = null;
  if (q.min_abs_delta !== undefined && q.min_abs_delta !== "") {
    if (/^\s*-/.test(q.min_abs_delta)) throw bad("query.min_abs_delta", `must not be negative; got ${JSON.stringify(q.min_abs_delta.slice(0, 40))}`);
    parseUnitsOrThrow(q.min_abs_delta, decimalsForCheck, "query.min_abs_delta", "invalid_query");
    minAbsDelta = q.min_abs_delta.trim();
  }
  return { severities, types, signature, minAbsDelta };
}

export const hasRowFilters = (f: RowFilters) => f.severities !== null || f.types !== null || f.signature !== null || f.minAbsDelta !== null;

/** `AND …` conditions over audit_rows (alias r) and their parameters, for a run of the given decimals. */
export function rowConditions(f: RowFilters, decimals: number): { sql: string; params: Param[] } {
  const w = new Where();
  if (f.severities) w.whenAny("r.severity_rank", f.severities.map(severityRank));
  if (f.types) w.add(`(${f.types.map(() => "(',' || r.types || ',') LIKE ?").join(" OR ")})`, ...f.types.map((t) => `%,${t},%`));
  w.when(f.signature, "r.signature = ?");
  if (f.minAbsDelta !== null) w.add("r.abs_key >= ?", absKey(parseUnitsOrThrow(f.minAbsDelta, decimals, "query.min_abs_delta", "invalid_query")));
  return { sql: w.parts.map((p) => ` AND ${p}`).join(""), params: w.params };
}

export const filtersEcho = (f: RowFilters) => ({ severity: f.severities, types: f.types, signature: f.signature, min_abs_delta: f.minAbsDelta });

/** from/to of the exports: a UTC date (a whole day) or date-time ending in Z; from ≤ to. */
export function parseRange(from: string | undefined, to: string | undefined): { from: string; to: string } | null {
  if (!from && !to) return null;
  const at = (raw: string, field: string, end: boolean) => {
    const day = /^\d{4}-\d{2}-\d{2}$/.test(raw);
    const ms = parseCalendarStrict(day ? `${raw}T00:00:00Z` : raw);
    if (
      (!day && !/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}(:\d{2}(\.\d{1,3})?)?Z$/.test(raw)) ||
      Number.isNaN(ms) ||
      (day && new Date(ms).toISOString().slice(0, 10) !== raw)
    ) {
      throw bad(field, `must be a UTC date (2026-01-31) or date-time ending in Z; got ${JSON.stringify(raw.slice(0, 40))}`);
    }
    // Labels are to the second: a bare date as the end takes in the whole day.
    return day && end ? `${raw}T23:59:59Z` : `${new Date(ms).toISOString().slice(0, 19)}Z`;
  };
  const f = from ? at(from, "query.from", false) : "0000-01-01T00:00:00Z";
  const t = to ? at(to, "query.to", true) : "9999-12-31T23:59:59Z";
  if (f > t)
    throw new AppError("invalid_query", "query.from is after query.to", { details: [{ field: "query.from", problem: `must not be after query.to (${to})` }] });
  return { from: f, to: t };
}
