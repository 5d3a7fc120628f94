// Every environment variable Herald reads, with its default, type and check. Nothing else in src/
// reads the environment: the Config built here is frozen and passed in through the AppContext.
import { CONFIG_VARS, BASE58_ADDRESS, unsetIfEmpty, type VarSpec } from "./vars";
import { RETIRED_VARS } from "./vars-instances";
import { parseOne } from "./parse";

export { CONFIG_VARS };

export type ConfigVar = keyof typeof CONFIG_VARS;
export type { Config, ConfigRow } from "./types";
import type { Config, ConfigRow } from "./types";

export class ConfigError extends Error {
  constructor(readonly problems: string[]) {
    super(`invalid configuration:\n  ${problems.join("\n  ")}`);
  }
}

type Env = Record<string, string | undefined>;

/** The chain variables' cross-checks: list entries are checked one by one, and a mint needs somewhere to ask. */
function chainProblems(values: Record<string, unknown>): string[] {
  const problems: string[] = [];
  for (const name of ["TREASURY_WALLETS", "RESERVE_WALLETS", "LP_WALLETS"]) {
    const bad = ((values[name] as string[] | undefined) ?? []).filter((a) => !BASE58_ADDRESS.test(a));
    if (bad.length) problems.push(`${name} has entries that are not base58 Solana addresses: ${bad.map((b) => JSON.stringify(b)).join(", ")}`);
  }
  const treasury = new Set((values.TREASURY_WALLETS as string[] | undefined) ?? []);
  const both = ((values.RESERVE_WALLETS as string[] | undefined) ?? []).filter((w) => treasury.has(w));
  if (both.length)
    problems.push(`${both.join(", ")} is in both TREASURY_WALLETS and RESERVE_WALLETS: its balance would be subtracted from circulating supply twice`);
  // An LP wallet's moves are trades (not declared) and its balance is circulating: it cannot also be a treasury or reserve.
  const treasuryOrReserve = new Set([...treasury, ...((values.RESERVE_WALLETS as string[] | undefined) ?? [])]);
  const lpToo = ((values.LP_WALLETS as string[] | undefined) ?? []).filter((w) => treasuryOrReserve.has(w));
  if (lpToo.length) problems.push(`${lpToo.join(", ")} is in LP_WALLETS and in TREASURY_WALLETS or RESERVE_WALLETS: the audit would count its moves twice`);
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

/**
 * Whether `name` is unset and its default, worked out from other variables (PUBLIC_BASE_URL from PORT), fails only
 * because one of those was refused already: that refusal says it, and a second line about the same bad value
 * (PORT=abc) would read as two problems. The default is tried again without the refused variables to tell.
 */
function followsFromRefused(name: string, spec: VarSpec, env: Env, refused: ReadonlySet<string>): boolean {
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
 * target_session_attrs) is not followed by it, and failed at `serve` with a bare "Invalid URL" (issue 76). Never
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
  try {
    new URL(url);
    return [];
  } catch {
    return [
      "DATABASE_URL is not a URL Herald can read: postgres://user:password@host:5432/database (percent-encode special characters in the user and password)",
    ];
  }
}

