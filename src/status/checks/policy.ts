import { readFileSync } from "node:fs";
import { basename } from "node:path";
import { Type as T, type Static } from "@sinclair/typebox";
import { Value } from "@sinclair/typebox/value";
import YAML from "yaml";
import type { AppContext } from "../../context";

// The status policy: the thresholds every check is judged by. A built-in default applies unless
// STATUS_POLICY_PATH names a YAML or JSON file; that file may give any subset (deep-merged over the default,
// check by check) and unknown keys are refused, so a typo never silently leaves a default in force. A file
// that cannot be read or does not validate never stops the service: the default is used and the policy
// endpoint says loaded=false with the error.

const Level = T.Union([T.Literal("ok"), T.Literal("warn"), T.Literal("bad")]);
export type Level = Static<typeof Level>;
const NotConfiguredLevel = T.Union([T.Literal("ok"), T.Literal("warn")], {
  description: "not_configured may never make the service bad: a deployment without a token is not broken",
});
const count = (description: string) => T.Integer({ minimum: 0, maximum: 1_000_000_000, description });
const pct = (description: string) => T.Number({ minimum: 0, maximum: 100, description });
const strict = { additionalProperties: false } as const;

/** Every check's settings, exactly: the policy file's schema, and the policy route's answer (src/status/model.ts). */
export const PolicyChecksSchema = T.Object(
  {
    database: T.Object({ migrations_behind: Level }, strict),
    reliability: T.Object(
      {
        window_days: T.Integer({ minimum: 1, maximum: 90 }),
        unresolved_failure_jobs_warn: count("warn when at least this many jobs' latest run failed (0 = off)"),
        unresolved_failure_jobs_bad: count("bad when at least this many (0 = off)"),
        avg_mttr_minutes_warn: count("warn when the mean time to recovery exceeds this (0 = off)"),
      },
      strict,
    ),
    jobs: T.Object(
      {
        stale_factor: T.Number({ minimum: 1, maximum: 100, description: "a job is stale after this many of its intervals without a run" }),
        min_stale_minutes: count("never stale before this many minutes"),
        warn_at: count("warn when at least this many jobs are failing or stale (0 = off)"),
        bad_at: count("bad when at least this many (0 = off)"),
      },
      strict,
    ),
    chain_rpc: T.Object(
      {
        window_minutes: T.Integer({ minimum: 1, maximum: 10_080 }),
        min_calls: count("hosts with fewer calls in the window are judged by their breaker only"),
        error_rate_warn_pct: pct("a host at or above this failure rate is degraded (0 = off)"),
        error_rate_bad_pct: pct("a host at or above this failure rate is unusable (0 = off)"),
      },
      strict,
    ),
    freshness: T.Object({ fresh: Level, stale: Level, missing: Level, not_configured: NotConfiguredLevel }, strict),
    mint_authority: T.Object({ mismatch: Level, expectation_missing: Level }, strict),
    webhooks: T.Object(
      {
        backlog_warn: count("pending deliveries (queued + processing) for warn (0 = off)"),
        backlog_bad: count("pending deliveries for bad (0 = off)"),
        dead_letters_warn: count("dead-lettered deliveries kept for warn (0 = off)"),
        dead_letters_bad: count("dead-lettered deliveries kept for bad (0 = off)"),
      },
      strict,
    ),
    request_errors: T.Object(
      {
        window_minutes: T.Integer({ minimum: 1, maximum: 1440 }),
        min_requests: count("below this many requests in the window the rate is not judged"),
        error_rate_warn_pct: pct("5xx share of requests for warn (0 = off)"),
        error_rate_bad_pct: pct("5xx share of requests for bad (0 = off)"),
      },
      strict,
    ),
    uptime: T.Object(
      {
        max_sample_gap_seconds: T.Integer({ minimum: 60, maximum: 86_400, description: "a snapshot speaks for at most this long; longer gaps are unobserved" }),
      },
      strict,
    ),
  },
  strict,
);

export const PolicySchema = T.Object(
  {
    version: T.String({ minLength: 1, maxLength: 64 }),
    exclude_maintenance_default: T.Boolean(),
    audit_anomalies_warn_degrades: T.Boolean(),
    checks: PolicyChecksSchema,
  },
  strict,
);
export type StatusPolicy = Static<typeof PolicySchema>;

export const DEFAULT_POLICY: StatusPolicy = {
  version: "builtin-1",
  exclude_maintenance_default: true,
  audit_anomalies_warn_degrades: false,
  checks: {
    database: { migrations_behind: "bad" },
    reliability: { window_days: 7, unresolved_failure_jobs_warn: 1, unresolved_failure_jobs_bad: 3, avg_mttr_minutes_warn: 120 },
    jobs: { stale_factor: 3, min_stale_minutes: 5, warn_at: 1, bad_at: 3 },
    chain_rpc: { window_minutes: 15, min_calls: 5, error_rate_warn_pct: 10, error_rate_bad_pct: 50 },
    freshness: { fresh: "ok", stale: "warn", missing: "warn", not_configured: "ok" },
    mint_authority: { mismatch: "bad", expectation_missing: "ok" },
    // Dead letters are mostly a partner's receiver failing, not this service: counted, not judged, by default.
    webhooks: { backlog_warn: 1000, backlog_bad: 10_000, dead_letters_warn: 0, dead_letters_bad: 0 },
    request_errors: { window_minutes: 15, min_requests: 20, error_rate_warn_pct: 5, error_rate_bad_pct: 25 },
    uptime: { max_sample_gap_seconds: 180 },
  },
};

