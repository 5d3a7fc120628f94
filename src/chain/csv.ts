import type { TSchema } from "elysia";
import { csvResponse as csvAnswer, csvTable } from "../http/formats/csv";

// The .csv twins of the chain proofs, written by src/http/formats/csv.ts (RFC 4180, formula-leading text neutralised).
// A single-object proof is one header row and one data row with dotted column names (trust_context.rpc_host);
// list-shaped answers are one row per item. null is an empty cell, booleans are true/false, nested arrays
// are JSON in their cell.

type Cell = string | number | boolean | null;

/** The parts of a response schema (typebox, i.e. JSON Schema) that decide a CSV's columns. */
interface ColumnSchema {
  type?: string;
  properties?: Record<string, ColumnSchema>;
  anyOf?: ColumnSchema[];
  items?: ColumnSchema;
}

/** The object branch of a property's schema (an object, or a nullable one), or undefined for anything else. */
const objectBranch = (s: ColumnSchema | undefined): ColumnSchema | undefined =>
  s?.type === "object" && s.properties ? s : s?.anyOf?.find((b) => b.type === "object" && b.properties);

/**
 * An object as dotted columns. With its schema, the columns are the schema's (then any key it does not name): a
 * nullable object that is null is still its leaf columns, empty — so a proof's header does not change shape the day
 * its `last_run` first exists.
 */
function flatten(value: Record<string, unknown> | null, prefix = "", out: Record<string, Cell> = {}, schema?: ColumnSchema): Record<string, Cell> {
  const named = schema?.properties;
  const keys = named ? [...Object.keys(named), ...Object.keys(value ?? {}).filter((k) => !(k in named))] : Object.keys(value ?? {});
  for (const k of keys) {
    const v = value?.[k];
    const key = prefix ? `${prefix}.${k}` : k;
    const nested = objectBranch(named?.[k]);
    if (v !== null && typeof v === "object" && !Array.isArray(v)) flatten(v as Record<string, unknown>, key, out, nested);
    else if ((v === null || v === undefined) && nested) flatten(null, key, out, nested);
    else if (Array.isArray(v)) out[key] = JSON.stringify(v);
    else out[key] = v === undefined ? null : (v as Cell);
  }
  return out;
}

/**
 * One proof object → header + one row, its columns from the JSON twin's schema. The envelope's `success` flag and
 * include_meta's `meta` block are the JSON answer's, not the proof's.
 */
export function objectCsv(proof: Record<string, unknown>, schema: TSchema): string {
  const { success: _ignored, ...rest } = proof;
  const { success: _flag, meta: _meta, ...properties } = (schema as ColumnSchema).properties ?? {};
  const row = flatten(rest, "", {}, { properties });
  return csvTable([row], Object.keys(row));
}

/** The columns of a list CSV's items, in order (the schema's leaves, dotted). */
const columnsOf = (itemSchema: TSchema): string[] => Object.keys(flatten(null, "", {}, itemSchema as ColumnSchema));

/**
 * Items of a list → one row each (columns from the item schema), the given top-level fields repeated on every row
 * for context. `trailing` (a proof's trust_context) is repeated too, as dotted columns after the items' own, so the
 * earlier columns keep their places.
 */
export function listCsv(
  context: Record<string, unknown>,
  items: Array<Record<string, unknown>>,
  itemSchema: TSchema,
  trailing?: { name: string; value: Record<string, unknown>; schema: TSchema },
): string {
  const ctx = flatten(context);
  const tail = trailing ? flatten(trailing.value, trailing.name, {}, trailing.schema as ColumnSchema) : {};
  const rows = items.map((item) => ({ ...ctx, ...flatten(item, "", {}, itemSchema as ColumnSchema), ...tail }));
  const columns = rows[0] ? Object.keys(rows[0]) : [...Object.keys(ctx), ...columnsOf(itemSchema), ...Object.keys(tail)];
  return csvTable(rows, columns);
}

/** The dotted column names of an object schema's leaves under `prefix` (a registry's header). */
export const dottedColumns = (prefix: string, schema: TSchema): string[] => Object.keys(flatten(null, prefix, {}, schema as ColumnSchema));

/** Public proofs: inline, cacheable for a minute like their JSON twins. */
export const csvResponse = (body: string, filename: string): Response =>
  csvAnswer(body, filename, { disposition: "inline", headers: { "cache-control": "public, max-age=60" } });
