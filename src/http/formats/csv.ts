import { stringify } from "csv-stringify/sync";

// Every CSV Herald writes goes through this module (a convention test holds it): RFC 4180 by csv-stringify, never by
// hand. Safe to open in a spreadsheet (OWASP "CSV Injection"): a string cell starting with = + - @, a tab or a CR,
// which a spreadsheet would run as a formula, gets a leading single quote; numbers and booleans are written as they
// are, and so is a string that is exactly a decimal number (token amounts are decimal strings on the wire, cannot
// carry a formula, and a script must read them back unchanged).

const FORMULA_LEAD = /^[=+\-@\t\r]/;
const DECIMAL = /^-?\d+(?:\.\d+)?$/;

/** A string cell as written: prefixed with `'` when a spreadsheet would run it as a formula (see above). */
export function neutralizeCell(text: string): string {
  return FORMULA_LEAD.test(text) && !DECIMAL.test(text) ? `'${text}` : text;
}

const OPTIONS = {
  record_delimiter: "windows",
  cast: { string: neutralizeCell, boolean: (b: boolean) => (b ? "true" : "false") },
} as const;

/**
 * An export's columns declared once, each with how a row gives its cell: the header (the keys, in order) and each
 * row's object (JSON and CSV export the same keys in the same order) follow from the one table.
 */
// biome-ignore lint/suspicious/noExplicitAny: a getter's row type is inferred from the table, not named twice
export function columnTable<F extends Record<string, (row: any) => unknown>>(fields: F) {
  const columns = Object.keys(fields) as Array<keyof F & string>;
  const rowOf = (r: Parameters<F[keyof F]>[0]) => {
    const row: Record<string, unknown> = {};
    for (const c of columns) row[c] = fields[c]!(r);
    return row as { [K in keyof F]: ReturnType<F[K]> };
  };
  return { columns, rowOf };
}

/** A header line (the columns, in order), then one record per row: `row[column]` for each column. */
export function csvTable(rows: ReadonlyArray<object>, columns: readonly string[]): string {
  return stringify(rows as Array<Record<string, unknown>>, { ...OPTIONS, header: true, columns: [...columns] });
}

/** Rows per slice of csvTableInSlices: ~3 ms of formatting at most before the event loop turns. */
const SLICE_ROWS = 500;

/**
 * csvTable for many rows, with a turn of the event loop between slices: the same text, without holding every other
 * request meanwhile (5,000 dead letters took ~50 ms in one piece on PostgreSQL, bench scale at 1M).
 */
export async function csvTableInSlices(rows: ReadonlyArray<object>, columns: readonly string[]): Promise<string> {
  const parts = [csvTable(rows.slice(0, SLICE_ROWS), columns)];
  for (let i = SLICE_ROWS; i < rows.length; i += SLICE_ROWS) {
    await new Promise<void>((resolve) => setImmediate(resolve));
    const slice = rows.slice(i, i + SLICE_ROWS) as Array<Record<string, unknown>>;
    parts.push(csvRecords(slice.map((r) => columns.map((c) => r[c]))));
  }
  return parts.join("");
}

/** Records without a header (a streamed export writes its header once, then one call per page). */
export function csvRecords(records: ReadonlyArray<ReadonlyArray<unknown>>): string {
  return stringify(records as unknown[][], OPTIONS);
}

export const CSV_CONTENT_TYPE = "text/csv; charset=utf-8";

/** Content-Type and Content-Disposition of a CSV answer; `filename` is ours (never user input). */
export function csvHeaders(filename: string, disposition: "attachment" | "inline" = "attachment"): Record<string, string> {
  return { "content-type": CSV_CONTENT_TYPE, "content-disposition": `${disposition}; filename="${filename}"` };
}

/**
 * A CSV answer. Cache-Control is left to the caller: operator answers (/admin/*) get `private, no-store` from the
 * HTTP core (src/http/caching/cache-control.ts); public ones pass their own.
 */
export function csvResponse(
  body: string | Uint8Array,
  filename: string,
  opts: { disposition?: "attachment" | "inline"; headers?: Record<string, string> } = {},
): Response {
  return new Response(body, { headers: { ...csvHeaders(filename, opts.disposition), ...opts.headers } });
}

/** The OpenAPI detail of a route answering CSV, so every one documents its 200 alike: a string, `description` saying what. */
export const csvDoc = (summary: string, description = "text/csv", responses: Record<number, object> = {}) => ({
  summary,
  responses: { 200: { description, content: { "text/csv": { schema: { type: "string" as const } } } }, ...responses },
});
