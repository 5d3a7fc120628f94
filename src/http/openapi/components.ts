import { SCHEMA_NAME_KEY } from "./names";

// Post-processing of the generated document's schemas (src/http/openapi/routes.ts runs these in order):
// 1. jsonShapes, on JSON bodies and responses, says what the JSON really holds:
//    - numbers are numbers: Elysia's t.Integer/t.Numeric is a coercing union ("numeric text" or the number)
//      made for query and path text, and the generator writes both branches — which is why a client saw
//      `user.id: string | number`;
//    - a typebox t.Record (`patternProperties: {"^(.*)$": X}`) becomes `additionalProperties: X`, the form
//      generators understand (openapi-typescript writes `{ [key: string]: X }`);
//    - a nullable enum lists null among its values (the generator's folding leaves it out, refusing null).
// 2. SchemaHoister moves named schemas (src/http/openapi/names.ts) into components.schemas once and puts a
//    $ref wherever a response carries one. Request bodies stay inline (unmarked): the fuzz suite and other
//    readers of the document take `requestBody…schema` as the schema itself.

type Json = Record<string, unknown>;

/** The generated document's shape (here, a leaf module, so src/http/openapi/subset.ts can use it without a cycle). */
export interface OpenApiDocument {
  openapi: string;
  info: Record<string, unknown>;
  servers: Array<{ url: string }>;
  paths: Record<string, Record<string, unknown>>;
  components: Record<string, unknown>;
  tags?: Array<{ name: string; description?: string }>;
}
const isObject = (v: unknown): v is Json => !!v && typeof v === "object" && !Array.isArray(v);

const MAP_KEYS = ["properties", "patternProperties", "$defs", "dependentSchemas"];
const LIST_KEYS = ["allOf", "anyOf", "oneOf", "prefixItems"];
const VALUE_KEYS = ["items", "additionalProperties", "unevaluatedProperties", "contains", "not", "if", "then", "else", "propertyNames"];

/** Rebuilds a schema bottom-up: `visit` sees each node after its children were rebuilt. */
export function mapSchema(schema: unknown, visit: (node: Json) => Json): unknown {
  if (Array.isArray(schema)) return schema.map((s) => mapSchema(s, visit));
  if (!isObject(schema)) return schema;
  const out: Json = { ...schema };
  for (const key of MAP_KEYS) {
    const map = out[key];
    if (isObject(map)) out[key] = Object.fromEntries(Object.entries(map).map(([k, v]) => [k, mapSchema(v, visit)]));
  }
  for (const key of LIST_KEYS) if (Array.isArray(out[key])) out[key] = (out[key] as unknown[]).map((s) => mapSchema(s, visit));
  for (const key of VALUE_KEYS) if (isObject(out[key])) out[key] = mapSchema(out[key], visit);
  return visit(out);
}

/**
 * A response object with declared fields is closed (`additionalProperties: false`): a validator then catches a
 * field the document does not name. One that says otherwise (a map, `additionalProperties: true`) or names no
 * field at all (a free-form object) stays open.
 */
export function closedObject(node: Json): Json {
  const isObjectType = node.type === "object" || (Array.isArray(node.type) && node.type.includes("object"));
  if (!isObjectType || node.additionalProperties !== undefined || node.patternProperties !== undefined) return node;
  if (!isObject(node.properties) || Object.keys(node.properties).length === 0) return node;
  return { ...node, additionalProperties: false };
}

/** The text branch of Elysia's coercing number types: `{ type: "string", format: "integer" | "numeric" }`. */
const isNumericText = (s: unknown) => isObject(s) && s.type === "string" && (s.format === "integer" || s.format === "numeric");

/** `{anyOf: [numeric text, {type: integer, …}]}` → `{type: integer, …}`; `anyOf [X, null]` with a plain X → `type: [X, "null"]`. */
export function jsonNumbers(node: Json): Json {
  const branches = node.anyOf;
  if (!Array.isArray(branches)) return node;
  const { anyOf: _drop, ...outer } = node;
  const kept = branches.filter((b) => !isNumericText(b));
  if (kept.length === branches.length) {
    // A nullable number whose inner union was just collapsed: write it the way the generator writes other nullables.
    const [a, b] = branches as Json[];
    if (branches.length === 2 && isObject(a) && isObject(b) && b.type === "null" && typeof a.type === "string" && !a.anyOf && !a.$ref && !a[SCHEMA_NAME_KEY]) {
      return { ...outer, ...a, type: [a.type, "null"] };
    }
    return node;
  }
  if (kept.length === 1 && isObject(kept[0])) return { ...kept[0], ...outer };
  return { ...outer, anyOf: kept };
}

