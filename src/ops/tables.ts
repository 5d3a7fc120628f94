import { index, integer, primaryKey, sqliteTable, text, uniqueIndex } from "drizzle-orm/sqlite-core";
import { madeBy, outboxMessage } from "../db/columns";

/**
 * Operator rules that keep known 403 noise out of the digest's findings: a path pattern and/or a partner key
 * and/or a client prefix, with a reason, an owner and an expiry (an expired rule stops applying). Audited.
 */
export const ops403Suppressions = sqliteTable(
  "ops_403_suppressions",
  {
    id: integer("id").primaryKey({ autoIncrement: true }),
    pathPattern: text("path_pattern"),
    partnerKeyId: text("partner_key_id"),
    clientPrefix: text("client_prefix"),
    reason: text("reason").notNull(),
    owner: text("owner").notNull(),
    expiresAt: text("expires_at").notNull(),
    createdAt: text("created_at").notNull(),
    createdBy: text("created_by").notNull(),
    revokedAt: text("revoked_at"),
  },
  (t) => [index("ops_403_suppressions_expires_idx").on(t.expiresAt)],
);

/** Synthetic probes: Herald calling its own public endpoints over HTTP, one row per probe per run. */
export const opsProbeRuns = sqliteTable(
  "ops_probe_runs",
  {
    id: integer("id").primaryKey({ autoIncrement: true }),
    runId: text("run_id").notNull(),
    at: text("at").notNull(),
    probe: text("probe").notNull(),
    url: text("url").notNull(),
    status: integer("status"),
    latencyMs: integer("latency_ms"),
    hadData: integer("had_data").notNull(),
    ok: integer("ok").notNull(),
    error: text("error"),
  },
  (t) => [index("ops_probe_runs_at_idx").on(t.at), index("ops_probe_runs_probe_idx").on(t.probe, t.at)],
);

/**
 * Preflight guards: a daily snapshot of every guard field of the deployment (config and artifacts), one row per
 * (day, section, field). Secrets are stored only as "set"/"unset" plus a fingerprint, never their values.
 */
export const opsPreflightSnapshots = sqliteTable(
  "ops_preflight_snapshots",
  {
    day: text("day").notNull(),
    section: text("section").notNull(),
    field: text("field").notNull(),
    value: text("value").notNull(),
    fingerprint: text("fingerprint").notNull(),
    takenAt: text("taken_at").notNull(),
  },
  (t) => [primaryKey({ columns: [t.day, t.section, t.field] }), index("ops_preflight_snapshots_field_idx").on(t.section, t.field, t.day)],
);

/** Alert runs: every evaluation Herald makes (status checks, transparency alerts, webhook dead letters, preflight anomalies), one row per run and alert. */
export const opsAlertRuns = sqliteTable(
  "ops_alert_runs",
  {
    id: integer("id").primaryKey({ autoIncrement: true }),
    runId: text("run_id").notNull(),
    at: text("at").notNull(),
    source: text("source").notNull(),
    name: text("name").notNull(),
    status: text("status").notNull(),
    value: text("value"),
    details: text("details"),
  },
  (t) => [
    index("ops_alert_runs_at_idx").on(t.at),
    index("ops_alert_runs_source_idx").on(t.source, t.at),
    // A source's newest warn streak (warnStreakOf): its latest warn, and the edges of that alert's streak, by seeks.
    index("ops_alert_runs_status_idx").on(t.source, t.status, t.at),
    index("ops_alert_runs_name_idx").on(t.source, t.name, t.status, t.at),
  ],
);

/** Every download of an operator-console export: who, which, when, how many bytes, and how (a direct export or a download token). */
export const opsExportUsage = sqliteTable(
  "ops_export_usage",
  {
    id: integer("id").primaryKey({ autoIncrement: true }),
    at: text("at").notNull(),
    actor: text("actor").notNull(),
    export: text("export").notNull(),
    bytes: integer("bytes").notNull(),
    source: text("source").notNull(),
  },
  (t) => [index("ops_export_usage_at_idx").on(t.at)],
);

