import type { ProblemDetail } from "./errors";

interface ValueErrorLike {
  path: string;
  message: string;
  summary?: string;
  value?: unknown;
  schema?: {
    anyOf?: Array<{ const?: unknown; type?: string; pattern?: string; description?: string }>;
    type?: string;
    description?: string;
    minimum?: number;
    maximum?: number;
    maxLength?: number;
    minLength?: number;
    pattern?: string;
  };
}

const ARTICLE_AN = new Set(["integer", "object", "array"]);

/** A length bound as a person reads it: "must not be empty", "must be at most 1 character", "… at least 3 characters". */
export const tooLong = (max: number) => `must be at most ${max} character${max === 1 ? "" : "s"}`;
export const tooShort = (min: number) => (min === 1 ? "must not be empty" : `must be at least ${min} characters`);
/** "an integer from 1 to 200", "a number ≥ 0": a numeric kind and its bounds, as refusals word them. */
export const kindInRange = (kind: string, minimum?: number, maximum?: number) =>
  minimum !== undefined && maximum !== undefined
    ? `${kind} from ${minimum} to ${maximum}`
    : minimum !== undefined
      ? `${kind} ≥ ${minimum}`
      : maximum !== undefined
        ? `${kind} ≤ ${maximum}`
        : kind;
/** "a string", "an integer", "null", or a literal's JSON: one branch of a union, in words. */
const branchInWords = (b: { const?: unknown; type?: string }): string | null =>
  b.const !== undefined ? JSON.stringify(b.const) : b.type === "null" ? "null" : b.type ? `${ARTICLE_AN.has(b.type) ? "an" : "a"} ${b.type}` : null;

/** Which part of the request a validation error came from, as Elysia reports it. */
export type RequestPart = "body" | "query" | "params" | "headers" | "cookie" | "response" | "property";

/**
 * Turns typebox errors into `[{ field, problem }]` a person can act on: "amount: must be a number", not
 * "Expected union value". One entry per field, the first problem found.
 */
export function describeValidationErrors(part: RequestPart, errors: ValueErrorLike[]): ProblemDetail[] {
  const seen = new Set<string>();
  const out: ProblemDetail[] = [];
  for (const e of errors) {
    const path = e.path.replace(/^\//, "").replace(/\//g, ".");
    // Path parameters are `path.<name>` wherever they are named (Elysia calls the part "params").
    const prefix = part === "params" ? "path" : part;
    const field = part === "body" ? path || "body" : path ? `${prefix}.${path}` : prefix;
    if (seen.has(field)) continue;
    seen.add(field);
    // `?=5`: a parameter whose name is empty (its path is "/", read as the part itself).
    const unnamed = part !== "body" && !path && e.path === "/" && /^Unexpected property/.test(e.message);
    out.push({
      field,
      problem: unnamed ? 'has a parameter with no name (nothing before its "=")' : part === "body" ? (numberAsTextProblem(e) ?? problemOf(e)) : problemOf(e),
    });
  }
  return out;
}

/** A JSON body's number sent as text (`"2"`): said plainly, since the text looks like the number it names. */
function numberAsTextProblem(e: ValueErrorLike): string | null {
  if (typeof e.value !== "string") return null;
  const branches = e.message === "Expected union value" ? (e.schema?.anyOf ?? []) : [];
  const nullable = branches.length > 1 && branches.every((b) => b.type === "integer" || b.type === "number" || b.type === "null");
  const type = nullable ? branches.find((b) => b.type !== "null")?.type : /^Expected (number|integer)$/.exec(e.message)?.[1];
  if (type !== "integer" && type !== "number") return null;
  return `must be ${type === "integer" ? "an integer" : "a number"}${nullable ? " or null" : ""} written as a JSON number, not text`;
}

function problemOf(e: ValueErrorLike): string {
  const literals = e.schema?.anyOf?.map((s) => s.const).filter((v) => v !== undefined);
  if (literals?.length && literals.length === e.schema?.anyOf?.length) {
    return `must be one of: ${literals.map((v) => String(v)).join(", ")}`;
  }
  if (e.message === "Expected required property") return "is required";
  if (e.message === "Expected union value" && e.schema?.anyOf?.every((s) => s.type === "number" || s.type === "integer")) {
    return "must be a number";
  }
  const branches = e.schema?.anyOf ?? [];
  if (e.message === "Expected union value" && branches.length && branches.every((b) => b.description && b.type)) {
    // Each branch says what it stands for: "must be an integer (a delivery id) or a string matching ^evt_… (an event id)".
    const each = branches.map((b) => `${branchInWords(b)}${b.pattern ? ` matching ${b.pattern}` : ""} (${b.description})`);
    return `must be ${each.join(" or ")}`;
  }
  if (e.message === "Expected union value" && e.schema?.anyOf?.length) {
    // Not "must be union value": the kinds the field takes, e.g. "must be an integer", "must be a string or an integer".
    const kinds = [...new Set(e.schema.anyOf.map(branchInWords))];
    if (kinds.every((k) => k !== null)) return `must be ${kinds.slice(0, -1).join(", ")}${kinds.length > 1 ? " or " : ""}${kinds.at(-1)}`;
  }
  const s = e.schema;
  if (s?.pattern !== undefined && typeof e.value === "string" && / to match /.test(e.message)) {
    return `must match ${s.pattern}${s.description ? ` (${s.description})` : ""}`;
  }
  if (/(greater|less) (or equal|than)/.test(e.message) && (s?.minimum !== undefined || s?.maximum !== undefined)) {
    return `must be ${kindInRange(s?.type === "integer" ? "an integer" : "a number", s?.minimum, s?.maximum)}`;
  }
  if (/length/.test(e.message) && s?.maxLength !== undefined && !e.message.includes("greater")) return tooLong(s.maxLength);
  if (/length/.test(e.message) && s?.minLength !== undefined && e.message.includes("greater")) return tooShort(s.minLength);
  const type = /^Expected (string|number|integer|boolean|object|array)$/.exec(e.message)?.[1];
  if (type) return `must be ${ARTICLE_AN.has(type) ? "an" : "a"} ${type}`;
  const text = e.summary && !e.summary.startsWith("Property ") ? e.summary : e.message;
  return text.replace(/^Expected /, "must be ").replace(/^Unexpected property/, "is not a known field");
}
