import { sql } from "drizzle-orm";
import { index, integer, sqliteTable, text } from "drizzle-orm/sqlite-core";

// Audit-anomaly runs (docs/transparency.md). A run and its rows are written once: rows while the run examines,
// the run's aggregates when it completes. Readers of runs.json, summary.json, trend.json and alerts.json read
// the aggregates on the run row, never the rows. Token amounts are raw integer base units as decimal TEXT.

/** One execution of the audit-anomalies job. */
export const auditRuns = sqliteTable(
  "audit_runs",
  {
    id: integer("id").primaryKey({ autoIncrement: true }),
    /** UTC date-time the run started, to the second: `2026-01-01T00:15:00Z`. */
    label: text("label").notNull(),
    /** The UTC day of the label (`2026-01-01`): the date selector. */
    day: text("day").notNull(),
    startedAt: text("started_at").notNull(),
    finishedAt: text("finished_at"),
    jobRunId: integer("job_run_id"),
    mint: text("mint").notNull(),
    decimals: integer("decimals").notNull(),
    isComplete: integer("is_complete").notNull().default(0),
    /** Set when the run stopped on an error (it stays incomplete and is never selected by default). */
    error: text("error"),
    rowsTotal: integer("rows_total").notNull().default(0),
    signaturesWithAnomalies: integer("signatures_with_anomalies").notNull().default(0),
    overall: text("overall", { enum: ["ok", "warn", "bad"] }),
    /** {low, medium, high, critical} and {<type>: count}: the precomputed aggregates the reports read. */
    severityCounts: text("severity_counts").notNull().default("{}"),
    typeCounts: text("type_counts").notNull().default("{}"),
    maxAbsDeltaRaw: text("max_abs_delta_raw").notNull().default("0"),
    /** The thresholds in force when the run started (JSON object, the threshold-history parameter names). */
    thresholds: text("thresholds").notNull(),
    transactionsExamined: integer("transactions_examined").notNull().default(0),
    /** The last chain snapshot / sync-run ids examined: the next run starts after them. */
    lastTokenSnapshotId: integer("last_token_snapshot_id").notNull().default(0),
    lastAuthoritySnapshotId: integer("last_authority_snapshot_id").notNull().default(0),
    lastSyncRunId: integer("last_sync_run_id").notNull().default(0),
  },
  (t) => [
    // "latest / previous complete run", "last complete run of that day", trend windows.
    index("audit_runs_complete_idx").on(t.isComplete, t.id),
    index("audit_runs_day_idx").on(t.day, t.isComplete, t.id),
  ],
);

/** One row per examined signature (or per snapshot finding) of a run. */
export const auditRows = sqliteTable(
  "audit_rows",
  {
    id: integer("id").primaryKey({ autoIncrement: true }),
    runId: integer("run_id").notNull(),
    /** transaction | token_snapshot | mint_authority_snapshot | sync_run */
    kind: text("kind").notNull(),
    /** The transaction signature, or `token-snapshot:<id>`, `mint-authority-snapshot:<id>`, `sync-run:<id>`. */
    signature: text("signature").notNull(),
    slot: integer("slot"),
    blockTime: text("block_time"),
    /** Signed raw change of the tracked wallets (transactions) or the unexplained difference (snapshots). */
    deltaRaw: text("delta_raw").notNull(),
    /** |delta| zero-padded to 40 digits: compares as text, so min_abs_delta filters need no big-number SQL. */
    absKey: text("abs_key").notNull(),
    /** Anomaly types in glossary order, comma-separated; empty when the row is clean. */
    types: text("types").notNull().default(""),
    /** 0 clean, 1 low, 2 medium, 3 high, 4 critical. */
    severityRank: integer("severity_rank").notNull().default(0),
    declarationId: integer("declaration_id"),
    /** The facts the rule compared (JSON), for rows whose numbers are not the transaction's own. */
    detail: text("detail"),
  },
  (t) => [
    // A run's rows in order (exports, filtered trends).
    index("audit_rows_run_idx").on(t.runId),
    // Top anomalies of a run: the most severe first, then the largest.
    index("audit_rows_top_idx").on(t.runId, t.severityRank, t.absKey).where(sql`severity_rank > 0`),
    // Whether any run flagged a signature (the triage's 404 otherwise), without reading every anomalous row.
    index("audit_rows_flagged_idx").on(t.signature).where(sql`severity_rank > 0`),
    // Matches per declared movement (declarationMatches: the public declared-movements list, the audit run): only
    // the rows that matched one, not every row of every run.
    index("audit_rows_declaration_idx").on(t.declarationId, t.runId).where(sql`declaration_id IS NOT NULL`),
  ],
);

