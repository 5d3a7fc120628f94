import { createHash } from "node:crypto";
import { t } from "elysia";
import pkg from "../../../package.json";
import journal from "../../../drizzle/meta/_journal.json";
import type { AppContext } from "../../context";
import { postgresMigrationStatus } from "../../db/postgres-migrate";
import { openApiDocumentEtag } from "../../http/openapi/routes";
import { DIGEST_DEFAULTS } from "../digest/findings";
import { MAX_FINDINGS } from "../digest/service";
import { lastPostgresMigration, sqliteMigrationsApplied } from "./store";

// The preflight guards (docs/ops-preflight.md): named checks of the deployment's configuration and artifacts that
// operators compare before and after a release. Each guard field has one text value; a secret is only ever
// "set"/"unset" plus a fingerprint (the first 12 hex of its SHA-256), so no answer, snapshot or CSV carries a
// secret's value. Field names are unique across sections, so `fields=` needs no section prefix.

export const PREFLIGHT_SECTIONS = ["responder", "synthetic", "digest", "token", "artifact"] as const;
export type PreflightSection = (typeof PREFLIGHT_SECTIONS)[number];

/**
 * One guard field (model.ts names it PreflightGuard): `value` as shown (secrets: "set" or "unset"); `fingerprint` the
 * first 12 hex of SHA-256 of the real value ("" for an unset secret), which changes exactly when the value does.
 */
export const GuardSchema = t.Object({ section: t.String(), field: t.String(), value: t.String(), fingerprint: t.String(), secret: t.Boolean() });
export type GuardRow = typeof GuardSchema.static;

export const fingerprintOf = (raw: string): string => createHash("sha256").update(raw).digest("hex").slice(0, 12);

const plain = (section: PreflightSection, field: string, raw: string | number | boolean): GuardRow => {
  const value = String(raw);
  return { section, field, value, fingerprint: fingerprintOf(value), secret: false };
};
const secretRow = (section: PreflightSection, field: string, raw: string | undefined): GuardRow =>
  raw ? { section, field, value: "set", fingerprint: fingerprintOf(raw), secret: true } : { section, field, value: "unset", fingerprint: "", secret: true };

/** The engine's migrations, as the same three fields on both engines: a move to PostgreSQL shows them changed, as they did. */
async function migrationRows(ctx: AppContext): Promise<GuardRow[]> {
  let status: { applied: number; total: number };
  let last: string;
  if (ctx.store.dialect === "sqlite") {
    const entries = (journal as { entries: Array<{ tag: string }> }).entries;
    status = { applied: await sqliteMigrationsApplied(ctx.store), total: entries.length };
    last = status.applied > 0 ? (entries[status.applied - 1]?.tag ?? "unknown") : "none";
  } else {
    status = await postgresMigrationStatus(ctx.store);
    last = status.applied > 0 ? ((await lastPostgresMigration(ctx.store)) ?? "unknown") : "none";
  }
  return [
    plain("artifact", "migrations_applied", status.applied),
    plain("artifact", "migrations_total", status.total),
    plain("artifact", "migration_last_tag", last),
  ];
}

/**
 * The OpenAPI document's hash; a document that fails to build is itself a finding, not a failed guard list. Under
 * `herald serve` this awaits the worker's build begun at start, with the loop free (src/http/openapi/documents.ts).
 */
async function openApiHash(ctx: AppContext): Promise<string> {
  try {
    // The ETag's opaque value, without its quotes: the base64url SHA-256 the docs name.
    return (await openApiDocumentEtag(ctx))?.replace(/^"|"$/g, "") ?? "unbuilt";
  } catch (e) {
    ctx.log.warn("preflight: the OpenAPI document did not build", { error: e instanceof Error ? e.message : String(e) });
    return "build_failed";
  }
}