const ANY_KEY = "^(.*)$";

/** `patternProperties: {"^(.*)$": X}` (and nothing else) → `additionalProperties: X`. */
export function plainRecords(node: Json): Json {
  const pattern = node.patternProperties;
  if (!isObject(pattern) || Object.keys(pattern).length !== 1 || !(ANY_KEY in pattern) || node.properties || node.additionalProperties !== undefined)
    return node;
  const { patternProperties: _drop, ...rest } = node;
  return { ...rest, additionalProperties: pattern[ANY_KEY] };
}

/**
 * The generator folds `anyOf [{enum: [a, b]}, {type: null}]` into `{type: [string, null], enum: [a, b]}`, which
 * refuses null (an enum lists every allowed value); null joins the enum.
 */
export function nullableEnums(node: Json): Json {
  if (!Array.isArray(node.type) || !node.type.includes("null") || !Array.isArray(node.enum) || node.enum.includes(null)) return node;
  return { ...node, enum: [...node.enum, null] };
}

/**
 * Likewise `anyOf [{const: a}, {type: null}]` becomes `{const: a, type: [string, null]}`, and `const` refuses null:
 * it is written as the enum `[a, null]`.
 */
export function nullableConsts(node: Json): Json {
  if (node.const === undefined || !Array.isArray(node.type) || !node.type.includes("null")) return node;
  const { const: constant, ...rest } = node;
  return { ...rest, enum: [constant, null] };
}

/** The rewrites for JSON bodies and responses. */
export const jsonShapes = (node: Json): Json => nullableConsts(nullableEnums(plainRecords(jsonNumbers(node))));

const stripName = (node: Json): Json => {
  if (!(SCHEMA_NAME_KEY in node)) return node;
  const { [SCHEMA_NAME_KEY]: _name, ...rest } = node;
  return rest;
};

/** A stable text of a schema for comparing two occurrences (key order does not matter). */
function canonical(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(canonical).join(",")}]`;
  if (!isObject(value)) return JSON.stringify(value);
  return `{${Object.keys(value)
    .sort()
    .map((k) => `${JSON.stringify(k)}:${canonical(value[k])}`)
    .join(",")}}`;
}

export class SchemaHoister {
  readonly schemas: Record<string, Json> = {};
  private texts = new Map<string, string>();

  /** Replaces every named schema inside `schema` by a $ref, keeping one definition per name. */
  hoist(schema: unknown): unknown {
    return mapSchema(schema, (node) => this.refFor(node));
  }

  private refFor(node: Json): Json {
    const name = node[SCHEMA_NAME_KEY];
    if (typeof name !== "string") return node;
    let body = stripName(node);
    // The generator folds `anyOf [Named, null]` into the named object with type [object, null].
    let nullable = false;
    if (Array.isArray(body.type) && body.type.includes("null") && body.type.length === 2) {
      nullable = true;
      body = { ...body, type: body.type.find((t) => t !== "null") };
    }
    const { description, ...shape } = body;
    const text = canonical(shape);
    const known = this.texts.get(name);
    if (known === undefined) {
      this.texts.set(name, text);
      this.schemas[name] = body;
    } else if (known !== text) {
      throw new Error(`OpenAPI: schema ${name} occurs in two different shapes; give the variant its own name or spread its properties into a new object`);
    }
    const ref: Json = { $ref: `#/components/schemas/${name}` };
    const own = description !== undefined && description !== this.schemas[name]!.description ? { description } : {};
    return nullable ? { anyOf: [ref, { type: "null" }], ...own } : { ...ref, ...own };
  }
}

/** Removes the name markers from a schema that stays inline (request bodies, parameters). */
export const unmarked = (schema: unknown): unknown => mapSchema(schema, stripName);

/** Every `#/components/<kind>/<name>` a value refers to, followed through the components themselves. */
export function referencedComponents(root: unknown, components: Record<string, Record<string, unknown> | undefined>): Set<string> {
  const seen = new Set<string>();
  const walk = (v: unknown): void => {
    if (Array.isArray(v)) return v.forEach(walk);
    if (!isObject(v)) return;
    const ref = v.$ref;
    if (typeof ref === "string" && ref.startsWith("#/components/") && !seen.has(ref)) {
      seen.add(ref);
      const [kind, name] = ref.slice("#/components/".length).split("/") as [string, string];
      walk(components[kind]?.[name]);
    }
    for (const child of Object.values(v)) walk(child);
  };
  walk(root);
  return seen;
}
