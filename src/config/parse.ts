// One configuration variable's value from an environment, checked against its kind (src/config/var-spec.ts): the
// parsing half of src/config/index.ts, which alone passes it the process environment.
import type { Kind, Var } from "./var-spec";

type Env = Record<string, string | undefined>;

/** What a kind accepts, in the words a refusal uses. */
function describe(kind: Kind): string {
  switch (kind.type) {
    case "int":
      return `an integer from ${kind.min} to ${kind.max}`;
    case "enum":
      return `one of ${kind.values.join(", ")}`;
    case "bool":
      return "1, 0, true, false, yes, no, on or off";
    case "url":
      return "an absolute http(s) URL";
    case "list":
      return "a comma-separated list";
    case "string":
      return kind.allowed ?? "a string";
  }
}

/** The items of a comma list ("a, b,,c" → a, b, c): trimmed, the empty ones dropped. */
export const commaList = (list: string): string[] =>
  list
    .split(",")
    .map((s) => s.trim())
    .filter(Boolean);

export function parseOne(name: string, spec: Var, env: Env): { value?: unknown; problem?: string } {
  // An empty value means "unset" for optional variables (ADMIN_TOKEN= in an env file), not an invalid value.
  const given = env[name] === "" && spec.fallback === undefined ? undefined : env[name];
  const raw = given ?? (typeof spec.fallback === "function" ? spec.fallback(env) : spec.fallback);
  if (raw === undefined) return { value: undefined };
  const value = raw.trim();
  const bad = () =>
    given === undefined && typeof spec.fallback === "function"
      ? // A default worked out from other variables (PUBLIC_BASE_URL from PORT) fails only when one of those does.
        {
          problem: `${name} is not set, and its default ${JSON.stringify(raw)}, worked out from other variables, is not ${describe(spec.kind)}: fix those, or set ${name}`,
        }
      : { problem: `${name}=${spec.secret ? "****" : JSON.stringify(raw)} is not valid: expected ${describe(spec.kind)}` };
  const kind = spec.kind;
  switch (kind.type) {
    case "int": {
      if (!/^-?\d+$/.test(value)) return bad();
      const n = Number(value);
      return n < kind.min || n > kind.max ? bad() : { value: n };
    }
    case "enum":
      return kind.values.includes(value) ? { value } : bad();
    case "bool": {
      const v = value.toLowerCase();
      if (["1", "true", "yes", "on"].includes(v)) return { value: true };
      if (["0", "false", "no", "off", ""].includes(v)) return { value: false };
      return bad();
    }
    case "url": {
      try {
        const url = new URL(value);
        if (url.protocol !== "http:" && url.protocol !== "https:") return bad();
        return { value: value.replace(/\/+$/, "") };
      } catch {
        return bad();
      }
    }
    case "list":
      return { value: commaList(value) };
    case "string":
      return kind.pattern && !kind.pattern.test(value) ? bad() : { value };
  }
}