/** The link inbox's durable outbox: one message per (issue event, chat target), sent by a job with retries. */
export const opsLinkOutbox = sqliteTable(
  "ops_link_outbox",
  {
    id: integer("id").primaryKey({ autoIncrement: true }),
    event: text("event").notNull(),
    issueId: text("issue_id").notNull(),
    target: text("target").notNull(),
    ...outboxMessage(),
  },
  (t) => [index("ops_link_outbox_due_idx").on(t.status, t.nextAttemptAt), index("ops_link_outbox_issue_idx").on(t.issueId, t.target)],
);

/** Link-inbox events: each delivery attempt or skip (cooldown, no URL…), with its outcome family. */
export const opsLinkEvents = sqliteTable(
  "ops_link_events",
  {
    id: integer("id").primaryKey({ autoIncrement: true }),
    at: text("at").notNull(),
    event: text("event").notNull(),
    issueId: text("issue_id").notNull(),
    target: text("target").notNull(),
    url: text("url"),
    attempt: integer("attempt").notNull().default(0),
    statusCode: integer("status_code"),
    statusCodeFamily: text("status_code_family"),
    skipReason: text("skip_reason"),
    outboxId: integer("outbox_id"),
    error: text("error"),
  },
  (t) => [
    index("ops_link_events_at_idx").on(t.at),
    index("ops_link_events_event_idx").on(t.event, t.at),
    index("ops_link_events_issue_idx").on(t.issueId, t.at),
  ],
);

/** One-time download tokens of the link-inbox exports: hashed, bound to the operator who asked, expiring, single use. */
export const opsDownloadTokens = sqliteTable(
  "ops_download_tokens",
  {
    tokenHash: text("token_hash").primaryKey(),
    actor: text("actor").notNull(),
    export: text("export").notNull(),
    params: text("params").notNull(),
    createdAt: text("created_at").notNull(),
    expiresAt: text("expires_at").notNull(),
    usedAt: text("used_at"),
  },
  (t) => [index("ops_download_tokens_expires_idx").on(t.expiresAt)],
);

/**
 * The current state of every alert key (`<source>:<name>` of ops_alert_runs), kept by the transition applier
 * (src/ops/alerts/state.ts): its level now, since when, the newest alert-run row applied to it, and what was last
 * sent about it. The firing view, the alert page, the readiness verdict and /metrics read it; the id is the
 * alert's stable address (/admin/ops/alerts-monitor/alerts/<id>).
 */
export const opsAlertState = sqliteTable(
  "ops_alert_state",
  {
    id: integer("id").primaryKey({ autoIncrement: true }),
    alertKey: text("alert_key").notNull(),
    source: text("source").notNull(),
    name: text("name").notNull(),
    level: text("level", { enum: ["ok", "warn", "fail"] }).notNull(),
    since: text("since").notNull(),
    firedAt: text("fired_at"),
    resolvedAt: text("resolved_at"),
    lastRowId: integer("last_row_id").notNull(),
    lastSeenAt: text("last_seen_at").notNull(),
    notifiedLevel: text("notified_level"),
    notifiedAt: text("notified_at"),
  },
  (t) => [
    // "the state of key K" (every applied row) and "what is firing now" (firing.json, readiness, /metrics).
    uniqueIndex("ops_alert_state_key_idx").on(t.alertKey),
    index("ops_alert_state_level_idx").on(t.level),
  ],
);

/**
 * Alert silences: an operator's "I know, stop telling me" for alert keys matching a pattern until a time, with
 * who and why. A silenced alert is still evaluated, recorded and shown as firing; only its notices are held back.
 * Audited (admin_audit) in the same transaction as the change.
 */
export const opsAlertSilences = sqliteTable(
  "ops_alert_silences",
  {
    id: integer("id").primaryKey({ autoIncrement: true }),
    matcher: text("matcher").notNull(),
    reason: text("reason").notNull(),
    ...madeBy(),
    endsAt: text("ends_at").notNull(),
    expiredAt: text("expired_at"),
    expiredBy: text("expired_by"),
  },
  // "silences in force now": ends_at after now and not expired by hand.
  (t) => [index("ops_alert_silences_ends_idx").on(t.endsAt)],
);
