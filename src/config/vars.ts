// Every environment variable Herald reads: its type, default and meaning. Parsed only by src/config/index.ts.
import { INSTANCE_VARS } from "./vars-instances";
import { MESSENGER_VARS } from "./vars-messenger";
import { REQUEST_BODY_VARS } from "./vars-requests";

export type Kind =
  | { type: "int"; min: number; max: number }
  | { type: "string"; pattern?: RegExp; allowed?: string }
  | { type: "enum"; values: readonly string[] }
  | { type: "bool" }
  | { type: "url" }
  | { type: "list" };

export interface VarSpec {
  kind: Kind;
  /** The default as the string a user would write; undefined = unset. */
  fallback?: string | ((env: Record<string, string | undefined>) => string);
  secret?: boolean;
  doc: string;
}

export const int = (min: number, max: number): Kind => ({ type: "int", min, max });
const decimal: Kind = { type: "string", pattern: /^\d{1,15}(\.\d{1,9})?$/, allowed: "a non-negative decimal number such as 0.05" };
export const BASE58_ADDRESS = /^[1-9A-HJ-NP-Za-km-z]{32,44}$/;
// The optional chain addresses also accept "" (VAR= in an env file), which means unset.
const OPTIONAL_ADDRESS = /^([1-9A-HJ-NP-Za-km-z]{32,44})?$/;
const ADDRESS_OR_NONE = /^(none|[1-9A-HJ-NP-Za-km-z]{32,44})?$/;
export const unsetIfEmpty = (v: unknown): string | undefined => (typeof v === "string" && v !== "" ? v : undefined);
const CRON: Kind = {
  type: "string",
  pattern: /^[0-9*/,?LW#A-Za-z-]+( [0-9*/,?LW#A-Za-z-]+){4,6}$/,
  allowed: "a Croner pattern (seconds first, e.g. 0 */10 * * * *)",
};

export const CONFIG_VARS = {
  NODE_ENV: {
    kind: { type: "enum", values: ["development", "test", "production"] },
    fallback: "development",
    doc: "Runtime mode; production refuses unsafe defaults (it requires HERALD_MASTER_KEY and an https PUBLIC_BASE_URL), marks the operator session cookies Secure and sends Strict-Transport-Security on every answer.",
  },
  PORT: { kind: int(0, 65535), fallback: "3000", doc: "TCP port to listen on (0 = any free port)." },
  HOST: { kind: { type: "string", pattern: /^[\w.:-]+$/, allowed: "a hostname or IP address" }, fallback: "0.0.0.0", doc: "Address to bind." },
  PUBLIC_BASE_URL: {
    kind: { type: "url" },
    fallback: (env) => `http://localhost:${env.PORT ?? "3000"}`,
    doc: "The public {base_url} used in links and short URLs. Required with NODE_ENV=production, and https there (the TLS proxy's address): production refuses to start otherwise.",
  },
  HERALD_DB_PATH: {
    kind: { type: "string", pattern: /^.+$/, allowed: "a file path" },
    fallback: "./data/herald.db",
    doc: "SQLite database file (WAL mode); its folder is created if missing.",
  },
  ...INSTANCE_VARS,
  LOG_LEVEL: {
    kind: { type: "enum", values: ["debug", "info", "warn", "error", "silent"] },
    fallback: "info",
    doc: "Lowest log level written (JSON lines on stdout).",
  },
  TRUST_PROXY: {
    kind: { type: "bool" },
    fallback: "0",
    doc: "Take the client IP from the rightmost X-Forwarded-For entry (the one your proxy appends); only behind exactly one proxy you run.",
  },
  ...REQUEST_BODY_VARS,
  RATE_LIMIT_PUBLIC_API_PER_MIN: { kind: int(0, 1_000_000), fallback: "90", doc: "Public, transparency and audio-share requests per IP per minute (0 = off)." },
  RATE_LIMIT_WEBHOOK_PER_MIN: { kind: int(0, 1_000_000), fallback: "120", doc: "Partner webhook-route requests per key per minute (0 = off)." },
  PARTNER_SANDBOX_RATE_LIMIT_PER_MINUTE: { kind: int(0, 1_000_000), fallback: "30", doc: "Requests per sandbox key per minute (0 = off)." },
  RATE_LIMIT_PARTNER_PER_MIN: { kind: int(0, 10_000_000), fallback: "6000", doc: "Other signed live partner requests per key per minute (0 = off)." },
  REQUEST_LOG_RETENTION_DAYS: {
    kind: int(1, 3650),
    fallback: "14",
    doc: "Days of request_log kept before the prune job deletes them (in bounded batches; a backlog goes over several hourly runs).",
  },
  REQUEST_LOG_FLUSH_MS: { kind: int(10, 60_000), fallback: "1000", doc: "How often buffered request-log rows are written in one batch." },
  BACKUP_KEEP: {
    kind: int(1, 1000),
    fallback: "7",
    doc: "On-demand backups kept in <db dir>/backups; after each successful run the oldest beyond this count are deleted (audited).",
  },
  BACKUP_DEADLINE_MINUTES_PER_GB: {
    kind: int(1, 1440),
    fallback: "2",
    doc: "A backup running longer than 60 s plus this many minutes per GB of the database file (and its WAL) is stopped: its worker ended, its temp copy removed, the run recorded as failed.",
  },
  JOBS_ENABLED: { kind: { type: "bool" }, fallback: "1", doc: "Start the in-process Croner jobs with `serve`." },
  JOBS_DISABLED: { kind: { type: "list" }, fallback: "", doc: "Comma list of job names not to schedule." },

  METRICS_PUBLIC: { kind: { type: "bool" }, fallback: "0", doc: "Serve /metrics without an admin token." },
  HERALD_MASTER_KEY: {
    kind: { type: "string", pattern: /^([0-9a-fA-F]{64}|[A-Za-z0-9+/]{43}=)$/, allowed: "32 bytes as 64 hex characters or base64" },
    secret: true,
    doc: "Key that encrypts partner and webhook secrets at rest (AES-256-GCM). Required in production; elsewhere generated into <db dir>/master.key (mode 0600).",
  },
  ADMIN_TOKEN: {
    kind: { type: "string", pattern: /^[\x21-\x7e]{32,256}$/, allowed: "32–256 visible ASCII characters" },
    secret: true,
    doc: "Bootstraps one operator token (Authorization: Bearer) at start; stored only as a SHA-256 hash.",
  },
  ADMIN_SESSION_TTL_SECONDS: {
    kind: int(300, 30 * 86_400),
    fallback: "28800",
    doc: "Lifetime of an operator browser session from POST /admin/sign-in (cookie Max-Age and stored expiry).",
  },
  IDEMPOTENCY_REQUIRED: { kind: { type: "bool" }, fallback: "1", doc: "Require Idempotency-Key on partner mutations." },
  IDEMPOTENCY_TTL_HOURS: { kind: int(1, 720), fallback: "24", doc: "How long idempotency records (and their stored responses) are kept." },
  SIGNATURE_SKEW_SECONDS: { kind: int(30, 3600), fallback: "300", doc: "Accepted clock skew of X-Partner-Timestamp; nonces are kept for twice this." },
  SANDBOX_NONCE_REQUIRED: {
    kind: { type: "bool" },
    fallback: "0",
    doc: "Require X-Partner-Nonce on sandbox mutations too (the spec's sandbox policy: optional unless required globally).",
  },
  BOOTSTRAP_CREDENTIALS: {
    kind: { type: "bool" },
    fallback: "1",
    doc: "On an empty database outside production, create and print a live key, a sandbox key and an admin token once.",
  },
  WEBHOOK_MAX_ATTEMPTS: { kind: int(1, 50), fallback: "10", doc: "Delivery attempts before a delivery is dead-lettered." },
  WEBHOOK_TIMEOUT_SECONDS: { kind: int(1, 120), fallback: "15", doc: "Per-attempt timeout (connect + response)." },
  WEBHOOK_RETRY_BASE_SECONDS: {
    kind: int(1, 86_400),
    fallback: "180",
    doc: "First retry delay; doubles per attempt (capped), so the default schedule spans about 21 h.",
  },
  WEBHOOK_RETRY_MAX_SECONDS: { kind: int(1, 7 * 86_400), fallback: "28800", doc: "Largest delay between two attempts." },
  WEBHOOK_RETRY_JITTER_PCT: { kind: int(0, 100), fallback: "20", doc: "Random ± spread applied to each retry delay, in percent." },
  WEBHOOK_CONCURRENCY: { kind: int(1, 1024), fallback: "16", doc: "Deliveries in flight at once (per process)." },
  WEBHOOK_PER_TARGET_CONCURRENCY: { kind: int(1, 1024), fallback: "4", doc: "Deliveries in flight at once to one receiver host." },
  WEBHOOK_ALLOW_PRIVATE_TARGETS: {
    kind: { type: "bool" },
    fallback: "0",
    doc: "Allow receivers on private, loopback and link-local addresses (tests, development). Never in production.",
  },
  WEBHOOK_DISABLE_AFTER_HOURS: { kind: int(1, 8760), fallback: "120", doc: "A webhook whose deliveries have all failed for this long is disabled." },
  WEBHOOK_RETENTION_DAYS: {
    kind: int(1, 3650),
    fallback: "30",
    doc: "Succeeded deliveries and their attempts are pruned after this; dead letters after 90 days.",
  },
  SALUTES_DECIMALS: {
    kind: int(0, 6),
    fallback: "2",
    doc: "Decimal places of salutes amounts; stored exactly as integer minor units. Recorded at the first start: a start with another value is refused.",
  },
  SALUTES_MAX_AMOUNT: { kind: int(1, 1_000_000_000_000), fallback: "1000000000", doc: "Largest single credit, debit or conversion, in whole salutes." },
  SALUTES_CONVERSION_ENABLED: { kind: { type: "bool" }, fallback: "0", doc: "Whether POST /api/salutes/convert is open." },
  SALUTES_CONVERSION_RATE: { kind: decimal, fallback: "0.01", doc: "Target units per salute (exact decimal)." },
  SALUTES_CONVERSION_TARGET: {
    kind: { type: "string", pattern: /^[a-z0-9_-]{1,32}$/, allowed: "a short lower-case name" },
    fallback: "token",
    doc: "What salutes convert into (reported in the policy and each conversion).",
  },
  SALUTES_CONVERSION_MIN: { kind: decimal, fallback: "10", doc: "Smallest conversion, in salutes." },
  SALUTES_CONVERSION_MAX: { kind: decimal, fallback: "10000", doc: "Largest single conversion, in salutes." },
  SALUTES_CONVERSION_DAILY_CAP: { kind: decimal, fallback: "50000", doc: "Most salutes one user may convert per UTC day." },
  WALLET_REVERIFY_DAYS: { kind: int(1, 3650), fallback: "30", doc: "A wallet verification older than this is reported as stale." },
  // Solana chain data (src/chain; docs/chain.md). No TOKEN_MINT = every chain-backed answer says not_configured.
  SOLANA_RPC_URLS: {
    kind: { type: "list" },
    fallback: "",
    secret: true,
    doc: "Comma list of Solana JSON-RPC URLs, tried in order (failover); may carry API keys, so it is masked and only the host is ever published.",
  },
  TOKEN_MINT: {
    kind: { type: "string", pattern: OPTIONAL_ADDRESS, allowed: "a base58 Solana address" },
    doc: "The token's mint address. Unset: the chain jobs do nothing and chain routes answer not_configured.",
  },
  TREASURY_WALLETS: {
    kind: { type: "list" },
    fallback: "",
    doc: "Comma list of treasury owner wallets; their token balance is excluded from circulating supply.",
  },
  RESERVE_WALLETS: {
    kind: { type: "list" },
    fallback: "",
    doc: "Comma list of reserve owner wallets; their token balance is excluded from circulating supply.",
  },
  LP_WALLETS: {
    kind: { type: "list" },
    fallback: "",
    doc: "Comma list of liquidity-pool owner wallets; the transaction sync and the audit track them (trades, not treasury movements), and their balance stays in circulating supply.",
  },
  EXPECTED_MINT_AUTHORITY: {
    kind: { type: "string", pattern: ADDRESS_OR_NONE, allowed: "a base58 address or none" },
    doc: "The mint authority the mint should have (none = renounced); unset = no expectation, review only.",
  },
  EXPECTED_FREEZE_AUTHORITY: {
    kind: { type: "string", pattern: ADDRESS_OR_NONE, allowed: "a base58 address or none" },
    doc: "The freeze authority the mint should have (none = renounced); unset = no expectation, review only.",
  },
  LP_MINT: {
    kind: { type: "string", pattern: OPTIONAL_ADDRESS, allowed: "a base58 Solana address" },
    doc: "LP token mint; when set, wallet-info reports each wallet's LP amount.",
  },
  SOLANA_RPC_TIMEOUT_MS: { kind: int(100, 120_000), fallback: "10000", doc: "Per-call RPC timeout (one attempt against one URL)." },
  SOLANA_RPC_SCAN_TIMEOUT_MS: {
    kind: int(1000, 3_600_000),
    fallback: "300000",
    doc: "Timeout of the holders scan (getProgramAccounts streams every token account of the mint).",
  },
  SOLANA_RPC_RETRIES: {
    kind: int(0, 10),
    fallback: "2",
    doc: "Retries per URL on 429, 5xx, timeouts and malformed replies before failing over to the next URL.",
  },
  SOLANA_RPC_BACKOFF_MS: {
    kind: int(0, 60_000),
    fallback: "250",
    doc: "First retry delay; doubles per retry with jitter, capped at 30 s (a 429's Retry-After is honoured up to the cap).",
  },
  SOLANA_RPC_BREAKER_THRESHOLD: {
    kind: int(1, 1000),
    fallback: "5",
    doc: "Consecutive failed attempts that open a URL's circuit breaker (calls skip it while open).",
  },
  SOLANA_RPC_BREAKER_COOLDOWN_SECONDS: {
    kind: int(1, 86_400),
    fallback: "30",
    doc: "How long an open breaker skips its URL before one trial call is let through.",
  },
  CHAIN_TX_BACKFILL_LIMIT: {
    kind: int(1, 100_000),
    fallback: "1000",
    doc: "Signatures fetched per tracked address on its first transaction sync (older history is not backfilled).",
  },
  CHAIN_TX_MAX_PER_RUN: {
    kind: int(1, 1_000_000),
    fallback: "5000",
    doc: "Most new signatures one transaction-sync run stores per address; a larger gap is recorded as gap_detected.",
  },
  CHAIN_TOKEN_SNAPSHOT_CRON: { kind: CRON, fallback: "0 */10 * * * *", doc: "Schedule of the token-snapshot job (supply, treasury, reserve, circulating)." },
  CHAIN_HOLDERS_SNAPSHOT_CRON: { kind: CRON, fallback: "0 7 * * * *", doc: "Schedule of the holders-snapshot job (getProgramAccounts scan, concentration)." },
  CHAIN_MINT_AUTHORITY_CRON: { kind: CRON, fallback: "0 13 */6 * * *", doc: "Schedule of the mint-authority-snapshot job." },
  CHAIN_TRANSACTION_SYNC_CRON: { kind: CRON, fallback: "30 */2 * * * *", doc: "Schedule of the transaction-sync job." },
  CHAIN_HOLDER_GROWTH_CRON: {
    kind: CRON,
    fallback: "0 15 0 * * *",
    doc: "Schedule of the holder-growth job (one point per run from the latest holders snapshot).",
  },
  CHAIN_STALE_HOLDER_CACHE_HOURS: { kind: int(1, 8760), fallback: "3", doc: "Hours after which the holders snapshot (holder-cache proof) is stale." },
  CHAIN_STALE_HOLDER_GROWTH_HOURS: { kind: int(1, 8760), fallback: "26", doc: "Hours after which the holder-growth proof is stale." },
  CHAIN_STALE_PUBLIC_STATS_HOURS: { kind: int(1, 8760), fallback: "1", doc: "Hours after which the public-stats cache (token snapshot) is stale." },
  CHAIN_STALE_TOKEN_DISTRIBUTION_HOURS: { kind: int(1, 8760), fallback: "3", doc: "Hours after which the token-distribution (concentration) proof is stale." },
  CHAIN_STALE_MINT_AUTHORITIES_HOURS: { kind: int(1, 8760), fallback: "13", doc: "Hours after which the mint-authorities proof is stale." },
  CHAIN_STALE_TRANSACTION_SYNC_HOURS: { kind: int(1, 8760), fallback: "1", doc: "Hours after which the transaction-sync proof is stale." },
  // Public status (src/status; docs/status.md).
  STATUS_POLICY_PATH: {
    kind: { type: "string", pattern: /^.*$/, allowed: "a file path" },
    doc: "Status policy file (YAML or JSON): thresholds per check. Unset: the built-in default; unreadable or invalid: the default too, and GET /api/public/system-status/policy reports loaded=false with the error.",
  },
  STATUS_SNAPSHOT_CRON: {
    kind: CRON,
    fallback: "0 * * * * *",
    doc: "Schedule of the status-snapshot job (evaluates every check, stores a snapshot, opens and closes incidents).",
  },
  STATUS_SNAPSHOT_RETENTION_DAYS: {
    kind: int(91, 3650),
    fallback: "100",
    doc: "Days of status snapshots and incidents kept (uptime, the 90-day bars and the badges read them).",
  },
  // Operator readiness: 403 noise and synthetic probes (src/ops/readiness/service.ts, src/ops/readiness/probes.ts; docs/ops-readiness.md).
  READINESS_403_NOISE_MAX_PERCENT: {
    kind: { type: "string", pattern: /^(100(\.0{1,4})?|\d{1,2}(\.\d{1,4})?)$/, allowed: "a percentage from 0 to 100 with up to 4 decimals, e.g. 5 or 0.5" },
    fallback: "5",
    doc: "Readiness threshold of the 403 noise level: a window is within it while its 403s are at most this percent of its requests.",
  },
  READINESS_403_MAX_PER_HOUR: {
    kind: int(0, 1_000_000_000),
    fallback: "0",
    doc: "Second readiness threshold: at most this many 403s per hour on average over a window (0 = off; only the percentage applies).",
  },
  SYNTHETIC_PROBE_CRON: {
    kind: CRON,
    fallback: "20 */5 * * * *",
    doc: "Schedule of the synthetic-probes job, which calls Herald's own public endpoints over HTTP on its listening address (JOBS_DISABLED=synthetic-probes turns it off).",
  },
  SYNTHETIC_PROBE_TIMEOUT_MS: {
    kind: int(100, 60_000),
    fallback: "5000",
    doc: "Time limit of each synthetic probe request; a slower answer is recorded as a failed probe.",
  },
  SYNTHETIC_PROBE_RETENTION_DAYS: {
    kind: int(1, 3650),
    fallback: "90",
    doc: "Days of synthetic probe results kept; the probes job deletes older rows on each run.",
  },
  // Operator link inbox: chat notifications of incidents, alerts and preflight anomalies (src/ops/link-inbox/notify.ts; docs/ops-link-inbox.md).
  LINK_INBOX_WEBHOOK_URLS: {
    kind: { type: "list" },
    fallback: "",
    secret: true,
    doc: "Comma list of Slack/Discord-compatible incoming-webhook URLs the link inbox posts to; their paths are secrets, so the value is masked and only host + first path segment is ever stored or shown. Checked by the partner-webhook target policy (WEBHOOK_ALLOW_PRIVATE_TARGETS).",
  },
  LINK_INBOX_MESSENGER_CHAT_ID: {
    kind: { type: "string", pattern: /^(-?\d{1,16}|@[A-Za-z0-9_]{5,32})?$/, allowed: "a Telegram chat id (digits, negative for groups) or @channelusername" },
    fallback: "",
    doc: "Also post link-inbox messages to this Telegram chat through the messenger bot (sendMessage at MESSENGER_BOT_API_BASE); needs MESSENGER_BOT_TOKEN. Unset: chat webhooks only.",
  },
  LINK_INBOX_COOLDOWN_SECONDS: {
    kind: int(0, 7 * 86_400),
    fallback: "900",
    doc: "A new link-inbox message for the same issue and target within this many seconds is not sent (an event with skip_reason cooldown); resolutions are always sent. 0 = no cooldown.",
  },
  LINK_INBOX_MAX_ATTEMPTS: { kind: int(1, 50), fallback: "6", doc: "Link-inbox delivery attempts per message and target before it is dead." },
  LINK_INBOX_RETRY_BASE_SECONDS: {
    kind: int(1, 86_400),
    fallback: "30",
    doc: "First link-inbox retry delay; doubles per attempt, capped at one hour.",
  },
  LINK_INBOX_TIMEOUT_MS: { kind: int(100, 60_000), fallback: "5000", doc: "Time limit of each link-inbox POST; a slower answer is a timeout attempt." },
  LINK_INBOX_CRON: {
    kind: CRON,
    fallback: "*/5 * * * * *",
    doc: "Schedule of the link-inbox job: applies new alert runs (an alert that fires, escalates or resolves queues a notice), then sends due messages (JOBS_DISABLED=link-inbox turns it off).",
  },
  // Audio-share links (src/audio-share; docs/audio-share.md).
  AUDIO_SHARE_ALLOWED_HOSTS: {
    kind: { type: "list" },
    fallback: "",
    doc: "Comma list of destination hosts share links may point at, besides PUBLIC_BASE_URL's host: `example.com`, `*.example.com` (subdomains only), `example.com:8443`, or an IP literal.",
  },
  AUDIO_SHARE_DENIED_HOSTS: {
    kind: { type: "list" },
    fallback: "",
    doc: "Comma list of destination hosts always refused (same syntax; matches any port); wins over the allow list and the base host.",
  },
  AUDIO_SHARE_TRACK_AUTH: {
    kind: { type: "enum", values: ["off", "optional", "required"] },
    fallback: "optional",
    doc: "Bearer auth on POST /api/public/audio-share-links/track: off (ignored), optional (a bearer, if sent, must be valid), required.",
  },
  AUDIO_SHARE_TRACK_DEDUPE_SECONDS: {
    kind: int(1, 7 * 86_400),
    fallback: "3600",
    doc: "A repeated track client_event_id inside this window is answered replay_reason=in_window_duplicate and not counted.",
  },
  AUDIO_SHARE_DEFAULT_EXPIRES_SECONDS: {
    kind: int(60, 30 * 86_400),
    fallback: "604800",
    doc: "Lifetime of a short link built without expires_in (expires_in itself is bounded to 60 s … 30 days).",
  },
  AUDIO_SHARE_SIGNING_KEY: {
    kind: { type: "string", pattern: /^([0-9a-fA-F]{64}|[A-Za-z0-9+/]{43}=)$/, allowed: "32 bytes as 64 hex characters or base64" },
    secret: true,
    doc: "HMAC key of signed short links and of the daily click-hash salt. Unset: derived from the master key (HMAC of a fixed label).",
  },
  // Messenger mini-app (src/messenger; docs/messenger.md). No MESSENGER_BOT_TOKEN = every messenger route answers 503 messenger_not_configured.
  ...MESSENGER_VARS,
  SHUTDOWN_GRACE_MS: { kind: int(0, 600_000), fallback: "10000", doc: "How long SIGTERM waits for in-flight requests before closing them." },
} as const satisfies Record<string, VarSpec>;
