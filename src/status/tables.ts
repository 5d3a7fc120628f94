import { index, integer, sqliteTable, text } from "drizzle-orm/sqlite-core";

// The status history. Snapshots are narrow on purpose: one a minute for 90+ days is ~130k rows, and the
// uptime maths, the 90-day bars and the badges scan them; only the checks that were NOT ok are stored
// (`degraded`, usually "{}"), so a scan parses almost nothing. The live answer carries the full detail.

/** One evaluation of every check by the status-snapshot job. Insert-only (pruned by age). */
export const statusSnapshots = sqliteTable(
  "status_snapshots",
  {
    id: integer("id").primaryKey({ autoIncrement: true }),
    generatedAt: text("generated_at").notNull(),
    overall: text("overall", { enum: ["ok", "warn", "bad"] }).notNull(),
    /** JSON object {check: "warn"|"bad"} of the checks that were not ok; "{}" when all were. */
    degraded: text("degraded").notNull(),
    /**
     * The checks evaluated, comma-separated — or "=" when the same as the previous snapshot's (nearly always:
     * the set changes only when a release adds a check). A check not in the set did not exist yet then.
     */
    checks: text("checks").notNull(),
    policyVersion: text("policy_version").notNull(),
    inMaintenance: integer("in_maintenance", { mode: "boolean" }).notNull().default(false),
    jobRunId: integer("job_run_id"),
  },
  // Windows and trends: WHERE generated_at >= ? ORDER BY generated_at; pruning: WHERE generated_at < ?
  (t) => [index("status_snapshots_at_idx").on(t.generatedAt)],
);

/** A period during which overall was not ok: opened by a transition into warn/bad, closed by one back to ok. */
export const statusIncidents = sqliteTable(
  "status_incidents",
  {
    id: integer("id").primaryKey({ autoIncrement: true }),
    startedAt: text("started_at").notNull(),
    /** null while open; at most one incident is open at a time. */
    endedAt: text("ended_at"),
    /** The worst overall status seen while open (never lowered). */
    severity: text("severity", { enum: ["warn", "bad"] }).notNull(),
    /** The status of the latest snapshot while open. */
    currentSeverity: text("current_severity", { enum: ["warn", "bad"] }).notNull(),
    /** JSON object {check: worst status seen}: every check that was degraded during the incident. */
    checks: text("checks").notNull(),
    /** JSON object {check: one-line reason} from the snapshot that opened it. */
    summary: text("summary").notNull(),
    openedSnapshotId: integer("opened_snapshot_id").notNull(),
    closedSnapshotId: integer("closed_snapshot_id"),
    updatedAt: text("updated_at").notNull(),
  },
  (t) => [
    // The open incident: WHERE ended_at IS NULL; windows: WHERE started_at < ? ORDER BY started_at DESC.
    index("status_incidents_ended_idx").on(t.endedAt),
    index("status_incidents_started_idx").on(t.startedAt),
  ],
);

/** Admin-defined maintenance windows; excluded from uptime by default (policy exclude_maintenance_default). */
export const statusMaintenanceWindows = sqliteTable(
  "status_maintenance_windows",
  {
    id: integer("id").primaryKey({ autoIncrement: true }),
    startsAt: text("starts_at").notNull(),
    endsAt: text("ends_at").notNull(),
    title: text("title").notNull(),
    description: text("description"),
    createdBy: text("created_by").notNull(),
    createdAt: text("created_at").notNull(),
  },
  // Overlap with a window: WHERE starts_at < ?end AND ends_at > ?start.
  (t) => [index("status_maintenance_starts_idx").on(t.startsAt, t.endsAt)],
);
