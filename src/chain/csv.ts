import { stringify } from "csv-stringify/sync";

// The .csv twins of the chain proofs: RFC 4180 (CRLF, quoted when needed) by csv-stringify, never by hand.
// A single-object proof is one header row and one data row with dotted column names (trust_context.rpc_host);
// list-shaped answers are one row per item. null is an empty cell, booleans are true/false, nested arrays
// are JSON in their cell.

type Cell = string | number | boolean | null;

export function flatten(value: Record<string, unknown>, prefix = "", out: Record<string, Cell> = {}): Record<string, Cell> {
  for (const [k, v] of Object.entries(value)) {
    const key = prefix ? `${prefix}.${k}` : k;
    if (v !== null && typeof v === "object" && !Array.isArray(v)) flatten(v as Record<string, unknown>, key, out);
    else if (Array.isArray(v)) out[key] = JSON.stringify(v);
    else out[key] = v === undefined ? null : (v as Cell);
  }
  return out;
}

export function toCsv(rows: Array<Record<string, Cell>>, columns: string[]): string {
  return stringify(rows, {
    header: true,
    columns,
    record_delimiter: "windows",
    cast: { boolean: (b) => (b ? "true" : "false") },
  });
}

/** One proof object → header + one row (the `success` flag is the envelope's, not the proof's). */
export function objectCsv(proof: Record<string, unknown>): string {
  const { success: _ignored, ...rest } = proof;
  const row = flatten(rest);
  return toCsv([row], Object.keys(row));
}

/** Items of a list → one row each, with the given top-level fields repeated on every row for context. */
export function listCsv(context: Record<string, unknown>, items: Array<Record<string, unknown>>, emptyColumns: string[]): string {
  const ctx = flatten(context);
  const rows = items.map((item) => ({ ...ctx, ...flatten(item) }));
  const columns = rows[0] ? Object.keys(rows[0]) : [...Object.keys(ctx), ...emptyColumns];
  return toCsv(rows, columns);
}

export function csvResponse(body: string, filename: string): Response {
  return new Response(body, {
    headers: {
      "content-type": "text/csv; charset=utf-8",
      "content-disposition": `inline; filename="${filename}"`,
      "cache-control": "public, max-age=60",
    },
  });
}
