import { visit, printParseErrorCode, type ParseErrorCode } from "jsonc-parser";
import { AppError } from "../errors/errors";

/**
 * The body policy every JSON route shares (docs/http-conventions.md):
 * - `Content-Type: application/json` (or a `+json` type), with no charset or `charset=utf-8`; anything else
 *   with a body is 415. A body sent without a Content-Type is 415 too: guessing is how a form post slips in.
 * - The bytes must be UTF-8 and one JSON value; at most JSON_LIMITS.maxDepth levels of arrays/objects, at most
 *   JSON_LIMITS.maxMembers keys and array items in all, no key twice in one object, no `__proto__` key.
 * Structure is checked by a scanner BEFORE JSON.parse builds anything, so a 200 KB `[[[[…` body is refused
 * after reading 33 characters, and no later step (validation, error messages) ever sees such a value.
 */
export const JSON_LIMITS = {
  maxDepth: 32,
  maxMembers: 10_000,
} as const;

export interface JsonBody {
  raw: Uint8Array;
  value: unknown;
  error: AppError | null;
}

const invalid = (problem: string) => new AppError("invalid_payload", `Request body refused: ${problem}`, { details: [{ field: "body", problem }] });

/** Stops the scanner at the first problem; carries the problem to the caller. */
class ScanStop {
  constructor(readonly problem: string) {}
}

/** null when the Content-Type is acceptable for a JSON body, else the 415 to answer. */
export function contentTypeProblem(header: string | null): AppError | null {
  if (header === null || header.trim() === "") {
    return new AppError("unsupported_media_type", "A request body needs Content-Type: application/json");
  }
  const [typePart, ...params] = header.split(";");
  const type = typePart!.trim().toLowerCase();
  if (type !== "application/json" && !(type.startsWith("application/") && type.endsWith("+json"))) {
    return new AppError("unsupported_media_type", `Content-Type ${type.slice(0, 100)} is not accepted; send application/json`);
  }
  for (const p of params) {
    const [name, value] = p.split("=").map((s) => s.trim().toLowerCase());
    if (name === "charset" && value?.replace(/"/g, "") !== "utf-8" && value?.replace(/"/g, "") !== "utf8") {
      return new AppError(
        "unsupported_media_type",
        `charset ${String(value).slice(0, 40)} is not accepted; JSON bodies are UTF-8 (send charset=utf-8 or no charset)`,
      );
    }
  }
  return null;
}

/**
 * Checks the structure of `text` against JSON_LIMITS without building any value. jsonc-parser's scanner is
 * the tokenizer (comments and trailing commas are refused, as in strict JSON); it calls back per token, so
 * the scan stops at the first problem.
 */
export function scanJson(text: string): string | null {
  let depth = 0;
  let members = 0;
  // One key set per open object; null for arrays.
  const keys: Array<Set<string> | null> = [];
  const value = () => {
    if (keys.length > 0 && keys[keys.length - 1] === null) member();
  };
  const enter = (kind: "object" | "array") => (offset: number) => {
    value();
    depth++;
    if (depth > JSON_LIMITS.maxDepth) throw new ScanStop(`nesting deeper than ${JSON_LIMITS.maxDepth} levels (at character ${offset})`);
    keys.push(kind === "object" ? new Set() : null);
  };
  const leave = () => {
    depth--;
    keys.pop();
  };
  const member = () => {
    members++;
    if (members > JSON_LIMITS.maxMembers) throw new ScanStop(`more than ${JSON_LIMITS.maxMembers} keys and array items in all`);
  };
  try {
    visit(
      text,
      {
        onObjectBegin: enter("object"),
        onArrayBegin: enter("array"),
        onObjectEnd: leave,
        onArrayEnd: leave,
        onObjectProperty: (property, offset) => {
          member();
          const seen = keys[keys.length - 1];
          if (property === "__proto__") throw new ScanStop(`the key "__proto__" is not accepted (at character ${offset})`);
          if (seen?.has(property)) throw new ScanStop(`the key ${JSON.stringify(property.slice(0, 64))} appears twice in one object (at character ${offset})`);
          seen?.add(property);
        },
        onLiteralValue: () => value(),
        onComment: (offset) => {
          throw new ScanStop(`comments are not JSON (at character ${offset})`);
        },
        onError: (error: ParseErrorCode, offset) => {
          throw new ScanStop(`must be valid JSON (${printParseErrorCode(error)} at character ${offset})`);
        },
      },
      { disallowComments: true, allowTrailingComma: false, allowEmptyContent: false },
    );
  } catch (err) {
    if (err instanceof ScanStop) return err.problem;
    throw err;
  }
  return null;
}

/** Strict UTF-8: a body with invalid bytes is refused, never silently repaired with U+FFFD. */
const utf8 = new TextDecoder("utf-8", { fatal: true, ignoreBOM: false });

/** Parses request bytes under the policy above. Never throws for bad input: the problem comes back as `error`. */
export function parseJsonBytes(raw: Uint8Array): JsonBody {
  let text: string;
  try {
    text = utf8.decode(raw);
  } catch {
    return { raw, value: undefined, error: invalid("the bytes are not valid UTF-8") };
  }
  if (text.trim() === "") return { raw, value: undefined, error: null };
  const problem = scanJson(text);
  if (problem !== null) return { raw, value: undefined, error: invalid(problem) };
  try {
    return { raw, value: JSON.parse(text), error: null };
  } catch (err) {
    // The scanner and JSON.parse agree on JSON; this is a safety net, and its message names no input.
    return { raw, value: undefined, error: invalid(`must be valid JSON (${(err as Error).name})`) };
  }
}
