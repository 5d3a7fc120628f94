import type { AppContext } from "../../context";
import { queryProblem } from "../../http/errors/errors";
import type { clampEcho } from "./model";
import type { Delta, DeltaEntry } from "./service";

// delta.summary.json: the delta's counts, optionally its timestamps and (a bounded part of) its changes, served
// with a strong ETag and Last-Modified so a dashboard polling it gets 304s until something changes.

export const FIELDS_MAX = { fallback: 200, min: 10, max: 500 } as const;
export const FIELDS_BYTES_MAX = 250_000;

type ClampEcho = typeof clampEcho.static;

/** Any whole number, however long (the request target's own limit bounds it): 10^20 is clamped to 500 like 1000. */
const INTEGER = /^-?\d+$/;
/** A byte bound: any whole number up to 64 digits (past 250000 it is clamped anyway). */
const BYTES = /^\d{1,64}$/;

/** include_fields_max: an integer is clamped to 10..500 (clamped=true when it moved); anything else is 200, clamped=false (the spec). */
export function fieldsMaxOf(raw: string | null): ClampEcho {
  if (raw === null || !INTEGER.test(raw.trim())) return { requested: raw, value: FIELDS_MAX.fallback, clamped: false };
  const n = Number(raw.trim());
  const value = Math.min(FIELDS_MAX.max, Math.max(FIELDS_MAX.min, n));
  return { requested: raw, value, clamped: value !== n };
}

/** include_fields_bytes_limit: 0 or unset disables (value 0); above 250000 is clamped. Other text is refused by normalizeSummaryQuery. */
export function bytesLimitOf(raw: string | null): ClampEcho {
  if (raw === null || raw === "" || !BYTES.test(raw.trim())) return { requested: raw || null, value: 0, clamped: false };
  const n = Number(raw.trim());
  return { requested: raw, value: Math.min(n, FIELDS_BYTES_MAX), clamped: n > FIELDS_BYTES_MAX };
}

/**
 * Runs before the query is validated (the route's transform): applies the spec's clamps and fallback, so the
 * schema (the integers actually used) accepts "9", "501" and "abc" for include_fields_max. A negative or
 * non-integer include_fields_bytes_limit is 400 invalid_query, worded for what is accepted (any whole number: above
 * 250000 is clamped), not the schema's 0..250000 of the value used.
 */
export function normalizeSummaryQuery(query: Record<string, unknown>): void {
  const max = query.include_fields_max;
  if (max !== undefined) query.include_fields_max = String(fieldsMaxOf(Array.isArray(max) ? String(max[0]) : String(max)).value);
  const bytes = query.include_fields_bytes_limit;
  if (typeof bytes !== "string") return;
  // An empty or blank value (a form field left empty) is unset: no bound, as the spec says of unset.
  if (bytes.trim() === "") {
    delete query.include_fields_bytes_limit;
    return;
  }
  if (!BYTES.test(bytes.trim())) {
    throw queryProblem("include_fields_bytes_limit", "must be a whole number of bytes, 0 or more (0 = no bound; above 250000 is clamped to 250000)");
  }
  query.include_fields_bytes_limit = String(bytesLimitOf(bytes).value);
}

export interface SummaryOptions {
  includeTimestamps: boolean;
  includeFields: boolean;
  fieldsMax: ClampEcho;
  bytesLimit: ClampEcho;
}

/**
 * The summary body. It carries no generation time, so equal state gives equal bytes and the same ETag. The
 * changes list keeps at most fieldsMax entries, then drops entries from the end until the list's JSON is within
 * bytesLimit (when set); changes_truncated/truncated_by say which bound cut it.
 */
export function summaryBody(d: Delta, o: SummaryOptions) {
  const { changes, compare_taken_at, current_at, ...rest } = d;
  const body: Record<string, unknown> = { success: true, ...rest };
  if (o.includeTimestamps) body.timestamps = { compare_taken_at, current_at };
  body.include_fields_max = o.fieldsMax;
  body.include_fields_bytes_limit = o.bytesLimit;
  if (o.includeFields) {
    let list: DeltaEntry[] = changes.slice(0, o.fieldsMax.value);
    let by: "max" | "bytes" | null = list.length < changes.length ? "max" : null;
    if (o.bytesLimit.value > 0) {
      let size = Buffer.byteLength(JSON.stringify(list));
      while (list.length > 0 && size > o.bytesLimit.value) {
        const last = list[list.length - 1]!;
        size -= Buffer.byteLength(JSON.stringify(last)) + (list.length > 1 ? 1 : 0);
        list = list.slice(0, -1);
        by = "bytes";
      }
    }
    Object.assign(body, { changes: list, changes_total: changes.length, changes_returned: list.length, changes_truncated: by !== null, truncated_by: by });
  }
  return body;
}

/** Last-Modified: the later of the compared snapshot and this process's start (current values change only with a restart). */
export function lastModifiedOf(ctx: AppContext, d: Delta): Date {
  const times = [ctx.startedAt.getTime(), d.compare_taken_at ? Date.parse(d.compare_taken_at) : 0];
  return new Date(Math.floor(Math.max(...times) / 1000) * 1000);
}