export interface LoadedPolicy {
  policy: StatusPolicy;
  source: "builtin_default" | "file";
  /** Full path, for logs only. */
  path: string | null;
  /** Base name of the file, the part that is published. */
  file: string | null;
  loaded: boolean;
  error: string | null;
}

const isObject = (v: unknown): v is Record<string, unknown> => typeof v === "object" && v !== null && !Array.isArray(v);

/** The file's values over the default: objects merge key by key, everything else replaces. */
function mergeOver(base: unknown, over: unknown): unknown {
  if (!isObject(base) || !isObject(over)) return over;
  const out: Record<string, unknown> = { ...base };
  for (const [k, v] of Object.entries(over)) out[k] = k in base ? mergeOver(base[k], v) : v;
  return out;
}

/** Typebox errors as "checks.webhooks.backlog_wran is not a known setting": dotted paths, plain words. */
function firstErrors(value: unknown): string {
  const seen = new Set<string>();
  const out: string[] = [];
  for (const e of Value.Errors(PolicySchema, value)) {
    const path = e.path.replace(/^\//, "").replace(/\//g, ".") || "(top level)";
    if (seen.has(path)) continue;
    seen.add(path);
    const literals = (e.schema as { anyOf?: Array<{ const?: unknown }> }).anyOf?.map((s) => s.const).filter((v) => v !== undefined);
    const problem =
      e.message === "Unexpected property"
        ? "is not a known setting"
        : literals?.length
          ? `must be one of: ${literals.join(", ")}`
          : e.message.replace(/^Expected /, "must be ");
    out.push(`${path} ${problem}`);
    if (out.length === 5) break;
  }
  return out.join("; ");
}

/** Parses policy text (YAML is a superset of JSON, so one parser reads both). Throws with a readable message. */
export function parsePolicy(text: string): StatusPolicy {
  let raw: unknown;
  try {
    raw = YAML.parse(text);
  } catch (err) {
    throw new Error(`not valid YAML or JSON: ${(err as Error).message.split("\n")[0]}`);
  }
  if (!isObject(raw)) throw new Error("not a mapping (an object) at the top level");
  const merged = mergeOver(DEFAULT_POLICY, raw);
  if (!Value.Check(PolicySchema, merged)) throw new Error(`invalid: ${firstErrors(merged)}`);
  const p = merged as StatusPolicy;
  const pairs: Array<[string, number, number]> = [
    ["reliability.unresolved_failure_jobs", p.checks.reliability.unresolved_failure_jobs_warn, p.checks.reliability.unresolved_failure_jobs_bad],
    ["jobs", p.checks.jobs.warn_at, p.checks.jobs.bad_at],
    ["chain_rpc.error_rate", p.checks.chain_rpc.error_rate_warn_pct, p.checks.chain_rpc.error_rate_bad_pct],
    ["webhooks.backlog", p.checks.webhooks.backlog_warn, p.checks.webhooks.backlog_bad],
    ["webhooks.dead_letters", p.checks.webhooks.dead_letters_warn, p.checks.webhooks.dead_letters_bad],
    ["request_errors.error_rate", p.checks.request_errors.error_rate_warn_pct, p.checks.request_errors.error_rate_bad_pct],
  ];
  for (const [name, warn, bad] of pairs) {
    if (warn > 0 && bad > 0 && bad < warn) throw new Error(`invalid: ${name}: the bad threshold (${bad}) is below the warn threshold (${warn})`);
  }
  return p;
}

/** The last policy file that parsed, with its text. */
let lastParsed: { path: string; text: string; loaded: LoadedPolicy } | null = null;

/** The policy in force: the file when it reads and validates, else the default with the reason. */
export function loadPolicy(ctx: Pick<AppContext, "config">): LoadedPolicy {
  const path = ctx.config.status.policyPath ?? null;
  if (!path) return { policy: DEFAULT_POLICY, source: "builtin_default", path: null, file: null, loaded: false, error: null };
  // Only the file's base name is published: the directory layout of the host is nobody's business.
  const name = basename(path);
  try {
    const text = readFileSync(path, "utf8");
    // Read on every call (an edit applies at once), parsed only when its text changed: the policy route and every
    // status evaluation ask for it, and a YAML parse and schema check cost far more than the read.
    if (lastParsed?.path === path && lastParsed.text === text) return lastParsed.loaded;
    const loaded: LoadedPolicy = { policy: parsePolicy(text), source: "file", path, file: name, loaded: true, error: null };
    lastParsed = { path, text, loaded };
    return loaded;
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    const why = code ? `cannot read ${name}: ${code}` : `${name} is ${(err as Error).message}`;
    return { policy: DEFAULT_POLICY, source: "builtin_default", path, file: name, loaded: false, error: why };
  }
}
