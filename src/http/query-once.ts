// A scalar query parameter is given once. Elysia reads `limit=2&limit=3` as 3 and says nothing, so a client that
// builds its query by appending (or a proxy that adds a parameter again) never learns that one of its values was
// dropped; and a refusal of the last value was described from the first one. Herald refuses the repetition
// instead, naming the parameter (400 invalid_query). Parameters declared as lists (`t.Array`, "repeated or
// comma-separated") may repeat.
import type { TSchema } from "elysia";
import { type AppError, queryProblem } from "./errors/errors";

/** The properties of a query schema that may be given more than once: its list parameters. */
export function repeatableKeysOf(query: TSchema | null): ReadonlySet<string> {
  const properties = (query as { properties?: Record<string, TSchema> } | null)?.properties ?? {};
  const keys = new Set<string>();
  for (const [name, schema] of Object.entries(properties)) {
    const s = schema as { type?: string; anyOf?: Array<{ type?: string }> };
    if (s.type === "array" || s.anyOf?.some((b) => b.type === "array")) keys.add(name);
  }
  return keys;
}

/** Whether a query schema has a parameter that is not a list (one that may be given only once). */
export function hasScalarParameter(query: TSchema | null): boolean {
  const properties = Object.keys((query as { properties?: object } | null)?.properties ?? {});
  const repeatable = repeatableKeysOf(query);
  return properties.some((name) => !repeatable.has(name));
}

/** A parameter's name as Elysia reads it: `+` is a space, then percent-decoding (the text as is if that fails). */
function keyName(raw: string): string {
  const spaced = raw.includes("+") ? raw.replaceAll("+", " ") : raw;
  if (!spaced.includes("%")) return spaced;
  try {
    return decodeURIComponent(spaced);
  } catch {
    return spaced;
  }
}

/** The first parameter of `query` (the text after `?`) given more than once that is not in `repeatable`, or null. */
function repeatedScalarKey(query: string, repeatable: ReadonlySet<string>): string | null {
  const seen = new Set<string>();
  for (const pair of query.split("&")) {
    if (pair === "") continue;
    const eq = pair.indexOf("=");
    const name = keyName(eq === -1 ? pair : pair.slice(0, eq));
    if (name === "" || repeatable.has(name)) continue;
    if (seen.has(name)) return name;
    seen.add(name);
  }
  return null;
}

/** Whether a URL or request target has two query parameters or more (a "&" after its "?"): only then can one repeat. */
export function hasSeveralParameters(urlOrTarget: string): boolean {
  const qi = urlOrTarget.indexOf("?");
  return qi !== -1 && urlOrTarget.indexOf("&", qi) !== -1;
}

/** The repeated scalar parameter of a URL or request target, or null; it reads nothing more when no "&" follows its "?". */
export function repeatedScalarIn(urlOrTarget: string, repeatable: ReadonlySet<string>): string | null {
  if (!hasSeveralParameters(urlOrTarget)) return null;
  return repeatedScalarKey(urlOrTarget.slice(urlOrTarget.indexOf("?") + 1), repeatable);
}

/** The refusal of a repeated parameter (its name cut to 40 characters: it is the client's text). */
export const repeatedQueryKey = (name: string): AppError =>
  queryProblem(name.length > 40 ? `${name.slice(0, 40)}…` : name, "is given more than once; give it once");