/** Signatures examined by a COMPLETE run: the next run skips them (written when a run completes). */
export const auditExamined = sqliteTable("audit_examined", {
  signature: text("signature").primaryKey(),
  runId: integer("run_id").notNull(),
});

/** Expected treasury movements registered by operators; a matching transaction is not an anomaly. */
export const declaredMovements = sqliteTable(
  "declared_movements",
  {
    id: integer("id").primaryKey({ autoIncrement: true }),
    direction: text("direction", { enum: ["outflow", "inflow"] }).notNull(),
    amountRaw: text("amount_raw").notNull(),
    decimals: integer("decimals").notNull(),
    counterparty: text("counterparty"),
    signature: text("signature"),
    windowStart: text("window_start").notNull(),
    windowEnd: text("window_end").notNull(),
    maxTransactions: integer("max_transactions").notNull(),
    reason: text("reason").notNull(),
    createdAt: text("created_at").notNull(),
    createdBy: text("created_by").notNull(),
    retractedAt: text("retracted_at"),
    retractedBy: text("retracted_by"),
    retractReason: text("retract_reason"),
  },
  (t) => [index("declared_movements_active_idx").on(t.retractedAt, t.id)],
);

/** The thresholds in force (absent parameter = the built-in default). */
export const auditThresholds = sqliteTable("audit_thresholds", {
  parameter: text("parameter").primaryKey(),
  value: text("value").notNull(),
  updatedAt: text("updated_at").notNull(),
});

/** Every change of a threshold, by whom and why (threshold-history.json). */
export const auditThresholdHistory = sqliteTable("audit_threshold_history", {
  id: integer("id").primaryKey({ autoIncrement: true }),
  changedAt: text("changed_at").notNull(),
  parameter: text("parameter").notNull(),
  previousValue: text("previous_value").notNull(),
  newValue: text("new_value").notNull(),
  owner: text("owner").notNull(),
  reason: text("reason").notNull(),
});

/** A triage's statuses (an operator's word on an anomalous signature). */
export const TRIAGE_STATUSES = ["open", "investigating", "resolved", "false_positive"] as const;

/** Operators' triage of anomalous signatures (triage.json). */
export const auditTriage = sqliteTable(
  "audit_triage",
  {
    signature: text("signature").primaryKey(),
    status: text("status", { enum: TRIAGE_STATUSES }).notNull(),
    owner: text("owner").notNull(),
    etaUtc: text("eta_utc"),
    note: text("note"),
    updatedAt: text("updated_at").notNull(),
    updatedBy: text("updated_by").notNull(),
  },
  (t) => [index("audit_triage_status_idx").on(t.status, t.signature)],
);

/**
 * One row (id 1): bumped in the same transaction as every change to the data above. Its time is the
 * Last-Modified of every transparency answer; its version keys the answer cache.
 */
export const auditState = sqliteTable("audit_state", {
  id: integer("id").primaryKey(),
  version: integer("version").notNull(),
  changedAt: text("changed_at").notNull(),
  /** How many audit runs were ever started (audit_runs is never pruned): kept by insertRun, so no answer counts them. */
  runsTotal: integer("runs_total").notNull().default(0),
});
