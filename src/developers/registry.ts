import { Type as T, type Static } from "@sinclair/typebox";
import { Value } from "@sinclair/typebox/value";
import YAML from "yaml";
import registryText from "./deprecations.yaml" with { type: "text" };

// The deprecation registry (deprecations.yaml beside this file, embedded in the binary). Parsed and
// validated at start: an invalid registry is a build mistake, so it fails loudly (tests catch it first).

const Iso = T.String({ pattern: "^\\d{4}-\\d{2}-\\d{2}T\\d{2}:\\d{2}:\\d{2}(\\.\\d+)?Z$", description: "ISO 8601 UTC" });
const Method = T.Union(["GET", "POST", "PUT", "PATCH", "DELETE"].map((m) => T.Literal(m)));
const Endpoint = T.Object({ method: Method, path: T.String({ pattern: "^/[\\x21-\\x7e]*$", maxLength: 300 }) }, { additionalProperties: false });

const Entry = T.Object(
  {
    id: T.String({ pattern: "^[a-z0-9][a-z0-9-]{2,63}$" }),
    title: T.String({ minLength: 1, maxLength: 300 }),
    description: T.String({ maxLength: 5000 }),
    endpoints: T.Array(Endpoint, { minItems: 1, maxItems: 100 }),
    replacement: T.Optional(Endpoint),
    announced_at: Iso,
    deprecated_at: Iso,
    sunset_at: Iso,
    migration_guide: T.String({ pattern: "^(/|https://)", maxLength: 500 }),
  },
  { additionalProperties: false },
);

export const RegistrySchema = T.Object(
  {
    version: T.Integer({ minimum: 1 }),
    updated_at: Iso,
    policy: T.Object(
      {
        minimum_notice_days: T.Integer({ minimum: 30, description: "the spec's floor: at least 30 days" }),
        reminder_days_before_sunset: T.Array(T.Integer({ minimum: 1 })),
        webhook_schema_notice_days: T.Array(T.Integer({ minimum: 1 })),
        breaking_change_path_prefix: T.String({ pattern: "^/" }),
      },
      { additionalProperties: false },
    ),
    deprecations: T.Array(Entry),
  },
  { additionalProperties: false },
);

export type Registry = Static<typeof RegistrySchema>;
export type Deprecation = Static<typeof Entry>;

const DAY_MS = 86_400_000;

/** Parses and validates registry YAML; throws an Error listing what is wrong. */
export function parseRegistry(text: string): Registry {
  const raw = YAML.parse(text) as unknown;
  if (!Value.Check(RegistrySchema, raw)) {
    const errs = [...Value.Errors(RegistrySchema, raw)].slice(0, 5).map((e) => `${e.path || "/"}: ${e.message}`);
    throw new Error(`deprecation registry is invalid: ${errs.join("; ")}`);
  }
  const problems: string[] = [];
  const seen = new Set<string>();
  for (const d of raw.deprecations) {
    if (seen.has(d.id)) problems.push(`${d.id}: duplicate id`);
    seen.add(d.id);
    const [a, dep, s] = [Date.parse(d.announced_at), Date.parse(d.deprecated_at), Date.parse(d.sunset_at)];
    if (s - a < raw.policy.minimum_notice_days * DAY_MS)
      problems.push(`${d.id}: sunset_at is less than ${raw.policy.minimum_notice_days} days after announced_at`);
    if (dep < a || dep > s) problems.push(`${d.id}: deprecated_at must lie between announced_at and sunset_at`);
  }
  if (problems.length) throw new Error(`deprecation registry is invalid: ${problems.join("; ")}`);
  return raw;
}

/** The registry shipped with this build. */
export function loadRegistry(): Registry {
  return parseRegistry(registryText);
}
