import { csvResponse as csvAnswer, csvTable } from "../http/csv";

// The .csv twins of the chain proofs, written by src/http/csv.ts (RFC 4180, formula-leading text neutralised).
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

/** One proof object → header + one row (the `success` flag is the envelope's, not the proof's). */
export function objectCsv(proof: Record<string, unknown>): string {
  const { success: _ignored, ...rest } = proof;
  const row = flatten(rest);
  return csvTable([row], Object.keys(row));
}

/** Items of a list → one row each, with the given top-level fields repeated on every row for context. */
export function listCsv(context: Record<string, unknown>, items: Array<Record<string, unknown>>, emptyColumns: string[]): string {
  const ctx = flatten(context);
  const rows = items.map((item) => ({ ...ctx, ...flatten(item) }));
  const columns = rows[0] ? Object.keys(rows[0]) : [...Object.keys(ctx), ...emptyColumns];
  return csvTable(rows, columns);
}

/** Public proofs: inline, cacheable for a minute like their JSON twins. */
export const csvResponse = (body: string, filename: string): Response =>
  csvAnswer(body, filename, { disposition: "inline", headers: { "cache-control": "public, max-age=60" } });
