// Every environment variable Herald reads, with its default, type and check. Nothing else in src/
// reads the environment: the Config built here is frozen and passed in through the AppContext.

type Kind =
  | { type: "int"; min: number; max: number }
  | { type: "string"; pattern?: RegExp; allowed?: string }
  | { type: "enum"; values: readonly string[] }
  | { type: "bool" }
  | { type: "url" }
  | { type: "list" };

interface VarSpec {
  kind: Kind;
  /** The default as the string a user would write; undefined = unset. */
  fallback?: string | ((env: Record<string, string | undefined>) => string);
  secret?: boolean;
  doc: string;
}

const int = (min: number, max: number): Kind => ({ type: "int", min, max });
const decimal: Kind = { type: "string", pattern: /^\d{1,15}(\.\d{1,9})?$/, allowed: "a non-negative decimal number such as 0.05" };
const BASE58_ADDRESS = /^[1-9A-HJ-NP-Za-km-z]{32,44}$/;
// The optional chain addresses also accept "" (VAR= in an env file), which means unset.
const OPTIONAL_ADDRESS = /^([1-9A-HJ-NP-Za-km-z]{32,44})?$/;
const ADDRESS_OR_NONE = /^(none|[1-9A-HJ-NP-Za-km-z]{32,44})?$/;
const unsetIfEmpty = (v: unknown): string | undefined => (typeof v === "string" && v !== "" ? v : undefined);
const CRON: Kind = { type: "string", pattern: /^[0-9*\/,?LW#A-Za-z-]+( [0-9*\/,?LW#A-Za-z-]+){4,6}$/, allowed: "a Croner pattern (seconds first, e.g. 0 */10 * * * *)" };

export const CONFIG_VARS = {
  NODE_ENV: { kind: { type: "enum", values: ["development", "test", "production"] }, fallback: "development", doc: "Runtime mode; production refuses unsafe defaults." },
  PORT: { kind: int(0, 65535), fallback: "3000", doc: "TCP port to listen on (0 = any free port)." },
  HOST: { kind: { type: "string", pattern: /^[\w.:-]+$/, allowed: "a hostname or IP address" }, fallback: "0.0.0.0", doc: "Address to bind." },
  PUBLIC_BASE_URL: { kind: { type: "url" }, fallback: (env) => `http://localhost:${env.PORT ?? "3000"}`, doc: "The public {base_url} used in links and short URLs." },
  HERALD_DB_PATH: { kind: { type: "string", pattern: /^.+$/, allowed: "a file path" }, fallback: "./data/herald.db", doc: "SQLite database file (WAL mode); its folder is created if missing." },
  LOG_LEVEL: { kind: { type: "enum", values: ["debug", "info", "warn", "error", "silent"] }, fallback: "info", doc: "Lowest log level written (JSON lines on stdout)." },
  TRUST_PROXY: { kind: { type: "bool" }, fallback: "0", doc: "Take the client IP from the rightmost X-Forwarded-For entry (the one your proxy appends); only behind exactly one proxy you run." },
  MAX_BODY_BYTES: { kind: int(1024, 64 * 1024 * 1024), fallback: String(1024 * 1024), doc: "Largest accepted request body; larger bodies get 413 payload_too_large." },
  RATE_LIMIT_PUBLIC_API_PER_MIN: { kind: int(0, 1_000_000), fallback: "90", doc: "Public, transparency and audio-share requests per IP per minute (0 = off)." },
  RATE_LIMIT_WEBHOOK_PER_MIN: { kind: int(0, 1_000_000), fallback: "120", doc: "Partner webhook-route requests per key per minute (0 = off)." },
  PARTNER_SANDBOX_RATE_LIMIT_PER_MINUTE: { kind: int(0, 1_000_000), fallback: "30", doc: "Requests per sandbox key per minute (0 = off)." },
  RATE_LIMIT_PARTNER_PER_MIN: { kind: int(0, 10_000_000), fallback: "6000", doc: "Other signed live partner requests per key per minute (0 = off)." },
  REQUEST_LOG_RETENTION_DAYS: { kind: int(1, 3650), fallback: "14", doc: "Days of request_log kept before the prune job deletes them." },
  REQUEST_LOG_FLUSH_MS: { kind: int(10, 60_000), fallback: "1000", doc: "How often buffered request-log rows are written in one batch." },
  JOBS_ENABLED: { kind: { type: "bool" }, fallback: "1", doc: "Start the in-process Croner jobs with `serve`." },
  JOBS_DISABLED: { kind: { type: "list" }, fallback: "", doc: "Comma list of job names not to schedule." },
  METRICS_PUBLIC: { kind: { type: "bool" }, fallback: "0", doc: "Serve /metrics without an admin token." },
  HERALD_MASTER_KEY: { kind: { type: "string", pattern: /^([0-9a-fA-F]{64}|[A-Za-z0-9+/]{43}=)$/, allowed: "32 bytes as 64 hex characters or base64" }, secret: true, doc: "Key that encrypts partner and webhook secrets at rest (AES-256-GCM). Required in production; elsewhere generated into <db dir>/master.key (mode 0600)." },
  ADMIN_TOKEN: { kind: { type: "string", pattern: /^[\x21-\x7e]{32,256}$/, allowed: "32–256 visible ASCII characters" }, secret: true, doc: "Bootstraps one operator token (Authorization: Bearer) at start; stored only as a SHA-256 hash." },
  IDEMPOTENCY_REQUIRED: { kind: { type: "bool" }, fallback: "1", doc: "Require Idempotency-Key on partner mutations." },
  IDEMPOTENCY_TTL_HOURS: { kind: int(1, 720), fallback: "24", doc: "How long idempotency records (and their stored responses) are kept." },
  SIGNATURE_SKEW_SECONDS: { kind: int(30, 3600), fallback: "300", doc: "Accepted clock skew of X-Partner-Timestamp; nonces are kept for twice this." },
  SANDBOX_NONCE_REQUIRED: { kind: { type: "bool" }, fallback: "0", doc: "Require X-Partner-Nonce on sandbox mutations too (the spec's sandbox policy: optional unless required globally)." },
  BOOTSTRAP_CREDENTIALS: { kind: { type: "bool" }, fallback: "1", doc: "On an empty database outside production, create and print a sandbox key and an admin token once." },
  WEBHOOK_MAX_ATTEMPTS: { kind: int(1, 50), fallback: "10", doc: "Delivery attempts before a delivery is dead-lettered." },
  WEBHOOK_TIMEOUT_SECONDS: { kind: int(1, 120), fallback: "15", doc: "Per-attempt timeout (connect + response)." },
  WEBHOOK_RETRY_BASE_SECONDS: { kind: int(1, 86_400), fallback: "180", doc: "First retry delay; doubles per attempt (capped), so the default schedule spans about 21 h." },
  WEBHOOK_RETRY_MAX_SECONDS: { kind: int(1, 7 * 86_400), fallback: "28800", doc: "Largest delay between two attempts." },
  WEBHOOK_RETRY_JITTER_PCT: { kind: int(0, 100), fallback: "20", doc: "Random ± spread applied to each retry delay, in percent." },
  WEBHOOK_CONCURRENCY: { kind: int(1, 1024), fallback: "16", doc: "Deliveries in flight at once (per process)." },
  WEBHOOK_PER_TARGET_CONCURRENCY: { kind: int(1, 1024), fallback: "4", doc: "Deliveries in flight at once to one receiver host." },
  WEBHOOK_ALLOW_PRIVATE_TARGETS: { kind: { type: "bool" }, fallback: "0", doc: "Allow receivers on private, loopback and link-local addresses (tests, development). Never in production." },
  WEBHOOK_DISABLE_AFTER_HOURS: { kind: int(1, 8760), fallback: "120", doc: "A webhook whose deliveries have all failed for this long is disabled." },
  WEBHOOK_RETENTION_DAYS: { kind: int(1, 3650), fallback: "30", doc: "Succeeded deliveries and their attempts are pruned after this; dead letters after 90 days." },
  SALUTES_DECIMALS: { kind: int(0, 6), fallback: "2", doc: "Decimal places of salutes amounts; stored exactly as integer minor units." },
  SALUTES_MAX_AMOUNT: { kind: int(1, 1_000_000_000_000), fallback: "1000000000", doc: "Largest single credit, debit or conversion, in whole salutes." },
  SALUTES_CONVERSION_ENABLED: { kind: { type: "bool" }, fallback: "0", doc: "Whether POST /api/salutes/convert is open." },
  SALUTES_CONVERSION_RATE: { kind: decimal, fallback: "0.01", doc: "Target units per salute (exact decimal)." },
  SALUTES_CONVERSION_TARGET: { kind: { type: "string", pattern: /^[a-z0-9_-]{1,32}$/, allowed: "a short lower-case name" }, fallback: "token", doc: "What salutes convert into (reported in the policy and each conversion)." },
  SALUTES_CONVERSION_MIN: { kind: decimal, fallback: "10", doc: "Smallest conversion, in salutes." },
  SALUTES_CONVERSION_MAX: { kind: decimal, fallback: "10000", doc: "Largest single conversion, in salutes." },
  SALUTES_CONVERSION_DAILY_CAP: { kind: decimal, fallback: "50000", doc: "Most salutes one user may convert per UTC day." },
  WALLET_REVERIFY_DAYS: { kind: int(1, 3650), fallback: "30", doc: "A wallet verification older than this is reported as stale." },
  // Solana chain data (src/chain; docs/chain.md). No TOKEN_MINT = every chain-backed answer says not_configured.
  SOLANA_RPC_URLS: { kind: { type: "list" }, fallback: "", secret: true, doc: "Comma list of Solana JSON-RPC URLs, tried in order (failover); may carry API keys, so it is masked and only the host is ever published." },
  TOKEN_MINT: { kind: { type: "string", pattern: OPTIONAL_ADDRESS, allowed: "a base58 Solana address" }, doc: "The token's mint address. Unset: the chain jobs do nothing and chain routes answer not_configured." },
  TREASURY_WALLETS: { kind: { type: "list" }, fallback: "", doc: "Comma list of treasury owner wallets; their token balance is excluded from circulating supply." },
  RESERVE_WALLETS: { kind: { type: "list" }, fallback: "", doc: "Comma list of reserve owner wallets; their token balance is excluded from circulating supply." },
  EXPECTED_MINT_AUTHORITY: { kind: { type: "string", pattern: ADDRESS_OR_NONE, allowed: "a base58 address or none" }, doc: "The mint authority the mint should have (none = renounced); unset = no expectation, review only." },
  EXPECTED_FREEZE_AUTHORITY: { kind: { type: "string", pattern: ADDRESS_OR_NONE, allowed: "a base58 address or none" }, doc: "The freeze authority the mint should have (none = renounced); unset = no expectation, review only." },
  LP_MINT: { kind: { type: "string", pattern: OPTIONAL_ADDRESS, allowed: "a base58 Solana address" }, doc: "LP token mint; when set, wallet-info reports each wallet's LP amount." },
  SOLANA_RPC_TIMEOUT_MS: { kind: int(100, 120_000), fallback: "10000", doc: "Per-call RPC timeout (one attempt against one URL)." },
  SOLANA_RPC_SCAN_TIMEOUT_MS: { kind: int(1000, 3_600_000), fallback: "300000", doc: "Timeout of the holders scan (getProgramAccounts streams every token account of the mint)." },
  SOLANA_RPC_RETRIES: { kind: int(0, 10), fallback: "2", doc: "Retries per URL on 429, 5xx, timeouts and malformed replies before failing over to the next URL." },
  SOLANA_RPC_BACKOFF_MS: { kind: int(0, 60_000), fallback: "250", doc: "First retry delay; doubles per retry with jitter, capped at 30 s (a 429's Retry-After is honoured up to the cap)." },
  SOLANA_RPC_BREAKER_THRESHOLD: { kind: int(1, 1000), fallback: "5", doc: "Consecutive failed attempts that open a URL's circuit breaker (calls skip it while open)." },
  SOLANA_RPC_BREAKER_COOLDOWN_SECONDS: { kind: int(1, 86_400), fallback: "30", doc: "How long an open breaker skips its URL before one trial call is let through." },
  CHAIN_TX_BACKFILL_LIMIT: { kind: int(1, 100_000), fallback: "1000", doc: "Signatures fetched per tracked address on its first transaction sync (older history is not backfilled)." },
  CHAIN_TX_MAX_PER_RUN: { kind: int(1, 1_000_000), fallback: "5000", doc: "Most new signatures one transaction-sync run stores per address; a larger gap is recorded as gap_detected." },
  CHAIN_TOKEN_SNAPSHOT_CRON: { kind: CRON, fallback: "0 */10 * * * *", doc: "Schedule of the token-snapshot job (supply, treasury, reserve, circulating)." },
  CHAIN_HOLDERS_SNAPSHOT_CRON: { kind: CRON, fallback: "0 7 * * * *", doc: "Schedule of the holders-snapshot job (getProgramAccounts scan, concentration)." },
  CHAIN_MINT_AUTHORITY_CRON: { kind: CRON, fallback: "0 13 */6 * * *", doc: "Schedule of the mint-authority-snapshot job." },
  CHAIN_TRANSACTION_SYNC_CRON: { kind: CRON, fallback: "30 */2 * * * *", doc: "Schedule of the transaction-sync job." },
  CHAIN_HOLDER_GROWTH_CRON: { kind: CRON, fallback: "0 15 0 * * *", doc: "Schedule of the holder-growth job (one point per run from the latest holders snapshot)." },
  CHAIN_STALE_HOLDER_CACHE_HOURS: { kind: int(1, 8760), fallback: "3", doc: "Hours after which the holders snapshot (holder-cache proof) is stale." },
  CHAIN_STALE_HOLDER_GROWTH_HOURS: { kind: int(1, 8760), fallback: "26", doc: "Hours after which the holder-growth proof is stale." },
  CHAIN_STALE_PUBLIC_STATS_HOURS: { kind: int(1, 8760), fallback: "1", doc: "Hours after which the public-stats cache (token snapshot) is stale." },
  CHAIN_STALE_TOKEN_DISTRIBUTION_HOURS: { kind: int(1, 8760), fallback: "3", doc: "Hours after which the token-distribution (concentration) proof is stale." },
  CHAIN_STALE_MINT_AUTHORITIES_HOURS: { kind: int(1, 8760), fallback: "13", doc: "Hours after which the mint-authorities proof is stale." },
  CHAIN_STALE_TRANSACTION_SYNC_HOURS: { kind: int(1, 8760), fallback: "1", doc: "Hours after which the transaction-sync proof is stale." },
  // Public status (src/status; docs/status.md).
  STATUS_POLICY_PATH: { kind: { type: "string", pattern: /^.*$/, allowed: "a file path" }, doc: "Status policy file (YAML or JSON): thresholds per check. Unset: the built-in default; unreadable or invalid: the default too, and GET /api/public/system-status/policy reports loaded=false with the error." },
  STATUS_SNAPSHOT_CRON: { kind: CRON, fallback: "0 * * * * *", doc: "Schedule of the status-snapshot job (evaluates every check, stores a snapshot, opens and closes incidents)." },
  STATUS_SNAPSHOT_RETENTION_DAYS: { kind: int(91, 3650), fallback: "100", doc: "Days of status snapshots and incidents kept (uptime, the 90-day bars and the badges read them)." },
  // Audio-share links (src/audio-share; docs/audio-share.md).
  AUDIO_SHARE_ALLOWED_HOSTS: { kind: { type: "list" }, fallback: "", doc: "Comma list of destination hosts share links may point at, besides PUBLIC_BASE_URL's host: `example.com`, `*.example.com` (subdomains only), `example.com:8443`, or an IP literal." },
  AUDIO_SHARE_DENIED_HOSTS: { kind: { type: "list" }, fallback: "", doc: "Comma list of destination hosts always refused (same syntax; matches any port); wins over the allow list and the base host." },
  AUDIO_SHARE_TRACK_AUTH: { kind: { type: "enum", values: ["off", "optional", "required"] }, fallback: "optional", doc: "Bearer auth on POST /api/public/audio-share-links/track: off (ignored), optional (a bearer, if sent, must be valid), required." },
  AUDIO_SHARE_TRACK_DEDUPE_SECONDS: { kind: int(1, 7 * 86_400), fallback: "3600", doc: "A repeated track client_event_id inside this window is answered replay_reason=in_window_duplicate and not counted." },
  AUDIO_SHARE_DEFAULT_EXPIRES_SECONDS: { kind: int(60, 30 * 86_400), fallback: "604800", doc: "Lifetime of a short link built without expires_in (expires_in itself is bounded to 60 s … 30 days)." },
  AUDIO_SHARE_SIGNING_KEY: { kind: { type: "string", pattern: /^([0-9a-fA-F]{64}|[A-Za-z0-9+/]{43}=)$/, allowed: "32 bytes as 64 hex characters or base64" }, secret: true, doc: "HMAC key of signed short links and of the daily click-hash salt. Unset: derived from the master key (HMAC of a fixed label)." },
  SHUTDOWN_GRACE_MS: { kind: int(0, 600_000), fallback: "10000", doc: "How long SIGTERM waits for in-flight requests before closing them." },
} as const satisfies Record<string, VarSpec>;

export type ConfigVar = keyof typeof CONFIG_VARS;

export interface Config {
  readonly nodeEnv: "development" | "test" | "production";
  readonly isProduction: boolean;
  readonly port: number;
  readonly host: string;
  readonly publicBaseUrl: string;
  readonly dbPath: string;
  readonly logLevel: "debug" | "info" | "warn" | "error" | "silent";
  readonly trustProxy: boolean;
  readonly maxBodyBytes: number;
  readonly rateLimits: {
    readonly publicPerMin: number;
    readonly webhookPerMin: number;
    readonly sandboxPerMin: number;
    readonly partnerPerMin: number;
  };
  readonly requestLogRetentionDays: number;
  readonly requestLogFlushMs: number;
  readonly jobsEnabled: boolean;
  readonly jobsDisabled: readonly string[];
  readonly metricsPublic: boolean;
  readonly shutdownGraceMs: number;
  readonly masterKey: string | undefined;
  readonly adminToken: string | undefined;
  readonly idempotencyRequired: boolean;
  readonly idempotencyTtlHours: number;
  readonly signatureSkewSeconds: number;
  readonly sandboxNonceRequired: boolean;
  readonly bootstrapCredentials: boolean;
  readonly salutes: {
    readonly decimals: number;
    readonly maxAmount: number;
    readonly conversion: {
      readonly enabled: boolean;
      readonly rate: string;
      readonly target: string;
      readonly min: string;
      readonly max: string;
      readonly dailyCap: string;
    };
  };
  readonly walletReverifyDays: number;
  readonly chain: {
    readonly rpcUrls: readonly string[];
    readonly tokenMint: string | undefined;
    readonly treasuryWallets: readonly string[];
    readonly reserveWallets: readonly string[];
    /** An address, "none" (renounced), or undefined (no expectation configured). */
    readonly expectedMintAuthority: string | undefined;
    readonly expectedFreezeAuthority: string | undefined;
    readonly lpMint: string | undefined;
    readonly rpc: {
      readonly timeoutMs: number;
      readonly scanTimeoutMs: number;
      readonly retries: number;
      readonly backoffMs: number;
      readonly breakerThreshold: number;
      readonly breakerCooldownSeconds: number;
    };
    readonly tx: { readonly backfillLimit: number; readonly maxPerRun: number };
    readonly schedules: {
      readonly tokenSnapshot: string;
      readonly holdersSnapshot: string;
      readonly mintAuthority: string;
      readonly transactionSync: string;
      readonly holderGrowth: string;
    };
    readonly staleAfterHours: {
      readonly holderCache: number;
      readonly holderGrowth: number;
      readonly publicStatsCache: number;
      readonly tokenDistribution: number;
      readonly mintAuthorities: number;
      readonly transactionSync: number;
    };
  };
  readonly status: {
    readonly policyPath: string | undefined;
    readonly snapshotCron: string;
    readonly snapshotRetentionDays: number;
  };
  readonly audioShare: {
    readonly allowedHosts: readonly string[];
    readonly deniedHosts: readonly string[];
    readonly trackAuth: "off" | "optional" | "required";
    readonly trackDedupeSeconds: number;
    readonly defaultExpiresSeconds: number;
    readonly signingKey: string | undefined;
  };
  readonly webhooks: {
    readonly maxAttempts: number;
    readonly timeoutSeconds: number;
    readonly retryBaseSeconds: number;
    readonly retryMaxSeconds: number;
    readonly retryJitterPct: number;
    readonly concurrency: number;
    readonly perTargetConcurrency: number;
    readonly allowPrivateTargets: boolean;
    readonly disableAfterHours: number;
    readonly retentionDays: number;
  };
}

export class ConfigError extends Error {
  constructor(readonly problems: string[]) {
    super(`invalid configuration:\n  ${problems.join("\n  ")}`);
  }
}

type Env = Record<string, string | undefined>;

function describe(kind: Kind): string {
  switch (kind.type) {
    case "int": return `an integer from ${kind.min} to ${kind.max}`;
    case "enum": return `one of ${kind.values.join(", ")}`;
    case "bool": return "1, 0, true or false";
    case "url": return "an absolute http(s) URL";
    case "list": return "a comma-separated list";
    case "string": return kind.allowed ?? "a string";
  }
}

function parseOne(name: string, spec: VarSpec, env: Env): { value?: unknown; problem?: string } {
  // An empty value means "unset" for optional variables (ADMIN_TOKEN= in an env file), not an invalid value.
  const given = env[name] === "" && spec.fallback === undefined ? undefined : env[name];
  const raw = given ?? (typeof spec.fallback === "function" ? spec.fallback(env) : spec.fallback);
  if (raw === undefined) return { value: undefined };
  const value = raw.trim();
  const bad = () => ({ problem: `${name}=${spec.secret ? "****" : JSON.stringify(raw)} is not valid: expected ${describe(spec.kind)}` });
  const kind = spec.kind;
  switch (kind.type) {
    case "int": {
      if (!/^-?\d+$/.test(value)) return bad();
      const n = Number(value);
      return n < kind.min || n > kind.max ? bad() : { value: n };
    }
    case "enum": return kind.values.includes(value) ? { value } : bad();
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
    case "list": return { value: value.split(",").map((s) => s.trim()).filter(Boolean) };
    case "string": return kind.pattern && !kind.pattern.test(value) ? bad() : { value };
  }
}

/** The chain variables' cross-checks: list entries are checked one by one, and a mint needs somewhere to ask. */
function chainProblems(values: Record<string, unknown>): string[] {
  const problems: string[] = [];
  for (const name of ["TREASURY_WALLETS", "RESERVE_WALLETS"]) {
    const bad = (values[name] as string[] | undefined ?? []).filter((a) => !BASE58_ADDRESS.test(a));
    if (bad.length) problems.push(`${name} has entries that are not base58 Solana addresses: ${bad.map((b) => JSON.stringify(b)).join(", ")}`);
  }
  const treasury = new Set((values.TREASURY_WALLETS as string[] | undefined) ?? []);
  const both = ((values.RESERVE_WALLETS as string[] | undefined) ?? []).filter((w) => treasury.has(w));
  if (both.length) problems.push(`${both.join(", ")} is in both TREASURY_WALLETS and RESERVE_WALLETS: its balance would be subtracted from circulating supply twice`);
  const urls = (values.SOLANA_RPC_URLS as string[] | undefined) ?? [];
  urls.forEach((u, i) => {
    let ok = false;
    try {
      ok = ["http:", "https:"].includes(new URL(u).protocol);
    } catch {
      ok = false;
    }
    // The URL may carry an API key: name its position, never its text.
    if (!ok) problems.push(`SOLANA_RPC_URLS entry ${i + 1} is not an absolute http(s) URL`);
  });
  if (unsetIfEmpty(values.TOKEN_MINT) && urls.length === 0) {
    problems.push("TOKEN_MINT is set but SOLANA_RPC_URLS is empty: give at least one Solana JSON-RPC URL (e.g. http://127.0.0.1:8899 from `herald dev-rpc`)");
  }
  return problems;
}

/** Parses the environment once; throws ConfigError listing every bad variable. */
export function loadConfig(env: Env = process.env): Config {
  const values: Record<string, unknown> = {};
  const problems: string[] = [];
  for (const [name, spec] of Object.entries(CONFIG_VARS) as [string, VarSpec][]) {
    const { value, problem } = parseOne(name, spec, env);
    if (problem) problems.push(problem);
    values[name] = value;
  }
  if (values.NODE_ENV === "production" && values.WEBHOOK_ALLOW_PRIVATE_TARGETS === true) {
    problems.push("WEBHOOK_ALLOW_PRIVATE_TARGETS=1 is refused when NODE_ENV=production: it would let partners aim deliveries at internal addresses");
  }
  if (values.NODE_ENV === "production" && !values.HERALD_MASTER_KEY) {
    problems.push("HERALD_MASTER_KEY is required when NODE_ENV=production: 32 bytes as 64 hex characters or base64 (e.g. `openssl rand -hex 32`)");
  }
  problems.push(...chainProblems(values));
  if (problems.length) throw new ConfigError(problems);
  const v = values as { [K in ConfigVar]: never };
  const nodeEnv = v.NODE_ENV as Config["nodeEnv"];
  return Object.freeze({
    nodeEnv,
    isProduction: nodeEnv === "production",
    port: v.PORT,
    host: v.HOST,
    publicBaseUrl: v.PUBLIC_BASE_URL,
    dbPath: v.HERALD_DB_PATH,
    logLevel: v.LOG_LEVEL,
    trustProxy: v.TRUST_PROXY,
    maxBodyBytes: v.MAX_BODY_BYTES,
    rateLimits: Object.freeze({
      publicPerMin: v.RATE_LIMIT_PUBLIC_API_PER_MIN,
      webhookPerMin: v.RATE_LIMIT_WEBHOOK_PER_MIN,
      sandboxPerMin: v.PARTNER_SANDBOX_RATE_LIMIT_PER_MINUTE,
      partnerPerMin: v.RATE_LIMIT_PARTNER_PER_MIN,
    }),
    requestLogRetentionDays: v.REQUEST_LOG_RETENTION_DAYS,
    requestLogFlushMs: v.REQUEST_LOG_FLUSH_MS,
    jobsEnabled: v.JOBS_ENABLED,
    jobsDisabled: Object.freeze(v.JOBS_DISABLED as string[]),
    metricsPublic: v.METRICS_PUBLIC,
    shutdownGraceMs: v.SHUTDOWN_GRACE_MS,
    masterKey: v.HERALD_MASTER_KEY,
    adminToken: v.ADMIN_TOKEN,
    idempotencyRequired: v.IDEMPOTENCY_REQUIRED,
    idempotencyTtlHours: v.IDEMPOTENCY_TTL_HOURS,
    signatureSkewSeconds: v.SIGNATURE_SKEW_SECONDS,
    sandboxNonceRequired: v.SANDBOX_NONCE_REQUIRED,
    bootstrapCredentials: v.BOOTSTRAP_CREDENTIALS,
    salutes: Object.freeze({
      decimals: v.SALUTES_DECIMALS,
      maxAmount: v.SALUTES_MAX_AMOUNT,
      conversion: Object.freeze({
        enabled: v.SALUTES_CONVERSION_ENABLED,
        rate: v.SALUTES_CONVERSION_RATE,
        target: v.SALUTES_CONVERSION_TARGET,
        min: v.SALUTES_CONVERSION_MIN,
        max: v.SALUTES_CONVERSION_MAX,
        dailyCap: v.SALUTES_CONVERSION_DAILY_CAP,
      }),
    }),
    walletReverifyDays: v.WALLET_REVERIFY_DAYS,
    chain: Object.freeze({
      rpcUrls: Object.freeze((v.SOLANA_RPC_URLS as string[]).map((u) => u.replace(/\/+$/, ""))),
      tokenMint: unsetIfEmpty(v.TOKEN_MINT),
      treasuryWallets: Object.freeze(v.TREASURY_WALLETS as string[]),
      reserveWallets: Object.freeze(v.RESERVE_WALLETS as string[]),
      expectedMintAuthority: unsetIfEmpty(v.EXPECTED_MINT_AUTHORITY),
      expectedFreezeAuthority: unsetIfEmpty(v.EXPECTED_FREEZE_AUTHORITY),
      lpMint: unsetIfEmpty(v.LP_MINT),
      rpc: Object.freeze({
        timeoutMs: v.SOLANA_RPC_TIMEOUT_MS,
        scanTimeoutMs: v.SOLANA_RPC_SCAN_TIMEOUT_MS,
        retries: v.SOLANA_RPC_RETRIES,
        backoffMs: v.SOLANA_RPC_BACKOFF_MS,
        breakerThreshold: v.SOLANA_RPC_BREAKER_THRESHOLD,
        breakerCooldownSeconds: v.SOLANA_RPC_BREAKER_COOLDOWN_SECONDS,
      }),
      tx: Object.freeze({ backfillLimit: v.CHAIN_TX_BACKFILL_LIMIT, maxPerRun: v.CHAIN_TX_MAX_PER_RUN }),
      schedules: Object.freeze({
        tokenSnapshot: v.CHAIN_TOKEN_SNAPSHOT_CRON,
        holdersSnapshot: v.CHAIN_HOLDERS_SNAPSHOT_CRON,
        mintAuthority: v.CHAIN_MINT_AUTHORITY_CRON,
        transactionSync: v.CHAIN_TRANSACTION_SYNC_CRON,
        holderGrowth: v.CHAIN_HOLDER_GROWTH_CRON,
      }),
      staleAfterHours: Object.freeze({
        holderCache: v.CHAIN_STALE_HOLDER_CACHE_HOURS,
        holderGrowth: v.CHAIN_STALE_HOLDER_GROWTH_HOURS,
        publicStatsCache: v.CHAIN_STALE_PUBLIC_STATS_HOURS,
        tokenDistribution: v.CHAIN_STALE_TOKEN_DISTRIBUTION_HOURS,
        mintAuthorities: v.CHAIN_STALE_MINT_AUTHORITIES_HOURS,
        transactionSync: v.CHAIN_STALE_TRANSACTION_SYNC_HOURS,
      }),
    }),
    status: Object.freeze({
      policyPath: unsetIfEmpty(v.STATUS_POLICY_PATH),
      snapshotCron: v.STATUS_SNAPSHOT_CRON,
      snapshotRetentionDays: v.STATUS_SNAPSHOT_RETENTION_DAYS,
    }),
    audioShare: Object.freeze({
      allowedHosts: Object.freeze(v.AUDIO_SHARE_ALLOWED_HOSTS as string[]),
      deniedHosts: Object.freeze(v.AUDIO_SHARE_DENIED_HOSTS as string[]),
      trackAuth: v.AUDIO_SHARE_TRACK_AUTH,
      trackDedupeSeconds: v.AUDIO_SHARE_TRACK_DEDUPE_SECONDS,
      defaultExpiresSeconds: v.AUDIO_SHARE_DEFAULT_EXPIRES_SECONDS,
      signingKey: unsetIfEmpty(v.AUDIO_SHARE_SIGNING_KEY),
    }),
    webhooks: Object.freeze({
      maxAttempts: v.WEBHOOK_MAX_ATTEMPTS,
      timeoutSeconds: v.WEBHOOK_TIMEOUT_SECONDS,
      retryBaseSeconds: v.WEBHOOK_RETRY_BASE_SECONDS,
      retryMaxSeconds: v.WEBHOOK_RETRY_MAX_SECONDS,
      retryJitterPct: v.WEBHOOK_RETRY_JITTER_PCT,
      concurrency: v.WEBHOOK_CONCURRENCY,
      perTargetConcurrency: v.WEBHOOK_PER_TARGET_CONCURRENCY,
      allowPrivateTargets: v.WEBHOOK_ALLOW_PRIVATE_TARGETS,
      disableAfterHours: v.WEBHOOK_DISABLE_AFTER_HOURS,
      retentionDays: v.WEBHOOK_RETENTION_DAYS,
    }),
  });
}

/** The effective configuration by variable name, secrets masked: what `herald config` prints. */
export function describeConfig(env: Env = process.env): Array<{ name: string; value: string; source: "env" | "default"; doc: string }> {
  return (Object.entries(CONFIG_VARS) as [string, VarSpec][]).map(([name, spec]) => {
    const fromEnv = env[name] !== undefined;
    const raw = env[name] ?? (typeof spec.fallback === "function" ? spec.fallback(env) : spec.fallback) ?? "";
    return { name, value: spec.secret && raw ? "****" : raw, source: fromEnv ? "env" : "default", doc: spec.doc };
  });
}
