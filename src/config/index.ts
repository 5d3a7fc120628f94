// Reads the environment once: every variable declared in src/config/vars.ts is parsed and checked, alone and then
// against the others, and the Config built from the same declarations is frozen and passed in through the
// AppContext. Nothing else in src/ reads the environment.
import { parseOne } from "./parse";
import type { Config, ConfigRow } from "./types";
import { mapTree, type Var } from "./var-spec";
import { CONFIG_SCHEMA, CONFIG_VARS } from "./vars";
import { BASE58_ADDRESS } from "./vars-chain";
import { RETIRED_VARS } from "./vars-instances";

export { CONFIG_VARS };
export type { ConfigVar } from "./vars";
export type { Config, ConfigRow } from "./types";

export class ConfigError extends Error {
  constructor(readonly problems: string[]) {
    super(`invalid configuration:\n  ${problems.join("\n  ")}`);
  }
}

type Env = Record<string, string | undefined>;

/** The chain variables' cross-checks: list entries are checked one by one, and a mint needs somewhere to ask. */
function chainProblems(values: Record<string, unknown>): string[] {
  const problems: string[] = [];
  const listOf = (name: string) => (values[name] as string[] | undefined) ?? [];
  for (const name of ["TREASURY_WALLETS", "RESERVE_WALLETS", "LP_WALLETS"]) {
    const bad = listOf(name).filter((a) => !BASE58_ADDRESS.test(a));
    if (bad.length) problems.push(`${name} has entries that are not base58 Solana addresses: ${bad.map((b) => JSON.stringify(b)).join(", ")}`);
  }
  const treasury = new Set(listOf("TREASURY_WALLETS"));
  const both = listOf("RESERVE_WALLETS").filter((w) => treasury.has(w));
  if (both.length)
    problems.push(`${both.join(", ")} is in both TREASURY_WALLETS and RESERVE_WALLETS: its balance would be subtracted from circulating supply twice`);
  // An LP wallet's moves are trades (not declared) and its balance is circulating: it cannot also be a treasury or reserve.
  const treasuryOrReserve = new Set([...treasury, ...listOf("RESERVE_WALLETS")]);
  const lpToo = listOf("LP_WALLETS").filter((w) => treasuryOrReserve.has(w));
  if (lpToo.length) problems.push(`${lpToo.join(", ")} is in LP_WALLETS and in TREASURY_WALLETS or RESERVE_WALLETS: the audit would count its moves twice`);
  const urls = listOf("SOLANA_RPC_URLS");
  urls.forEach((u, i) => {
    // The URL may carry an API key: name its position, never its text.
    if (!["http:", "https:"].includes(URL.parse(u)?.protocol ?? "")) problems.push(`SOLANA_RPC_URLS entry ${i + 1} is not an absolute http(s) URL`);
  });
  if (values.TOKEN_MINT && urls.length === 0) {
    problems.push("TOKEN_MINT is set but SOLANA_RPC_URLS is empty: give at least one Solana JSON-RPC URL (e.g. http://127.0.0.1:8899 from `herald dev-rpc`)");
  }
  return problems;
}

/**
 * Whether `name` is unset and its default, worked out from other variables (PUBLIC_BASE_URL from PORT), fails only
 * because one of those was refused already: that refusal says it, and a second line about the same bad value
 * (PORT=abc) would read as two problems. The default is tried again without the refused variables to tell.
 */
function followsFromRefused(name: string, spec: Var, env: Env, refused: ReadonlySet<string>): boolean {
  if (env[name] !== undefined || typeof spec.fallback !== "function" || refused.size === 0) return false;
  const without = Object.fromEntries(Object.entries(env).filter(([k]) => !refused.has(k)));
  return parseOne(name, spec, without).problem === undefined;
}

/**
 * In production PUBLIC_BASE_URL is required and https: it is the address in every link, short URL, webhook and the
 * API document's servers, production marks the session cookies Secure and sends Strict-Transport-Security (both
 * work only over https), and the default (http://localhost:PORT) would point every client at the server itself.
 */
