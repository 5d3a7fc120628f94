/**
 * OpenAPI 3.1 → the TypeScript of src/client/api-types.ts: one `Operations` entry per signed partner operation
 * ("METHOD /path/{param}") with its input (path, query, body) and its success response, plus a named type for
 * every component schema those reference. Pure (document in, text out), so a test can regenerate the file
 * from the served document and compare it with the checked-in one.
 *
 * Only the JSON Schema that typebox and Herald's document use is translated: $ref, anyOf/oneOf/allOf, const,
 * enum, type (also as a list), properties/required, additionalProperties, patternProperties, items. Anything
 * else becomes `unknown`, which is honest rather than wrong.
 */
type Schema = Record<string, any>;
interface Operation {
  parameters?: Array<{ name: string; in: string; required?: boolean; schema?: Schema; description?: string }>;
  requestBody?: { required?: boolean; content?: Record<string, { schema?: Schema }> };
  responses?: Record<string, { content?: Record<string, { schema?: Schema }> }>;
  summary?: string;
}
export interface OpenApiLike {
  paths: Record<string, Record<string, Operation>>;
  components?: { schemas?: Record<string, Schema> };
}

const METHODS = ["get", "post", "put", "patch", "delete"];
const IDENT = /^[A-Za-z_$][A-Za-z0-9_$]*$/;

/** The operations the SDK covers: the signed partner API (live and sandbox) and the salutes routes. */
export function isPartnerPath(path: string): boolean {
  return path.startsWith("/api/partner/") || path.startsWith("/api/salutes/");
}

export function partnerOperationKeys(doc: OpenApiLike): string[] {
  const keys: string[] = [];
  for (const [path, item] of Object.entries(doc.paths)) {
    if (!isPartnerPath(path)) continue;
    for (const m of METHODS) if (item[m]) keys.push(`${m.toUpperCase()} ${path}`);
  }
  return keys.sort();
}

const typeName = (ref: string) => {
  const raw = ref.split("/").pop() ?? "Unknown";
  const name = raw.replace(/[^A-Za-z0-9_$]/g, "_");
  return /^[0-9]/.test(name) ? `_${name}` : name;
};
const key = (k: string) => (IDENT.test(k) ? k : JSON.stringify(k));
const comment = (text: unknown, pad: string) =>
  typeof text === "string" && text.trim() ? `${pad}/** ${text.trim().replace(/\*\//g, "* /").replace(/\s*\n\s*/g, " ")} */\n` : "";

class Emitter {
  readonly refs = new Set<string>();

  type(s: Schema | boolean | undefined, depth: number): string {
    if (s === undefined || s === true) return "unknown";
    if (s === false) return "never";
    if (typeof s.$ref === "string") {
      this.refs.add(s.$ref);
      return typeName(s.$ref);
    }
    if (s.const !== undefined) return JSON.stringify(s.const);
    if (Array.isArray(s.enum)) return s.enum.map((v: unknown) => JSON.stringify(v)).join(" | ") || "never";
    const union = s.anyOf ?? s.oneOf;
    if (Array.isArray(union)) return this.union(union.map((x: Schema) => this.type(x, depth)));
    if (Array.isArray(s.allOf)) return s.allOf.map((x: Schema) => this.wrap(this.type(x, depth))).join(" & ") || "unknown";
    if (Array.isArray(s.type)) return this.union(s.type.map((t: string) => this.type({ ...s, type: t }, depth)));
    switch (s.type) {
      case "string":
        return "string";
      case "integer":
      case "number":
        return "number";
      case "boolean":
        return "boolean";
      case "null":
        return "null";
      case "array":
        return `Array<${this.type(s.items, depth)}>`;
      case "object":
        return this.object(s, depth);
      default:
        return s.properties ? this.object(s, depth) : "unknown";
    }
  }

  private union(parts: string[]): string {
    const unique = [...new Set(parts)];
    if (unique.includes("unknown")) return "unknown";
    return unique.map((p) => this.wrap(p)).join(" | ") || "never";
  }

