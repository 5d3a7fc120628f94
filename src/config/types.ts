// The typed configuration Herald runs with: built once by src/config/index.ts from the environment, frozen, passed in.

export interface Config {
  readonly nodeEnv: "development" | "test" | "production";
  readonly isProduction: boolean;
  readonly port: number;
  readonly host: string;
  readonly publicBaseUrl: string;
  readonly dbPath: string;
  /** Where the data lives: the SQLite file (dbPath), or PostgreSQL at `url` (DATABASE_URL). */
  readonly database: {
    readonly engine: "sqlite" | "postgres";
    readonly url: string | undefined;
    readonly poolMax: number;
    /** Grouped transactions' batches at once (DATABASE_BATCH_SLOTS; at most poolMax − 1). */
    readonly batchSlots: number;
    readonly statementTimeoutMs: number;
    readonly idleInTransactionTimeoutMs: number;
    /** Herald's own deadlines on PostgreSQL (docs/postgres.md "Deadlines"). */
    readonly connectTimeoutMs: number;
    readonly acquireTimeoutMs: number;
    readonly queryTimeoutMs: number;
    readonly transactionTimeoutMs: number;
  };
  readonly instanceId: string | undefined; // HERALD_INSTANCE_ID; undefined: made at start
  readonly logLevel: "debug" | "info" | "warn" | "error" | "silent";
  readonly trustProxy: boolean;
  readonly maxBodyBytes: number;
  /** How long a request body may take to arrive (src/http/body/body-deadline.ts): 408 request_timeout past it. */
  readonly requestBody: {
    readonly timeoutMs: number;
    readonly minBytesPerSec: number;
  };
  readonly rateLimits: {
    readonly publicPerMin: number;
    readonly webhookPerMin: number;
    readonly sandboxPerMin: number;
    readonly partnerPerMin: number;
  };
  readonly requestLogRetentionDays: number;
  readonly requestLogFlushMs: number;
  readonly backupKeep: number;
  /** BACKUP_DEADLINE_MINUTES_PER_GB: a backup's deadline is 60 s plus this for each GB of the database (src/ops/backups/backup.ts). */
  readonly backupDeadlineMinutesPerGb: number;
  readonly jobsEnabled: boolean;
  readonly jobsDisabled: readonly string[];
  /** JOB_SCHEDULES: job name → Croner pattern replacing the job's own. */
  readonly jobSchedules: Readonly<Record<string, string>>;
  readonly metricsPublic: boolean;
  readonly shutdownDrainDelayMs: number;
  readonly shutdownGraceMs: number;
  readonly masterKey: string | undefined;
  readonly adminToken: string | undefined;
  readonly adminSessionTtlSeconds: number;
  /** Every variable as `herald config` shows it (secrets masked), for the operators' config page. */
  readonly described: ReadonlyArray<ConfigRow>;
  /** Retired variables the environment still sets (src/config/vars-instances.ts RETIRED_VARS): warned about at start. */
  readonly retired: ReadonlyArray<{ readonly name: string; readonly note: string }>;
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
    /** Liquidity-pool owner wallets: synced and audited as trades (docs/transparency.md), not excluded from supply. */
    readonly lpWallets: readonly string[];
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
  /** Operator readiness: the 403-noise thresholds and the synthetic probes (docs/ops-readiness.md). */
  readonly readiness: {
    readonly noiseMaxPercent: number;
    /** 0 = off. */
    readonly noiseMaxPerHour: number;
    readonly probeCron: string;
    readonly probeTimeoutMs: number;
    readonly probeRetentionDays: number;
  };
  /** Operator link inbox (docs/ops-link-inbox.md). The URLs are secrets: never log or publish them whole. */
  readonly linkInbox: {
    readonly webhookUrls: readonly string[];
    /** A Telegram chat the messenger bot posts link-inbox messages to; null: none. */
    readonly messengerChatId: string | null;
    readonly cooldownSeconds: number;
    readonly maxAttempts: number;
    readonly retryBaseSeconds: number;
    readonly timeoutMs: number;
    readonly cron: string;
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
  readonly messenger: {
    readonly botToken: string | undefined;
    readonly webhookSecret: string | undefined;
    readonly botApiBase: string;
    readonly initDataMaxAgeSeconds: number;
    readonly initDataMode: "hmac" | "ed25519" | "either";
    /** production, test, or an Ed25519 public key as 64 hex characters. */
    readonly ed25519Keys: string;
    readonly salutesPartner: string | undefined;
    /** The bot's @username without the @; undefined: learnt from getMe (src/messenger/bot/username.ts). */
    readonly botUsername: string | undefined;
    /** MESSENGER_MINI_APP_PATH: where Herald serves the players' page (default /app). */
    readonly miniAppPath: string;
    /** MESSENGER_MINI_APP_URL: the page the bot's web_app buttons open (https); undefined: no button. */
    readonly miniAppUrl: string | undefined;
    readonly initDataMaxFutureSkewSeconds: number;
    /** Per minute; 0 = off (docs/messenger.md, Abuse limits). */
    readonly rateLimits: {
      readonly playerPerMin: number;
      readonly ipPerMin: number;
      readonly initDataFailuresPerMin: number;
      readonly webhookUnauthorizedPerMin: number;
    };
  };
}

export type ConfigRow = {
  name: string;
  value: string;
  source: "env" | "default";
  doc: string;
  /** Set in the environment to something other than the default (secrets: set at all). */
  differs: boolean;
  secret: boolean;
};