/** Parses the environment once; throws ConfigError listing every bad variable. */
export function loadConfig(env: Env = process.env): Config {
  const values: Record<string, unknown> = {};
  const problems: string[] = [];
  const refused = new Set<string>();
  for (const [name, spec] of Object.entries(CONFIG_VARS) as [string, VarSpec][]) {
    const { value, problem } = parseOne(name, spec, env);
    if (problem && !followsFromRefused(name, spec, env, refused)) problems.push(problem);
    if (problem) refused.add(name);
    values[name] = value;
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
  const v = values as { [K in ConfigVar]: never };
  const nodeEnv = v.NODE_ENV as Config["nodeEnv"];
  return Object.freeze({
    nodeEnv,
    isProduction: nodeEnv === "production",
    port: v.PORT,
    host: v.HOST,
    publicBaseUrl: v.PUBLIC_BASE_URL,
    dbPath: v.HERALD_DB_PATH,
    database: Object.freeze({
      engine: v.DATABASE_URL ? ("postgres" as const) : ("sqlite" as const),
      url: v.DATABASE_URL,
      poolMax: v.DATABASE_POOL_MAX,
      batchSlots: v.DATABASE_BATCH_SLOTS,
      statementTimeoutMs: v.DATABASE_STATEMENT_TIMEOUT_MS,
      idleInTransactionTimeoutMs: v.DATABASE_IDLE_IN_TRANSACTION_TIMEOUT_MS,
      connectTimeoutMs: v.DATABASE_CONNECT_TIMEOUT_MS,
      acquireTimeoutMs: v.DATABASE_ACQUIRE_TIMEOUT_MS,
      queryTimeoutMs: v.DATABASE_QUERY_TIMEOUT_MS,
      transactionTimeoutMs: v.DATABASE_TRANSACTION_TIMEOUT_MS,
    }),
    instanceId: unsetIfEmpty(v.HERALD_INSTANCE_ID),
    logLevel: v.LOG_LEVEL,
    trustProxy: v.TRUST_PROXY,
    maxBodyBytes: v.MAX_BODY_BYTES,
    requestBody: Object.freeze({ timeoutMs: v.REQUEST_BODY_TIMEOUT_MS, minBytesPerSec: v.REQUEST_BODY_MIN_BYTES_PER_SEC }),
    rateLimits: Object.freeze({
      publicPerMin: v.RATE_LIMIT_PUBLIC_API_PER_MIN,
      webhookPerMin: v.RATE_LIMIT_WEBHOOK_PER_MIN,
      sandboxPerMin: v.PARTNER_SANDBOX_RATE_LIMIT_PER_MINUTE,
      partnerPerMin: v.RATE_LIMIT_PARTNER_PER_MIN,
    }),
    requestLogRetentionDays: v.REQUEST_LOG_RETENTION_DAYS,
    requestLogFlushMs: v.REQUEST_LOG_FLUSH_MS,
    backupKeep: v.BACKUP_KEEP,
    backupDeadlineMinutesPerGb: v.BACKUP_DEADLINE_MINUTES_PER_GB,
    jobsEnabled: v.JOBS_ENABLED,
    jobsDisabled: Object.freeze(v.JOBS_DISABLED as string[]),
    jobSchedules: Object.freeze(
      Object.fromEntries(
        (v.JOB_SCHEDULES as string)
          .split(";")
          .filter(Boolean)
          .map((pair) => [pair.slice(0, pair.indexOf("=")).trim(), pair.slice(pair.indexOf("=") + 1).trim()]),
      ),
    ),
    metricsPublic: v.METRICS_PUBLIC,
    shutdownDrainDelayMs: v.SHUTDOWN_DRAIN_DELAY_MS,
    shutdownGraceMs: v.SHUTDOWN_GRACE_MS,
    masterKey: v.HERALD_MASTER_KEY,
    adminToken: v.ADMIN_TOKEN,
    adminSessionTtlSeconds: v.ADMIN_SESSION_TTL_SECONDS,
    described: Object.freeze(describeConfig(env)),
    retired: Object.freeze(retiredVarsSet(env)),
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
      lpWallets: Object.freeze(v.LP_WALLETS as string[]),
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
    readiness: Object.freeze({
      noiseMaxPercent: Number(v.READINESS_403_NOISE_MAX_PERCENT),
      noiseMaxPerHour: v.READINESS_403_MAX_PER_HOUR,
      probeCron: v.SYNTHETIC_PROBE_CRON,
      probeTimeoutMs: v.SYNTHETIC_PROBE_TIMEOUT_MS,
      probeRetentionDays: v.SYNTHETIC_PROBE_RETENTION_DAYS,
    }),
    linkInbox: Object.freeze({
      webhookUrls: Object.freeze(v.LINK_INBOX_WEBHOOK_URLS as string[]),
      messengerChatId: unsetIfEmpty(v.LINK_INBOX_MESSENGER_CHAT_ID) ?? null,
      cooldownSeconds: v.LINK_INBOX_COOLDOWN_SECONDS,
      maxAttempts: v.LINK_INBOX_MAX_ATTEMPTS,
      retryBaseSeconds: v.LINK_INBOX_RETRY_BASE_SECONDS,
      timeoutMs: v.LINK_INBOX_TIMEOUT_MS,
      cron: v.LINK_INBOX_CRON,
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
    messenger: Object.freeze({
      botToken: unsetIfEmpty(v.MESSENGER_BOT_TOKEN),
      webhookSecret: unsetIfEmpty(v.MESSENGER_WEBHOOK_SECRET),
      botApiBase: v.MESSENGER_BOT_API_BASE,
      initDataMaxAgeSeconds: v.MESSENGER_INIT_DATA_MAX_AGE_SECONDS,
      initDataMode: v.MESSENGER_INIT_DATA_MODE,
      ed25519Keys: v.MESSENGER_INIT_DATA_ED25519_KEYS,
      salutesPartner: unsetIfEmpty(v.MESSENGER_SALUTES_PARTNER),
      botUsername: unsetIfEmpty(v.MESSENGER_BOT_USERNAME),
      miniAppPath: v.MESSENGER_MINI_APP_PATH,
      miniAppUrl: unsetIfEmpty(v.MESSENGER_MINI_APP_URL),
      initDataMaxFutureSkewSeconds: v.MESSENGER_INIT_DATA_MAX_FUTURE_SKEW_SECONDS,
      rateLimits: Object.freeze({
        playerPerMin: v.MESSENGER_RATE_LIMIT_PLAYER_PER_MIN,
        ipPerMin: v.MESSENGER_RATE_LIMIT_IP_PER_MIN,
        initDataFailuresPerMin: v.MESSENGER_RATE_LIMIT_INIT_DATA_FAILURES_PER_MIN,
        webhookUnauthorizedPerMin: v.MESSENGER_RATE_LIMIT_WEBHOOK_UNAUTHORIZED_PER_MIN,
      }),
    }),
  });
}

/** The effective configuration by variable name, secrets masked: what `herald config` prints. */
// A type alias, not an interface: the CLI prints rows as plain records.

/** The retired variables this environment still sets, each with what to do instead (src/config/vars-instances.ts RETIRED_VARS). */
export function retiredVarsSet(env: Env = process.env): Array<{ name: string; note: string }> {
  return Object.entries(RETIRED_VARS)
    .filter(([name]) => env[name] !== undefined)
    .map(([name, note]) => ({ name, note }));
}

export function describeConfig(env: Env = process.env): ConfigRow[] {
  return (Object.entries(CONFIG_VARS) as [string, VarSpec][]).map(([name, spec]) => {
    const fromEnv = env[name] !== undefined;
    const fallback = (typeof spec.fallback === "function" ? spec.fallback(env) : spec.fallback) ?? "";
    const raw = env[name] ?? fallback;
    const secret = spec.secret === true;
    return { name, value: secret && raw ? "****" : raw, source: fromEnv ? "env" : "default", doc: spec.doc, differs: fromEnv && raw !== fallback, secret };
  });
}
