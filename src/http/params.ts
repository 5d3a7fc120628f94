import { FormatRegistry } from "@sinclair/typebox";
import { t, type TSchema } from "elysia";
import type { ProblemDetail } from "./errors/errors";
import type { RouteSchemas } from "./routes/route-index";
import { kindInRange, tooLong, tooShort } from "./errors/validation";

/** How an integer in a query or path is written: decimal digits, an optional leading minus, nothing else. */
const DECIMAL_INTEGER = /^-?\d+$/;
/** How a number in a query or path is written: decimal digits with an optional fraction and leading minus. */
const DECIMAL_NUMBER = /^-?\d+(?:\.\d+)?$/;

// Elysia turns query and path text into numbers with `+value`, and its "integer" and "numeric" string formats decide
// which text may be turned: by default anything `+value` reads, so `0x10` was 16, `1e1` 10, ` 5`, `+5` and `5.0` 5.
// Herald's formats take decimal digits only; the rest is refused like any other value outside the schema (400
// invalid_query naming the parameter). Set when this module loads, before any route is compiled; the formats are
// looked up when a value is checked, so the compiled checks use these.
FormatRegistry.Set("integer", (value) => DECIMAL_INTEGER.test(value));
FormatRegistry.Set("numeric", (value) => DECIMAL_NUMBER.test(value));

/**
 * Numeric query and path parameters. Query values arrive as text; these schemas make Elysia coerce them ONCE,
 * before the handler runs, and refuse anything that is not an integer inside [minimum, maximum] — so a handler
 * only ever sees a number in range ("1e308", "Infinity", "1.5", "-1" never reach it). Every numeric parameter
 * of every route is declared with one of these; test/http/params-convention.test.ts walks the OpenAPI document
 * and fails for a numeric-looking parameter without type and bounds.
 */
export interface IntParamOptions {
  minimum: number;
  maximum: number;
  /** What the handler uses when the parameter is absent; shown in the description, applied by the handler. */
  defaultValue?: number;
  description?: string;
  /** The only values taken, when they are fewer than the range (export windows: 7, 14, 30); listed in a refusal. */
  values?: readonly number[];
}

const describeRange = (o: IntParamOptions) =>
  `${o.description ? `${o.description}; ` : ""}integer ${o.minimum}–${o.maximum}${o.defaultValue !== undefined ? `, default ${o.defaultValue}` : ""}`;

/** An optional integer query parameter with bounds. */
export const intQuery = (o: IntParamOptions) =>
  t.Optional(t.Integer({ minimum: o.minimum, maximum: o.maximum, description: describeRange(o), ...(o.values ? { enum: [...o.values] } : {}) }));

/** A required integer path parameter with bounds (row ids: 1 … 2^53-1). */
export const intPath = (o: IntParamOptions = { minimum: 1, maximum: Number.MAX_SAFE_INTEGER }) =>
  t.Integer({ minimum: o.minimum, maximum: o.maximum, description: describeRange(o) });

interface NumericSpec {
  integer: boolean;
  minimum?: number;
  maximum?: number;
  values?: number[];
}

/** The numeric reading of a parameter schema (Elysia's coercing unions included), or null if it is not numeric. */
export function numericSpecOf(schema: TSchema | undefined): NumericSpec | null {
  if (!schema) return null;
  const s = schema as { type?: string; anyOf?: TSchema[]; minimum?: number; maximum?: number; multipleOf?: number; enum?: number[] };
  const branch = s.type === "integer" || s.type === "number" ? s : (s.anyOf?.find((b) => b.type === "integer" || b.type === "number") as typeof s | undefined);
  if (!branch) return null;
  return {
    integer: branch.type === "integer" || branch.multipleOf === 1 || s.multipleOf === 1,
    minimum: branch.minimum ?? s.minimum,
    maximum: branch.maximum ?? s.maximum,
    values: branch.enum ?? s.enum,
  };
}

/** Quote untrusted text for a message: short, escaped. */
const quote = (raw: string) => JSON.stringify(raw.length > 40 ? `${raw.slice(0, 40)}…` : raw);

function numericProblem(spec: NumericSpec, raw: string): string | null {
  const n = (spec.integer ? DECIMAL_INTEGER : DECIMAL_NUMBER).test(raw) ? Number(raw) : NaN;
  const ok =
    Number.isFinite(n) &&
    (!spec.integer || Number.isInteger(n)) &&
    (spec.minimum === undefined || n >= spec.minimum) &&
    (spec.maximum === undefined || n <= spec.maximum);
  if (spec.values) return ok && spec.values.includes(n) ? null : `must be one of: ${spec.values.join(", ")}; got ${quote(raw)}`;
  if (ok) return null;
  return `must be ${kindInRange(spec.integer ? "an integer" : "a number", spec.minimum, spec.maximum)}; got ${quote(raw)}`;
}

function enumProblem(schema: TSchema, raw: string): string | null {
  const s = schema as { enum?: unknown[]; anyOf?: Array<{ const?: unknown }> };
  const values = s.enum ?? (s.anyOf?.every((b) => b.const !== undefined) ? s.anyOf.map((b) => b.const) : null);
  if (!values || values.includes(raw)) return null;
  return `must be one of: ${values.map(String).join(", ")}; got ${quote(raw)}`;
}

function propertiesOf(schema: TSchema | null): Record<string, TSchema> {
  return ((schema as { properties?: Record<string, TSchema> } | null)?.properties ?? {}) as Record<string, TSchema>;
}

/**
 * Names every query and path parameter that is outside its schema, with the allowed range or values. Used when
 * Elysia refuses a parameter: its own error names the failing sub-schema, not the parameter.
 */
export function describeParamProblems(schemas: RouteSchemas, query: URLSearchParams, params: Record<string, string | undefined>): ProblemDetail[] {
  const out: ProblemDetail[] = [];
  const parts: Array<["query" | "path", TSchema | null, (name: string) => string | null]> = [
    // A valid path parameter may already be coerced (an intPath is a number by the time a query fails): read as text.
    ["path", schemas.params, (name) => (params[name] === undefined || params[name] === null ? null : String(params[name]))],
    ["query", schemas.query, (name) => query.get(name)],
  ];
  for (const [part, schema, read] of parts) {
    const required = new Set((schema as { required?: string[] } | null)?.required ?? []);
    for (const [name, prop] of Object.entries(propertiesOf(schema))) {
      const raw = read(name);
      if (raw === null) {
        if (required.has(name)) out.push({ field: `${part}.${name}`, problem: "is required" });
        continue;
      }
      const spec = numericSpecOf(prop);
      const problem = spec ? numericProblem(spec, raw) : (enumProblem(prop, raw) ?? lengthProblem(prop, raw));
      if (problem) out.push({ field: `${part}.${name}`, problem });
    }
  }
  return out;
}

function lengthProblem(schema: TSchema, raw: string): string | null {
  const s = schema as { maxLength?: number; minLength?: number };
  if (s.maxLength !== undefined && raw.length > s.maxLength) return tooLong(s.maxLength);
  if (s.minLength !== undefined && raw.length < s.minLength) return tooShort(s.minLength);
  return null;
}