function publicUrlProblems(given: string | undefined, url: string): string[] {
  if (given === undefined || given === "") {
    return [
      "PUBLIC_BASE_URL is required when NODE_ENV=production: the https address clients reach Herald at (e.g. https://herald.example.com, usually the TLS proxy in front of it)",
    ];
  }
  if (new URL(url).protocol === "https:") return [];
  return [
    `PUBLIC_BASE_URL="${url}" is refused when NODE_ENV=production: it must be https (the address clients reach Herald at, usually the TLS proxy's); production's Secure cookies and Strict-Transport-Security work only over https`,
  ];
}

/**
 * DATABASE_URL as Bun's client reads it: one host. libpq's multi-host form (postgres://h1:5432,h2:5432/db with
 * target_session_attrs) is not followed by it, and failed at `serve` with a bare "Invalid URL". Never
 * echoes the value: it holds the password.
 */
function databaseUrlProblems(url: string | undefined): string[] {
  if (!url) return [];
  const authority = /^postgres(?:ql)?:\/\/(?:[^@/]*@)?([^/?#]*)/.exec(url)?.[1] ?? "";
  if (authority.includes(",")) {
    return [
      `DATABASE_URL names several hosts (libpq's "h1:5432,h2:5432" form): Herald connects to one address and does not pick the primary among several. Give one that always reaches the primary — a TCP proxy that routes only to the writable server (e.g. HAProxy checking Patroni's /primary), a pooler repointed at failover, or your provider's writer endpoint (docs/postgres.md "Failover")`,
    ];
  }
  if (URL.canParse(url)) return [];
  return [
    "DATABASE_URL is not a URL Herald can read: postgres://user:password@host:5432/database (percent-encode special characters in the user and password)",
  ];
}

/** Parses the environment once; throws ConfigError listing every bad variable. */
export function loadConfig(env: Env = process.env): Config {
  // By environment name, as parse.ts gives them: the cross-checks read them before any variable's map.
  const values: Record<string, unknown> = {};
  const problems: string[] = [];
  const refused = new Set<string>();
  for (const spec of Object.values(CONFIG_VARS)) {
    const { value, problem } = parseOne(spec.name, spec, env);
    if (problem && !followsFromRefused(spec.name, spec, env, refused)) problems.push(problem);
    if (problem) refused.add(spec.name);
    values[spec.name] = value;
  }
  if (values.NODE_ENV === "production" && values.WEBHOOK_ALLOW_PRIVATE_TARGETS === true) {
    problems.push("WEBHOOK_ALLOW_PRIVATE_TARGETS=1 is refused when NODE_ENV=production: it would let partners aim deliveries at internal addresses");
  }
  if (values.NODE_ENV === "production" && !values.HERALD_MASTER_KEY) {
    problems.push("HERALD_MASTER_KEY is required when NODE_ENV=production: 32 bytes as 64 hex characters or base64 (e.g. `openssl rand -hex 32`)");
  }
  if (values.NODE_ENV === "production" && !refused.has("PUBLIC_BASE_URL"))
    problems.push(...publicUrlProblems(env.PUBLIC_BASE_URL, values.PUBLIC_BASE_URL as string));
  problems.push(...chainProblems(values));
  if (!refused.has("DATABASE_URL")) problems.push(...databaseUrlProblems(values.DATABASE_URL as string | undefined));
  if (problems.length) throw new ConfigError(problems);
  const declared = mapTree(CONFIG_SCHEMA, (leaf) => leaf.toConfig(values[leaf.name]));
  return Object.freeze({
    ...declared,
    isProduction: declared.nodeEnv === "production",
    database: Object.freeze({ engine: declared.database.url ? ("postgres" as const) : ("sqlite" as const), ...declared.database }),
    described: Object.freeze(describeConfig(env)),
    retired: Object.freeze(
      Object.entries(RETIRED_VARS)
        .filter(([name]) => env[name] !== undefined)
        .map(([name, note]) => ({ name, note })),
    ),
  });
}

/** The effective configuration by variable name, secrets masked: what `herald config` prints. */
export function describeConfig(env: Env = process.env): ConfigRow[] {
  return Object.values(CONFIG_VARS).map((spec) => {
    const name = spec.name;
    const fromEnv = env[name] !== undefined;
    const fallback = (typeof spec.fallback === "function" ? spec.fallback(env) : spec.fallback) ?? "";
    const raw = env[name] ?? fallback;
    const secret = spec.secret === true;
    return { name, value: secret && raw ? "****" : raw, source: fromEnv ? "env" : "default", doc: spec.doc, differs: fromEnv && raw !== fallback, secret };
  });
}
