import { Kind, TransformKind, type TSchema } from "@sinclair/typebox";
import { mapSchema } from "./openapi/components";

/**
 * JSON bodies carry numbers as JSON numbers (docs/http-conventions.md). Elysia's `t.Integer` (and `t.Numeric`)
 * is not TypeBox's: it is a coercing union `anyOf [{type: string, format: integer|numeric}, {type: integer}]`
 * with a decode step, made for query and path values, which arrive as text. Used in a body schema it let
 * `{"quantity": "2"}`, `"0x10"` or `"1e1"` through and decoded them to numbers (16, 10). The HTTP core checks
 * every JSON body against `strictJsonNumbers(schema)` before Elysia's own validator runs, so the text branch
 * never applies to a JSON body; query and path schemas keep coercing, and form bodies (whose fields are text by
 * nature; src/http/body/form-body.ts) keep the route's schema as declared.
 */
export function strictJsonNumbers(schema: TSchema): TSchema {
  return mapSchema(schema, withoutNumericText) as TSchema;
}

type Node = Record<string | symbol, unknown>;
const isNode = (v: unknown): v is Node => !!v && typeof v === "object" && !Array.isArray(v);

/** The text branch of Elysia's coercing number types. */
const isNumericText = (s: unknown) => isNode(s) && s.type === "string" && (s.format === "integer" || s.format === "numeric");
const isNumber = (s: unknown) => isNode(s) && (s.type === "integer" || s.type === "number");

/** `anyOf [numeric text, {type: integer, …}]` → `{type: integer, …}`, keeping the outer node's modifiers (Optional). */
function withoutNumericText(node: Node): Node {
  const branches = node.anyOf;
  if (!Array.isArray(branches) || !branches.some(isNumericText) || !branches.every((b) => isNumericText(b) || isNumber(b))) return node;
  const kept = branches.filter(isNumber) as Node[];
  if (kept.length !== 1) return { ...node, anyOf: kept };
  const modifiers: Node = {};
  for (const key of Object.getOwnPropertySymbols(node)) {
    if (key !== Kind && key !== TransformKind) modifiers[key] = node[key];
  }
  return { ...kept[0], ...modifiers };
}