/** Every guard field of the running deployment, in catalog order. */
export async function currentGuards(ctx: AppContext): Promise<GuardRow[]> {
  const c = ctx.config;
  const w = c.webhooks;
  const r = c.readiness;
  const ch = c.chain;
  return [
    plain("responder", "WEBHOOK_MAX_ATTEMPTS", w.maxAttempts),
    plain("responder", "WEBHOOK_TIMEOUT_SECONDS", w.timeoutSeconds),
    plain("responder", "WEBHOOK_RETRY_BASE_SECONDS", w.retryBaseSeconds),
    plain("responder", "WEBHOOK_RETRY_MAX_SECONDS", w.retryMaxSeconds),
    plain("responder", "WEBHOOK_RETRY_JITTER_PCT", w.retryJitterPct),
    plain("responder", "WEBHOOK_CONCURRENCY", w.concurrency),
    plain("responder", "WEBHOOK_PER_TARGET_CONCURRENCY", w.perTargetConcurrency),
    plain("responder", "WEBHOOK_ALLOW_PRIVATE_TARGETS", w.allowPrivateTargets),
    plain("responder", "WEBHOOK_DISABLE_AFTER_HOURS", w.disableAfterHours),
    plain("responder", "WEBHOOK_RETENTION_DAYS", w.retentionDays),
    plain("synthetic", "SYNTHETIC_PROBE_CRON", r.probeCron),
    plain("synthetic", "SYNTHETIC_PROBE_TIMEOUT_MS", r.probeTimeoutMs),
    plain("synthetic", "SYNTHETIC_PROBE_RETENTION_DAYS", r.probeRetentionDays),
    plain("synthetic", "READINESS_403_NOISE_MAX_PERCENT", r.noiseMaxPercent),
    plain("synthetic", "READINESS_403_MAX_PER_HOUR", r.noiseMaxPerHour),
    // digest_hours, digest_baseline_mode, … : the digest's defaults, each under its query parameter's name.
    ...Object.entries(DIGEST_DEFAULTS).map(([name, value]) => plain("digest", `digest_${name}`, value)),
    plain("digest", "digest_max_findings", MAX_FINDINGS),
    plain("token", "TOKEN_MINT", ch.tokenMint ?? ""),
    secretRow("token", "SOLANA_RPC_URLS", ch.rpcUrls.join(",")),
    plain("token", "solana_rpc_url_count", ch.rpcUrls.length),
    plain("token", "EXPECTED_MINT_AUTHORITY", ch.expectedMintAuthority ?? ""),
    plain("token", "EXPECTED_FREEZE_AUTHORITY", ch.expectedFreezeAuthority ?? ""),
    plain("token", "LP_MINT", ch.lpMint ?? ""),
    plain("token", "TREASURY_WALLETS", ch.treasuryWallets.join(",")),
    plain("token", "RESERVE_WALLETS", ch.reserveWallets.join(",")),
    secretRow("token", "AUDIO_SHARE_SIGNING_KEY", c.audioShare.signingKey),
    secretRow("token", "HERALD_MASTER_KEY", c.masterKey),
    secretRow("token", "ADMIN_TOKEN", c.adminToken),
    secretRow("token", "MESSENGER_BOT_TOKEN", c.messenger.botToken),
    secretRow("token", "MESSENGER_WEBHOOK_SECRET", c.messenger.webhookSecret),
    plain("artifact", "version", pkg.version),
    plain("artifact", "bun_version", typeof Bun === "undefined" ? "unknown" : Bun.version),
    // Which engine the deployment runs on (sqlite, postgres): a move between them is a change worth seeing.
    plain("artifact", "database_engine", ctx.store.dialect),
    ...(await migrationRows(ctx)),
    // The served /api/openapi.json's strong ETag (base64url SHA-256 of its bytes), built once per process.
    plain("artifact", "openapi_sha256", await openApiHash(ctx)),
  ];
}

/** Variables of the SQLite file and its backups: on PostgreSQL their row says they do not apply. */
const SQLITE_ONLY_VARS: ReadonlySet<string> = new Set(["HERALD_DB_PATH", "BACKUP_KEEP"]);
export const NOT_ON_POSTGRES = "n/a on PostgreSQL (the SQLite file and its backups are not used)";

/**
 * The `env` rows of include_env_rows=1: every configuration variable as `herald config` shows it. Secrets are
 * "set"/"unset"; their fingerprint is of the masked text, since describeConfig never hands out the real value.
 */
export function envGuards(ctx: AppContext): GuardRow[] {
  const postgres = ctx.store.dialect === "postgres";
  return ctx.config.described.map((row) => {
    const value = postgres && SQLITE_ONLY_VARS.has(row.name) ? NOT_ON_POSTGRES : row.secret ? (row.value ? "set" : "unset") : row.value;
    return { section: "env", field: row.name, value, fingerprint: fingerprintOf(value), secret: row.secret };
  });
}

/** The named field lists of fields_preset (docs/ops-preflight.md, "Presets"). */
export const PREFLIGHT_PRESETS = {
  // What the published API docs depend on: the release, the schema it migrated to and the OpenAPI document.
  docs_mode: ["version", "migration_last_tag", "migrations_applied", "openapi_sha256"],
  // The token section's secrets and keys: presence and rotation (fingerprints), never values.
  token_secret: ["SOLANA_RPC_URLS", "AUDIO_SHARE_SIGNING_KEY", "HERALD_MASTER_KEY", "ADMIN_TOKEN", "MESSENGER_BOT_TOKEN", "MESSENGER_WEBHOOK_SECRET"],
  // The synthetic probes' and readiness thresholds.
  synthetic_thresholds: [
    "SYNTHETIC_PROBE_TIMEOUT_MS",
    "SYNTHETIC_PROBE_CRON",
    "SYNTHETIC_PROBE_RETENTION_DAYS",
    "READINESS_403_NOISE_MAX_PERCENT",
    "READINESS_403_MAX_PER_HOUR",
  ],
} as const;
export type PreflightPreset = keyof typeof PREFLIGHT_PRESETS;
