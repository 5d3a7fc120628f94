// Malformed variants of one valid request (test/fuzz): every query parameter, path parameter and body field
// gets the fixed catalog of bad values, the body as a whole gets the bad shapes and content types, and
// fast-check adds FUZZ_RUNS random variants per operation from a fixed, reported seed.
import fc from "fast-check";
import type { FuzzOperation, FuzzRequest, JsonSchema } from "./fuzz-target";

const encoder = new TextEncoder();

/** Random variants per operation on top of the fixed catalog; FUZZ_RUNS=<n> for a longer run. */
export const FUZZ_RUNS = positiveInt(process.env.FUZZ_RUNS, 6);
/** fast-check seed; every random variant's label carries it and its index. FUZZ_SEED=<n> to vary it. */
export const FUZZ_SEED = positiveInt(process.env.FUZZ_SEED, 20260101);

/**
 * A deeply nested body (`[`×100,000, `{"a":`×20,000) currently costs seconds per request (a 500 from the validation
 * error's JSON.stringify in Elysia's validation path), so by default only these routes get it. Once the body parser limits
 * nesting, set DEEP_NESTING_EVERY_BODY_ROUTE = true to send it to every route that takes a body (FUZZ_DEEP_NESTING=all
 * does the same for one run).
 */
export const DEEP_NESTING_EVERY_BODY_ROUTE = false || process.env.FUZZ_DEEP_NESTING === "all";
export const DEEP_NESTING_ROUTES: ReadonlySet<string> = new Set([
  "POST /api/salutes/credit", // a signed partner route (the body is read before the signature is checked)
  "POST /api/canary/echo", // a public route
]);

function positiveInt(raw: string | undefined, fallback: number): number {
  if (raw === undefined || raw === "") return fallback;
  const n = Number(raw);
  if (!Number.isSafeInteger(n) || n < 0) throw new Error(`expected a non-negative integer, got ${JSON.stringify(raw)}`);
  return n;
}

// ---------------------------------------------------------------------------------------------------------
// Value catalogs

const HUGE_STRING = "a".repeat(100 * 1024);
// Under the 8,192-character request-target limit, so a long value still reaches the route's own checks.
const LONG_STRING = "b".repeat(7_000);
const QUERY_PAD = "x".repeat(20 * 1024);

/** Percent-encodes the UTF-8 bytes of `s` (lone surrogates become U+FFFD, as any client would send them). */
export function pct(s: string): string {
  let out = "";
  for (const b of encoder.encode(s)) {
    const c = String.fromCharCode(b);
    out += /[A-Za-z0-9\-_.~]/.test(c) ? c : `%${b.toString(16).toUpperCase().padStart(2, "0")}`;
  }
  return out;
}

/** Bad values for a query or path parameter: [label, value as it goes on the wire]. */
export const PARAM_VALUES: ReadonlyArray<readonly [string, string]> = [
  ...["1e308", "Infinity", "-1", "0", "1.5", "99999999999999999999999", "NaN", ""].map((v) => [JSON.stringify(v), pct(v)] as const),
  ["7 KB string", LONG_STRING],
  ["100 KB string", HUGE_STRING],
  ["control characters", "%00%01%09%0A%0D%1B%7F"],
  ["invalid UTF-8", "%FF%FE%C3%28%ED%A0%80"],
];

/** Bad values for a body field: [label, raw JSON text put where the field's value goes]. */
export const BODY_VALUES: ReadonlyArray<readonly [string, string]> = [
  ["1e308", "1e308"],
  ["1e309 (parses to Infinity)", "1e309"],
  ["-1", "-1"],
  ["0", "0"],
  ["1.5", "1.5"],
  ["99999999999999999999999", "99999999999999999999999"],
  ['"NaN"', '"NaN"'],
  ['"Infinity"', '"Infinity"'],
  ['""', '""'],
  ["100 KB string", JSON.stringify(HUGE_STRING)],
  ["escaped control characters", '"\\u0000\\u0001\\u001f\\u007f\\u2028"'],
  ["lone surrogate", '"\\ud800"'],
  ["null", "null"],
  ["true", "true"],
  ["[]", "[]"],
  ["{}", "{}"],
  // An object whose toString/valueOf are not functions: code that builds a message with `${value}` throws.
  ['{"toString":1,"valueOf":1}', '{"toString":1,"valueOf":1}'],
  ['{"__proto__":{"polluted":1}}', '{"__proto__":{"polluted":1}}'],
];