  private wrap(t: string): string {
    return /^[A-Za-z0-9_$<>"', ]+$/.test(t) || t.startsWith("{") || t.startsWith("Array<") ? t : `(${t})`;
  }

  object(s: Schema, depth: number): string {
    const props = Object.entries<Schema>(s.properties ?? {});
    const required = new Set<string>(s.required ?? []);
    const pad = "  ".repeat(depth + 1);
    const lines = props.map(([k, v]) => `${comment(v?.description, pad)}${pad}${key(k)}${required.has(k) ? "" : "?"}: ${this.type(v, depth + 1)};\n`);
    const extra = s.patternProperties ? Object.values<Schema>(s.patternProperties).map((v) => this.type(v, depth + 1)) : [];
    if (s.additionalProperties && s.additionalProperties !== false) extra.push(s.additionalProperties === true ? "unknown" : this.type(s.additionalProperties, depth + 1));
    if (props.length === 0) return extra.length ? `Record<string, ${this.union(extra)}>` : "Record<string, unknown>";
    if (extra.length) lines.push(`${pad}[key: string]: unknown;\n`);
    return `{\n${lines.join("")}${"  ".repeat(depth)}}`;
  }
}

function successSchema(op: Operation): Schema | undefined {
  const codes = Object.keys(op.responses ?? {}).filter((c) => /^2\d\d$/.test(c)).sort();
  for (const c of codes) {
    const content = op.responses![c]!.content ?? {};
    const json = content["application/json"] ?? Object.values(content)[0];
    if (json?.schema) return json.schema;
  }
  return undefined;
}

function inputType(e: Emitter, op: Operation): string {
  const parts: string[] = [];
  for (const where of ["path", "query"] as const) {
    const params = (op.parameters ?? []).filter((p) => p.in === where);
    if (params.length === 0) continue;
    const schema: Schema = {
      type: "object",
      properties: Object.fromEntries(params.map((p) => [p.name, { ...(p.schema ?? {}), description: p.description ?? p.schema?.description }])),
      required: params.filter((p) => p.required || where === "path").map((p) => p.name),
    };
    const optional = where === "query" && !params.some((p) => p.required);
    parts.push(`    ${where}${optional ? "?" : ""}: ${e.object(schema, 2)};\n`);
  }
  const body = op.requestBody?.content?.["application/json"]?.schema;
  if (body) parts.push(`    body${op.requestBody?.required ? "" : "?"}: ${e.type(body, 2)};\n`);
  return parts.length ? `{\n${parts.join("")}  }` : "{}";
}

/** The whole api-types.ts text for `doc`. */
export function generateApiTypes(doc: OpenApiLike): string {
  const e = new Emitter();
  const ops = partnerOperationKeys(doc).map((k) => {
    const [method, path] = k.split(" ") as [string, string];
    const op = doc.paths[path]![method.toLowerCase()]!;
    return `${comment(op.summary, "  ")}  ${JSON.stringify(k)}: {\n    input: ${inputType(e, op).replace(/\n/g, "\n  ")};\n    response: ${e.type(successSchema(op), 2)};\n  };\n`;
  });
  // Named component types, following references transitively (a component may name another).
  const named: Array<[string, string]> = [];
  const done = new Set<string>();
  for (let guard = 0; guard < 10_000; guard++) {
    const next = [...e.refs].find((r) => !done.has(r));
    if (next === undefined) break;
    done.add(next);
    const schema = doc.components?.schemas?.[next.split("/").pop() ?? ""];
    named.push([typeName(next), `${comment(schema?.description, "")}export type ${typeName(next)} = ${e.type(schema, 0)};\n`]);
  }
  return [
    "// Generated by `npm run sdk:generate` from Herald's OpenAPI document (GET /api/openapi.json). Do not edit:\n",
    "// test/client/api-types.test.ts fails when this file and the served document disagree.\n",
    "/* eslint-disable */\n\n",
    named
      .sort((a, b) => (a[0] < b[0] ? -1 : a[0] > b[0] ? 1 : 0))
      .map(([, text]) => text)
      .join("\n"),
    named.length ? "\n" : "",
    "/** Every signed partner operation, keyed \"METHOD /path/{param}\": its input and its success response. */\n",
    "export interface Operations {\n",
    ops.join(""),
    "}\n",
  ].join("");
}
