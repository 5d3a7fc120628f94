// The fuzz suite is only as good as the document it is generated from (docs/design.md §9): a parameter without a
// type cannot be checked by the server before the handler runs, and a numeric one without bounds lets
// "1e308", "Infinity" or "1.5" through to code that expects a small integer. These checks walk the served
// /api/openapi.json and list every operation that falls short, all at once.
import { afterAll, beforeAll, expect, test } from "bun:test";
import { createTestApp, type TestApp } from "../support/app";
import { operationsOf } from "../support/fuzz-operations";
import type { FuzzOperation, JsonSchema } from "../support/fuzz-target";

let h: TestApp;
let operations: FuzzOperation[];

beforeAll(async () => {
  h = createTestApp();
  const res = await h.request("/api/openapi.json");
  expect(res.status).toBe(200);
  operations = operationsOf(await res.json());
});
afterAll(() => h.close());

/** Names that always carry a number in this API, whatever their schema says. */
const NUMERIC_NAMES = new Set([
  "limit",
  "offset",
  "hours",
  "days",
  "size",
  "expires_in",
  "page",
  "per_page",
  "count",
  "max",
  "min",
  "day_offset",
  "baseline_days",
  "min_baseline_points",
  "zscore_threshold",
  "min_change_count",
  "include_fields_max",
  "include_fields_bytes_limit",
  "top_errors_hours",
  "top_errors_limit",
  "preflight_day_offset",
  "index",
  "window_hours",
]);
/** Descriptions that promise a number: "1–200, default 50", "rows to skip", "integer 1–720". */
const NUMERIC_DESCRIPTION = /^\s*-?\d+\s*[–-]\s*-?\d+\b|\binteger\b|\brows to skip\b/i;

const branches = (s: JsonSchema): JsonSchema[] => [s, ...((s.anyOf ?? s.oneOf ?? []) as JsonSchema[]).flatMap(branches)];
const typesOf = (s: JsonSchema): string[] => branches(s).flatMap((b) => (Array.isArray(b.type) ? b.type : b.type ? [b.type] : []));

/** Whether a parameter carries a number, by its schema (any branch), its bounds, its name or its description. */
function looksNumeric(name: string, s: JsonSchema): boolean {
  const all = branches(s);
  if (typesOf(s).some((t) => t === "integer" || t === "number")) return true;
  if (all.some((b) => b.format === "numeric" || b.format === "integer")) return true;
  if (all.some((b) => ["minimum", "maximum", "exclusiveMinimum", "exclusiveMaximum", "multipleOf"].some((k) => k in b))) return true;
  if (NUMERIC_NAMES.has(name)) return true;
  return all.some((b) => typeof b.description === "string" && NUMERIC_DESCRIPTION.test(b.description));
}

/** A schema is typed when it, or every branch of its union, says what it holds. */
function isTyped(s: JsonSchema | undefined): boolean {
  if (!s || typeof s !== "object") return false;
  if (s.type !== undefined || "const" in s || Array.isArray(s.enum)) return true;
  const union = s.anyOf ?? s.oneOf;
  return Array.isArray(union) && union.length > 0 && union.every((b: JsonSchema) => isTyped(b));
}

function report(title: string, problems: Map<string, string[]>): string {
  const lines = [`${title}: ${problems.size} operation${problems.size === 1 ? "" : "s"}`];
  for (const [op, list] of [...problems.entries()].sort()) lines.push(`  ${op}`, ...list.map((p) => `    ${p}`));
  return lines.join("\n");
}

function collect(check: (op: FuzzOperation) => string[]): Map<string, string[]> {
  const problems = new Map<string, string[]>();
  for (const op of operations) {
    const list = check(op);
    if (list.length) problems.set(op.id, list);
  }
  return problems;
}

test("every numeric query and path parameter declares type integer|number with minimum and maximum", () => {
  const problems = collect((op) => {
    const out: string[] = [];
    for (const p of op.parameters.filter((p) => p.in === "query" || p.in === "path")) {
      const s = p.schema ?? {};
      if (!looksNumeric(p.name, s)) continue;
      const missing: string[] = [];
      if (s.type !== "integer" && s.type !== "number") missing.push(`type integer|number (has ${JSON.stringify(s.type ?? typesOf(s))})`);
      if (typeof s.minimum !== "number") missing.push("minimum");
      if (typeof s.maximum !== "number") missing.push("maximum");
      if (missing.length) out.push(`${p.in}.${p.name}: no ${missing.join(", no ")} — schema ${JSON.stringify(s).slice(0, 160)}`);
    }
    return out;
  });
  if (problems.size) throw new Error(report("numeric parameters without type and bounds", problems));
});

test("every operation has its parameters typed, and declares every parameter of its path", () => {
  const problems = collect((op) => {
    const out: string[] = [];
    for (const p of op.parameters) {
      if (!isTyped(p.schema)) out.push(`${p.in}.${p.name}: no type — schema ${JSON.stringify(p.schema ?? null).slice(0, 160)}`);
    }
    for (const m of op.path.matchAll(/\{([A-Za-z0-9_]+)\}/g)) {
      if (!op.parameters.some((p) => p.in === "path" && p.name === m[1])) out.push(`path.${m[1]}: in the path but not declared`);
    }
    if (op.bodySchema && !isTyped(op.bodySchema)) out.push(`request body: no type — schema ${JSON.stringify(op.bodySchema).slice(0, 160)}`);
    return out;
  });
  if (problems.size) throw new Error(report("operations with untyped or undeclared parameters", problems));
});

/**
 * The fuzz suite picks credentials from `security` and the path. An /admin route without AdminBearer, or a
 * partner route without the partner signature, would be fuzzed without credentials and look fine while
 * testing only the refusal — so the two must agree. Public routes under /api/partner/ are listed here.
 */
const PUBLIC_UNDER_PARTNER = new Set(["GET /api/partner/errors.json", "GET /api/partner/webhooks/event-types"]);
/** The operator sign-in form is public by nature: it is where an operator without a session goes (docs/operations.md). */
const PUBLIC_UNDER_ADMIN = new Set(["GET /admin/sign-in", "POST /admin/sign-in"]);

test("security declarations agree with the path prefixes the credentials are chosen by", () => {
  const problems = collect((op) => {
    if (op.path.startsWith("/admin/") && op.credential !== "admin" && !PUBLIC_UNDER_ADMIN.has(op.id))
      return [`under /admin/ but security is ${JSON.stringify(op.raw.security ?? null)}`];
    if ((op.path.startsWith("/api/partner/") || op.path.startsWith("/api/salutes/")) && op.credential === "public" && !PUBLIC_UNDER_PARTNER.has(op.id)) {
      return ["a partner route without the partner signature in security (add it, or list the route in PUBLIC_UNDER_PARTNER)"];
    }
    if (op.path.startsWith("/api/partner/sandbox/") && op.credential !== "sandbox") return [`a sandbox route fuzzed with ${op.credential} credentials`];
    return [];
  });
  if (problems.size) throw new Error(report("security that does not match the path", problems));
});