// ---------------------------------------------------------------------------------------------------------
// Valid starting points: a plausible value for every parameter and a valid body, from per-route knowledge
// where the suite has it and from the schema otherwise (so a new route is fuzzed without touching the suite).

/** A value that satisfies `schema` as far as a generic sampler can tell (the first branch of a union). */
export function sampleFromSchema(schema: JsonSchema | undefined, depth = 0): unknown {
  if (!schema || depth > 6) return "fuzz";
  if ("const" in schema) return schema.const;
  if (Array.isArray(schema.enum) && schema.enum.length) return schema.enum[0];
  if (schema.default !== undefined && typeof schema.default !== "object" && !schema.anyOf) return schema.default;
  // A create/update body (src/http/openapi/contract.ts createOrUpdate), or a body with a rule across its fields (bodyRule):
  // the object with the first shape's required fields and constraints.
  const shapes = schema.properties ? (schema.oneOf ?? schema.anyOf) : undefined;
  if (Array.isArray(shapes) && shapes.length) {
    const { oneOf: _o, anyOf: _a, ...object } = schema;
    const first = shapes[0];
    return sampleFromSchema(
      {
        ...object,
        properties: { ...object.properties, ...first.properties },
        required: [...new Set([...(schema.required ?? []), ...(first.required ?? [])])],
      },
      depth + 1,
    );
  }
  const union = schema.anyOf ?? schema.oneOf;
  if (Array.isArray(union) && union.length) {
    const pick = union.find((s: JsonSchema) => s.type !== "null" && s.format !== "numeric" && s.format !== "integer") ?? union[0];
    return sampleFromSchema({ minimum: schema.minimum, maximum: schema.maximum, ...pick }, depth + 1);
  }
  const type = Array.isArray(schema.type) ? schema.type.find((t: string) => t !== "null") : schema.type;
  switch (type) {
    case "object": {
      const out: Record<string, unknown> = {};
      for (const name of schema.required ?? []) out[name] = sampleFromSchema(schema.properties?.[name], depth + 1);
      return out;
    }
    case "array":
      return Array.from({ length: Math.max(1, schema.minItems ?? 0) }, () => sampleFromSchema(schema.items, depth + 1));
    case "integer":
    case "number":
      return typeof schema.minimum === "number" ? Math.max(schema.minimum, Math.min(1, schema.maximum ?? 1)) : 1;
    case "boolean":
      return true;
    case "null":
      return null;
    default: {
      if (schema.format === "date-time") return "2026-01-01T01:00:00.000Z";
      if (schema.format === "numeric" || schema.format === "integer") return String(schema.minimum ?? 1);
      const min = schema.minLength ?? 1;
      return "fuzz".padEnd(Math.min(Math.max(min, 4), schema.maxLength ?? 64), "z");
    }
  }
}

/** Field paths of a body schema, objects and arrays followed to a few levels: [["recipient","email"], ["items",0,"track_url"]]. */
export function bodyFields(schema: JsonSchema | null, depth = 0, prefix: Array<string | number> = []): Array<Array<string | number>> {
  if (!schema || depth > 3) return [];
  const out: Array<Array<string | number>> = [];
  const props: Record<string, JsonSchema> = schema.properties ?? {};
  for (const [name, sub] of Object.entries(props)) {
    const path = [...prefix, name];
    out.push(path);
    const inner = sub.anyOf?.find((s: JsonSchema) => s.type === "object" || s.type === "array") ?? sub;
    if (inner.type === "object") out.push(...bodyFields(inner, depth + 1, path));
    if (inner.type === "array" && inner.items?.type === "object") out.push(...bodyFields(inner.items, depth + 1, [...path, 0]));
  }
  return out.slice(0, 40);
}

