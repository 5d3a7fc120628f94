// Every environment variable Herald reads, declared once: its name, kind, default, doc and whether it is secret, at
// its place in Config (src/config/var-spec.ts says how). loadConfig() (src/config/index.ts) parses this tree into the
// frozen Config; the README table, `herald config` and the console's config page list CONFIG_VARS, its variables in
// this order.
import { INSTANCE_VARS } from "./vars-instances";
import { MESSENGER_VARS } from "./vars-messenger";
import { CHAIN_VARS } from "./vars-chain";
import { OPS_VARS } from "./vars-ops";
import { REQUEST_BODY_VARS } from "./vars-requests";
import { bool, decimal, HEX_OR_BASE64_KEY, int, list, oneOf, text, url, v, type Var, type VarNameOf, type VarTree, varsOf } from "./var-spec";

export const CONFIG_SCHEMA = {
  nodeEnv: v("NODE_ENV", {
    kind: oneOf("development", "test", "production"),
    fallback: "development",
    doc: "Runtime mode; production refuses unsafe defaults (it requires HERALD_MASTER_KEY and an https PUBLIC_BASE_URL), marks the operator session cookies Secure and sends Strict-Transport-Security on every answer.",
  }),
  port: v("PORT", { kind: int(0, 65535), fallback: "3000", doc: "TCP port to listen on (0 = any free port)." }),
  host: v("HOST", { kind: text(/^[\w.:-]+$/, "a hostname or IP address"), fallback: "0.0.0.0", doc: "Address to bind." }),
  publicBaseUrl: v("PUBLIC_BASE_URL", {
    kind: url,
    fallback: (env) => `http://localhost:${env.PORT ?? "3000"}`,
    fallbackDoc: "`http://localhost:$PORT`",
    doc: "The public {base_url} used in links and short URLs. Required with NODE_ENV=production, and https there (the TLS proxy's address): production refuses to start otherwise.",
  }),
  dbPath: v("HERALD_DB_PATH", {
    kind: text(/^.+$/, "a file path"),
    fallback: "./data/herald.db",
    doc: "SQLite database file (WAL mode); its folder is created if missing.",
  }),
  ...INSTANCE_VARS,
  logLevel: v("LOG_LEVEL", {
    kind: oneOf("debug", "info", "warn", "error", "silent"),
    fallback: "info",
    doc: "Lowest log level written (JSON lines on stdout).",
  }),
  trustProxy: v("TRUST_PROXY", {
    kind: bool,
    fallback: "0",
    doc: "Take the client IP from the rightmost X-Forwarded-For entry (the one your proxy appends); only behind exactly one proxy you run.",
  }),
  ...REQUEST_BODY_VARS,
  rateLimits: {
    publicPerMin: v("RATE_LIMIT_PUBLIC_API_PER_MIN", {
      kind: int(0, 1_000_000),
      fallback: "90",
      doc: "Requests per IP per minute to the routes that take no credential: public, status, transparency, audio-share, the developer portal and API reference, and the partner catalogs served without a key (errors.json, webhooks/event-types); 0 = off.",
    }),
    webhookPerMin: v("RATE_LIMIT_WEBHOOK_PER_MIN", {
      kind: int(0, 1_000_000),
      fallback: "120",
      doc: "Partner webhook-route requests per key per minute (0 = off).",
    }),
    sandboxPerMin: v("PARTNER_SANDBOX_RATE_LIMIT_PER_MINUTE", {
      kind: int(0, 1_000_000),
      fallback: "30",
      doc: "Requests per sandbox key per minute (0 = off).",
    }),
    partnerPerMin: v("RATE_LIMIT_PARTNER_PER_MIN", {
      kind: int(0, 10_000_000),
      fallback: "6000",
      doc: "Other signed live partner requests per key per minute; also the per-address bound on partner requests refused with 401 (0 = off).",
    }),
  },
  requestLogRetentionDays: v("REQUEST_LOG_RETENTION_DAYS", {
    kind: int(1, 3650),
    fallback: "14",
    doc: "Days of request_log kept before the prune job deletes them (in bounded batches; a backlog goes over several hourly runs).",
  }),
  requestLogFlushMs: v("REQUEST_LOG_FLUSH_MS", {
    kind: int(10, 60_000),
    fallback: "1000",
    doc: "How often buffered request-log rows are written in one batch.",
  }),
  backupKeep: v("BACKUP_KEEP", {
    kind: int(1, 1000),
    fallback: "7",
    doc: "On-demand backups kept in <db dir>/backups; after each successful run the oldest beyond this count are deleted (audited).",
  }),
  /** BACKUP_DEADLINE_MINUTES_PER_GB: a backup's deadline is 60 s plus this for each GB of the database (src/ops/backups/backup.ts). */
  backupDeadlineMinutesPerGb: v("BACKUP_DEADLINE_MINUTES_PER_GB", {
    kind: int(1, 1440),
    fallback: "2",
    doc: "A backup running longer than 60 s plus this many minutes per GB of the database file (and its WAL) is stopped: its worker ended, its temp copy removed, the run recorded as failed.",
  }),
  jobsEnabled: v("JOBS_ENABLED", { kind: bool, fallback: "1", doc: "Start the in-process Croner jobs with `serve`." }),
  jobsDisabled: v("JOBS_DISABLED", { kind: list, fallback: "", doc: "Comma list of job names not to schedule." }),
  metricsPublic: v("METRICS_PUBLIC", { kind: bool, fallback: "0", doc: "Serve /metrics without an admin token." }),
  masterKey: v("HERALD_MASTER_KEY", {
    kind: HEX_OR_BASE64_KEY,
    secret: true,
    doc: "Key that encrypts partner and webhook secrets at rest (AES-256-GCM). Required in production; elsewhere generated into <db dir>/master.key (mode 0600).",
  }),
  adminToken: v("ADMIN_TOKEN", {
    kind: text(/^[\x21-\x7e]{32,256}$/, "32–256 visible ASCII characters"),
    secret: true,
    doc: "Bootstraps one operator token (Authorization: Bearer) at start; stored only as a SHA-256 hash.",
  }),
  adminSessionTtlSeconds: v("ADMIN_SESSION_TTL_SECONDS", {
    kind: int(300, 30 * 86_400),
    fallback: "28800",
    doc: "Lifetime of an operator browser session from POST /admin/sign-in (cookie Max-Age and stored expiry).",
  }),
  idempotencyRequired: v("IDEMPOTENCY_REQUIRED", { kind: bool, fallback: "1", doc: "Require Idempotency-Key on partner mutations." }),
  idempotencyTtlHours: v("IDEMPOTENCY_TTL_HOURS", {
    kind: int(1, 720),
    fallback: "24",
    doc: "How long idempotency records (and their stored responses) are kept.",
  }),
  signatureSkewSeconds: v("SIGNATURE_SKEW_SECONDS", {
    kind: int(30, 3600),
    fallback: "300",
    doc: "Accepted clock skew of X-Partner-Timestamp; nonces are kept for twice this and a second.",
  }),
  sandboxNonceRequired: v("SANDBOX_NONCE_REQUIRED", {
    kind: bool,
    fallback: "0",
    doc: "Require X-Partner-Nonce on sandbox mutations too (the spec's sandbox policy: optional unless required globally).",
  }),
  bootstrapCredentials: v("BOOTSTRAP_CREDENTIALS", {
    kind: bool,
    fallback: "1",
    doc: "On an empty database outside production, create and print a live key, a sandbox key and an admin token once.",
  }),
  webhooks: {
    maxAttempts: v("WEBHOOK_MAX_ATTEMPTS", { kind: int(1, 50), fallback: "10", doc: "Delivery attempts before a delivery is dead-lettered." }),
    timeoutSeconds: v("WEBHOOK_TIMEOUT_SECONDS", { kind: int(1, 120), fallback: "15", doc: "Per-attempt timeout (connect + response)." }),
    retryBaseSeconds: v("WEBHOOK_RETRY_BASE_SECONDS", {
      kind: int(1, 86_400),
      fallback: "180",
      doc: "First retry delay; doubles per attempt (capped), so the default schedule spans about 21 h.",
    }),
    retryMaxSeconds: v("WEBHOOK_RETRY_MAX_SECONDS", { kind: int(1, 7 * 86_400), fallback: "28800", doc: "Largest delay between two attempts." }),
    retryJitterPct: v("WEBHOOK_RETRY_JITTER_PCT", { kind: int(0, 100), fallback: "20", doc: "Random ± spread applied to each retry delay, in percent." }),
    concurrency: v("WEBHOOK_CONCURRENCY", { kind: int(1, 1024), fallback: "16", doc: "Deliveries in flight at once (per process)." }),
    perTargetConcurrency: v("WEBHOOK_PER_TARGET_CONCURRENCY", { kind: int(1, 1024), fallback: "4", doc: "Deliveries in flight at once to one receiver host." }),
    allowPrivateTargets: v("WEBHOOK_ALLOW_PRIVATE_TARGETS", {
      kind: bool,
      fallback: "0",
      doc: "Allow receivers on private, loopback and link-local addresses (tests, development). Never in production.",
    }),
    disableAfterHours: v("WEBHOOK_DISABLE_AFTER_HOURS", {
      kind: int(1, 8760),
      fallback: "120",
      doc: "A webhook whose deliveries have all failed for this long is disabled.",
    }),
    retentionDays: v("WEBHOOK_RETENTION_DAYS", {
      kind: int(1, 3650),
      fallback: "30",
      doc: "Succeeded deliveries and their attempts are pruned after this; dead letters after 90 days.",
    }),
  },
  salutes: {
    decimals: v("SALUTES_DECIMALS", {
      kind: int(0, 6),
      fallback: "2",
      doc: "Decimal places of salutes amounts; stored exactly as integer minor units. Recorded at the first start: a start with another value is refused.",
    }),
    maxAmount: v("SALUTES_MAX_AMOUNT", {
      kind: int(1, 1_000_000_000_000),
      fallback: "1000000000",
      doc: "Largest single credit, debit or conversion, in whole salutes.",
    }),
    conversion: {
      enabled: v("SALUTES_CONVERSION_ENABLED", { kind: bool, fallback: "0", doc: "Whether POST /api/salutes/convert is open." }),
      rate: v("SALUTES_CONVERSION_RATE", { kind: decimal, fallback: "0.01", doc: "Target units per salute (exact decimal)." }),
      target: v("SALUTES_CONVERSION_TARGET", {
        kind: text(/^[a-z0-9_-]{1,32}$/, "a short lower-case name"),
        fallback: "token",
        doc: "What salutes convert into (reported in the policy and each conversion).",
      }),
      min: v("SALUTES_CONVERSION_MIN", { kind: decimal, fallback: "10", doc: "Smallest conversion, in salutes." }),
      max: v("SALUTES_CONVERSION_MAX", { kind: decimal, fallback: "10000", doc: "Largest single conversion, in salutes." }),
      dailyCap: v("SALUTES_CONVERSION_DAILY_CAP", { kind: decimal, fallback: "50000", doc: "Most salutes one user may convert per UTC day." }),
    },
  },
  walletReverifyDays: v("WALLET_REVERIFY_DAYS", { kind: int(1, 3650), fallback: "30", doc: "A wallet verification older than this is reported as stale." }),
  /** Solana chain data (src/chain; docs/chain.md). */
  chain: CHAIN_VARS,
  ...OPS_VARS,
  /** Audio-share links (src/audio-share; docs/audio-share.md). */
  audioShare: {
    allowedHosts: v("AUDIO_SHARE_ALLOWED_HOSTS", {
      kind: list,
      fallback: "",
      doc: "Comma list of destination hosts share links may point at, besides PUBLIC_BASE_URL's host: `example.com`, `*.example.com` (subdomains only), `example.com:8443`, or an IP literal.",
    }),
    deniedHosts: v("AUDIO_SHARE_DENIED_HOSTS", {
      kind: list,
      fallback: "",
      doc: "Comma list of destination hosts always refused (same syntax; matches any port); wins over the allow list and the base host.",
    }),
    trackAuth: v("AUDIO_SHARE_TRACK_AUTH", {
      kind: oneOf("off", "optional", "required"),
      fallback: "optional",
      doc: "Bearer auth on POST /api/public/audio-share-links/track: off (ignored), optional (a bearer, if sent, must be valid), required.",
    }),
    trackDedupeSeconds: v("AUDIO_SHARE_TRACK_DEDUPE_SECONDS", {
      kind: int(1, 7 * 86_400),
      fallback: "3600",
      doc: "A repeated track client_event_id inside this window is answered replay_reason=in_window_duplicate and not counted.",
    }),
    defaultExpiresSeconds: v("AUDIO_SHARE_DEFAULT_EXPIRES_SECONDS", {
      kind: int(60, 30 * 86_400),
      fallback: "604800",
      doc: "Lifetime of a short link built without expires_in (expires_in itself is bounded to 60 s … 30 days).",
    }),
    signingKey: v("AUDIO_SHARE_SIGNING_KEY", {
      kind: HEX_OR_BASE64_KEY,
      secret: true,
      doc: "HMAC key of signed short links and of the daily click-hash salt. Unset: derived from the master key (HMAC of a fixed label).",
    }),
  },
  /** The messenger mini-app (src/messenger; docs/messenger.md). */
  messenger: MESSENGER_VARS,
  shutdownGraceMs: v("SHUTDOWN_GRACE_MS", {
    kind: int(0, 600_000),
    fallback: "10000",
    doc: "How long SIGTERM waits for in-flight requests before closing them.",
  }),
} satisfies VarTree;

/** A variable's environment name. */
export type ConfigVar = VarNameOf<typeof CONFIG_SCHEMA>;

/** Every variable by its environment name, in declaration order. */
export const CONFIG_VARS = Object.freeze(Object.fromEntries(varsOf(CONFIG_SCHEMA).map((leaf) => [leaf.name, leaf]))) as Readonly<Record<ConfigVar, Var>>;