/** The schema at a field path of `bodyFields`, following the object or array branch of a union as it does. */
export function schemaAt(schema: JsonSchema | null, path: Array<string | number>): JsonSchema | null {
  let node: JsonSchema | null = schema;
  for (const key of path) {
    if (!node) return null;
    const inner: JsonSchema = node.anyOf?.find((s: JsonSchema) => s.type === "object" || s.type === "array") ?? node;
    node = typeof key === "number" ? (inner.items ?? null) : (inner.properties?.[key] ?? null);
  }
  return node;
}

/**
 * Whether a body field takes numbers only (integer or number, maybe nullable): then the same number written
 * as text must be refused, since a JSON number field takes JSON numbers (docs/http-conventions.md). A field
 * whose schema also takes strings (a decimal amount as text) is not one.
 */
export function isNumberField(schema: JsonSchema | null): boolean {
  if (!schema) return false;
  const types: unknown[] = schema.anyOf
    ? schema.anyOf.flatMap((s: JsonSchema) => (Array.isArray(s.type) ? s.type : [s.type]))
    : Array.isArray(schema.type)
      ? schema.type
      : [schema.type];
  return types.some((t) => t === "integer" || t === "number") && types.every((t) => t === "integer" || t === "number" || t === "null");
}

/** A valid number for a number field: the baseline's own value when it has one, else one sampled from the schema. */
function numberFor(schema: JsonSchema, current: unknown): number {
  if (typeof current === "number") return current;
  const sampled = sampleFromSchema(schema);
  return typeof sampled === "number" ? sampled : 1;
}

function valueAt(root: unknown, path: Array<string | number>): unknown {
  let node: any = root;
  for (const key of path) node = node === null || typeof node !== "object" ? undefined : node[key];
  return node;
}

const SENTINEL = "__herald_fuzz_sentinel__";

function setAt(root: unknown, path: Array<string | number>, value: unknown): unknown {
  const copy = structuredClone(root ?? {});
  let node: any = copy;
  for (let i = 0; i < path.length - 1; i++) {
    const key = path[i]!;
    if (node[key] === null || typeof node[key] !== "object") node[key] = typeof path[i + 1] === "number" ? [] : {};
    node = node[key];
  }
  node[path[path.length - 1]!] = value;
  return copy;
}

function deleteAt(root: unknown, path: Array<string | number>): unknown {
  const copy: any = structuredClone(root);
  let node = copy;
  for (let i = 0; i < path.length - 1; i++) node = node?.[path[i]!];
  if (node && typeof node === "object") delete node[path[path.length - 1]!];
  return copy;
}

/** `base` as JSON text with the value at `path` replaced by a raw JSON token (which may be invalid JSON). */
export function bodyWith(base: unknown, path: Array<string | number>, rawToken: string): string {
  return JSON.stringify(setAt(base, path, SENTINEL)).replace(`"${SENTINEL}"`, () => rawToken);
}

const fieldName = (path: Array<string | number>) =>
  path
    .map((p) => (typeof p === "number" ? `[${p}]` : p))
    .join(".")
    .replace(/\.\[/g, "[");

// ---------------------------------------------------------------------------------------------------------
// The variants

export interface Baseline {
  pathParams: Record<string, string>;
  /** Valid query parameters, name → wire value (percent-encoded). */
  query: Record<string, string>;
  /** The valid body (undefined for operations without one). */
  body: unknown;
}

export const queryString = (q: Record<string, string>) =>
  Object.entries(q)
    .map(([k, v]) => `${pct(k)}=${v}`)
    .join("&");

const bytes = (s: string) => encoder.encode(s);
const concat = (...parts: Uint8Array[]) => {
  const out = new Uint8Array(parts.reduce((n, p) => n + p.length, 0));
  let at = 0;
  for (const p of parts) {
    out.set(p, at);
    at += p.length;
  }
  return out;
};

/** `{"field": [[[…]]], …rest}` with `depth` brackets. */
const nestedIn = (field: string, depth: number, rest: string) =>
  bytes(`{${JSON.stringify(field)}:${"[".repeat(depth)}${"]".repeat(depth)}${rest ? `,${rest}` : ""}}`);

/** The deterministic catalog for one operation, the valid request first. */
export function catalogVariants(op: FuzzOperation, base: Baseline): FuzzRequest[] {
  const hasBody = op.method !== "GET" && op.method !== "HEAD";
  const baseBody = hasBody && base.body !== undefined ? bytes(JSON.stringify(base.body)) : undefined;
  const req = (variant: string, over: Partial<FuzzRequest>): FuzzRequest => ({
    variant,
    pathParams: base.pathParams,
    query: queryString(base.query),
    body: baseBody,
    ...over,
  });
  const out: FuzzRequest[] = [req("valid request", {})];

  // Query parameters: each bad value in turn, the others kept valid.
  for (const p of op.parameters.filter((p) => p.in === "query")) {
    for (const [label, value] of PARAM_VALUES) out.push(req(`query.${p.name}=${label}`, { query: queryString({ ...base.query, [p.name]: value }) }));
    const rest = queryString(Object.fromEntries(Object.entries(base.query).filter(([k]) => k !== p.name)));
    const join = (extra: string) => (rest ? `${rest}&${extra}` : extra);
    out.push(req(`query.${p.name} given twice`, { query: join(`${pct(p.name)}=1&${pct(p.name)}=-1`) }));
    out.push(req(`query.${p.name} without "="`, { query: join(pct(p.name)) }));
  }
  out.push(req("unknown query parameter", { query: queryString({ ...base.query, herald_fuzz_unknown: "1" }) }));
  out.push(
    req("query parameters __proto__ and constructor", {
      query: [queryString(base.query), "__proto__=1&constructor=1&__proto__%5Bpolluted%5D=1"].filter(Boolean).join("&"),
    }),
  );
  out.push(req("20 KB query string", { query: queryString({ ...base.query, pad: QUERY_PAD }) }));

  // Path parameters.
  for (const p of op.parameters.filter((p) => p.in === "path")) {
    for (const [label, value] of [
      ...PARAM_VALUES.filter(([l]) => l !== '""'),
      ["encoded slash and dots", "..%2F..%2Fadmin"] as const,
      ["space", "%20"] as const,
    ]) {
      out.push(req(`path.${p.name}=${label}`, { pathParams: { ...base.pathParams, [p.name]: value } }));
    }
  }
  if (!hasBody) return out;

  // Body fields: each bad value in turn; each required field missing.
  const fields = bodyFields(op.bodySchema);
  for (const path of fields) {
    for (const [label, token] of BODY_VALUES) out.push(req(`body.${fieldName(path)}=${label}`, { body: bytes(bodyWith(base.body ?? {}, path, token)) }));
    // A number field given a valid number as text ("2", and the hex spelling of it): refused, never converted.
    const schema = schemaAt(op.bodySchema, path);
    if (!schema || !isNumberField(schema)) continue;
    const n = numberFor(schema, valueAt(base.body, path));
    const texts = Number.isSafeInteger(n) && n >= 0 ? [String(n), `0x${n.toString(16)}`] : [String(n)];
    for (const text of texts) {
      const token = JSON.stringify(text);
      out.push(req(`body.${fieldName(path)}=${token} (number as text)`, { body: bytes(bodyWith(base.body ?? {}, path, token)), mustRefuse: true }));
    }
  }
  const required: string[] = op.bodySchema?.required ?? [];
  for (const name of required) out.push(req(`body.${name} missing`, { body: bytes(JSON.stringify(deleteAt(base.body ?? {}, [name]))) }));

  // The body as a whole.
  const object = base.body !== null && typeof base.body === "object" && !Array.isArray(base.body) ? (base.body as Record<string, unknown>) : {};
  const json = JSON.stringify(object);
  const first = Object.keys(object)[0] ?? "a";
  const firstValue = JSON.stringify(object[first] ?? 1);
  // The other fields, without the first, so the variant's value for the first field is the only (or the last) one.
  const inner = JSON.stringify(Object.fromEntries(Object.entries(object).filter(([k]) => k !== first))).slice(1, -1);
  const shapes: Array<[string, Uint8Array]> = [
    ["body []", bytes("[]")],
    ["body 123", bytes("123")],
    ["body true", bytes("true")],
    ["body null", bytes("null")],
    ['body "text"', bytes('"text"')],
    ["empty body", new Uint8Array(0)],
    ["truncated JSON", bytes(json.slice(0, Math.max(1, json.length - 1)))],
    ['invalid JSON {"a":}', bytes('{"a":}')],
    ["bare NaN", bytes("NaN")],
    ["duplicate key (valid, then 123)", bytes(`{${JSON.stringify(first)}:${firstValue},${JSON.stringify(first)}:123${inner ? `,${inner}` : ""}}`)],
    ["duplicate key (123, then valid)", bytes(`{${JSON.stringify(first)}:123${inner ? `,${inner}` : ""},${JSON.stringify(first)}:${firstValue}}`)],
    ["unknown key", bytes(JSON.stringify({ ...object, herald_fuzz_unknown: 1 }))],
    [
      "__proto__ and constructor keys",
      bytes(`{"__proto__":{"polluted":1},"constructor":{"prototype":{"polluted":1}}${json.length > 2 ? `,${json.slice(1, -1)}` : ""}}`),
    ],
    ["UTF-8 BOM before JSON", concat(new Uint8Array([0xef, 0xbb, 0xbf]), bytes(json))],
    [
      "invalid UTF-8 in a string",
      concat(bytes(`{${JSON.stringify(first)}:"`), new Uint8Array([0xff, 0xfe, 0xc3, 0x28]), bytes(`"${inner ? `,${inner}` : ""}}`)),
    ],
    ["raw control characters in a string", bytes(`{${JSON.stringify(first)}:"\u0000\u0001\u001f"${inner ? `,${inner}` : ""}}`)],
    ["NUL byte after JSON", concat(bytes(json), new Uint8Array([0]))],
    ["nesting depth 1,000", bytes(`${"[".repeat(1000)}${"]".repeat(1000)}`)],
    ["2 MiB body (over MAX_BODY_BYTES)", bytes(JSON.stringify({ ...object, pad: "p".repeat(2 * 1024 * 1024) }))],
    // Nesting inside a field, deep enough to show the problem (a 500, or about a second on union-typed fields
    // today) and shallow enough to cost every body route little; the 100,000-deep kinds follow below.
    [`nesting [×10,000 in body.${first}`, nestedIn(first, 10_000, inner)],
  ];
  if (DEEP_NESTING_EVERY_BODY_ROUTE || DEEP_NESTING_ROUTES.has(op.id)) {
    shapes.push(
      ["nesting [×100,000", bytes(`${"[".repeat(100_000)}${"]".repeat(100_000)}`)],
      ['nesting {"a":×20,000', bytes(`${'{"a":'.repeat(20_000)}1${"}".repeat(20_000)}`)],
      [`nesting [×100,000 in body.${first}`, nestedIn(first, 100_000, inner)],
    );
  }
  for (const [label, body] of shapes) out.push(req(label, { body }));

  // Content types, with the valid body.
  const validBody = baseBody ?? bytes("{}");
  const types: Array<[string, string | null]> = [
    ["no Content-Type", null],
    ["Content-Type text/plain", "text/plain"],
    ["Content-Type application/json; charset=latin1", "application/json; charset=latin1"],
    ["Content-Type application/x-www-form-urlencoded", "application/x-www-form-urlencoded"],
    ["Content-Type multipart/form-data", "multipart/form-data; boundary=herald"],
    ["Content-Type application/xml", "application/xml"],
    ["Content-Type APPLICATION/JSON", "APPLICATION/JSON"],
    ["Content-Type garbage", ";;;="],
  ];
  for (const [label, contentType] of types) out.push(req(label, { body: validBody, contentType }));
  return out;
}

type Slot = { kind: "query"; name: string } | { kind: "path"; name: string } | { kind: "body"; path: Array<string | number> } | { kind: "raw" };

const numberText = fc.oneof(
  fc.constantFrom("1e308", "-1e308", "Infinity", "-Infinity", "NaN", "-0", "1e-7", "0x1F", "+1", "1_000", "9007199254740993", "00012", "1.0", " 1", "1 "),
  fc.double().map(String),
  fc.bigInt().map(String),
  fc.integer().map(String),
);
const paramArb = fc.oneof(numberText, fc.string({ unit: "binary", maxLength: 40 }), fc.string({ unit: "binary-ascii", maxLength: 40 }));
const fieldArb = fc.oneof(
  fc.jsonValue({ maxDepth: 3 }).map((v) => JSON.stringify(v)),
  numberText,
  fc.string({ unit: "binary", maxLength: 40 }).map((s) => JSON.stringify(s)),
);
const rawBodyArb = fc.oneof(
  fc.jsonValue({ maxDepth: 4 }).map((v) => bytes(JSON.stringify(v))),
  fc.string({ unit: "binary-ascii", maxLength: 200 }).map(bytes),
  fc.uint8Array({ maxLength: 128 }),
);

/** FNV-1a: the per-operation seed depends on the operation, not on its position in the document. */
function hash32(text: string): number {
  let h = 0x811c9dc5;
  for (let i = 0; i < text.length; i++) h = Math.imul(h ^ text.charCodeAt(i), 0x01000193);
  return h >>> 0;
}

/**
 * FUZZ_RUNS random variants: a random slot of the request, a random bad value, from a seed fixed per operation
 * (FUZZ_SEED mixed with the operation id), so a route added to the document does not change the others' variants.
 */
export function randomVariants(op: FuzzOperation, base: Baseline): FuzzRequest[] {
  if (FUZZ_RUNS === 0) return [];
  const hasBody = op.method !== "GET" && op.method !== "HEAD";
  const slots: Slot[] = [
    ...op.parameters.filter((p) => p.in === "query" || p.in === "path").map((p) => ({ kind: p.in as "query" | "path", name: p.name })),
    ...(hasBody ? [...bodyFields(op.bodySchema).map((path) => ({ kind: "body" as const, path })), { kind: "raw" as const }] : []),
  ];
  if (slots.length === 0) slots.push({ kind: "query", name: "herald_fuzz_unknown" });
  const seed = (FUZZ_SEED ^ hash32(op.id)) | 0;
  type Pick = { slot: Slot; value: string; body: Uint8Array | undefined };
  const arb = fc.integer({ min: 0, max: slots.length - 1 }).chain((i): fc.Arbitrary<Pick> => {
    const slot = slots[i]!;
    if (slot.kind === "raw") return rawBodyArb.map((body): Pick => ({ slot, body, value: "" }));
    return (slot.kind === "body" ? fieldArb : paramArb).map((value): Pick => ({ slot, value, body: undefined }));
  });
  const baseBody = hasBody && base.body !== undefined ? bytes(JSON.stringify(base.body)) : undefined;
  return fc.sample(arb, { seed, numRuns: FUZZ_RUNS }).map(({ slot, value, body }, i) => {
    const tag = `fast-check seed=${seed} #${i}`;
    const r: FuzzRequest = { variant: "", pathParams: base.pathParams, query: queryString(base.query), body: baseBody };
    switch (slot.kind) {
      case "query":
        r.query = queryString({ ...base.query, [slot.name]: pct(value) });
        r.variant = `query.${slot.name}=${JSON.stringify(value).slice(0, 60)} (${tag})`;
        break;
      case "path":
        // An empty segment would change the route, not the parameter.
        r.pathParams = { ...base.pathParams, [slot.name]: pct(value) || "%20" };
        r.variant = `path.${slot.name}=${JSON.stringify(value).slice(0, 60)} (${tag})`;
        break;
      case "body":
        r.body = bytes(bodyWith(base.body ?? {}, slot.path, value));
        r.variant = `body.${fieldName(slot.path)}=${value.slice(0, 60)} (${tag})`;
        break;
      case "raw":
        r.body = body;
        r.variant = `raw body ${JSON.stringify(new TextDecoder().decode(body!.slice(0, 40)))} (${tag})`;
        break;
    }
    return r;
  });
}
