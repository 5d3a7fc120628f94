import { sql } from "drizzle-orm";
import { index, integer, sqliteTable, text, uniqueIndex } from "drizzle-orm/sqlite-core";
import { deliveryLease, deliveryOutcome, foreignId, madeBy } from "../db/columns";

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
  (t) => [
    // Windows and trends: WHERE generated_at >= ? ORDER BY generated_at; pruning: WHERE generated_at < ?
    index("status_snapshots_at_idx").on(t.generatedAt),
    // checksInForce (src/status/store/snapshots.ts): the newest snapshot whose check set is not "=" — a few rows,
    // one per release that changed the set (its statement names the same literal condition).
    index("status_snapshots_checks_idx").on(t.id).where(sql`checks <> '='`),
  ],
);

/**
 * An incident, automatic (src/status/incidents/incidents.ts) or operator (src/status/incidents/operator.ts): one id
 * space for both, so a page anchor, a feed guid and a webhook event name an incident unambiguously.
 */
export const statusIncidents = sqliteTable(
  "status_incidents",
  {
    id: integer("id").primaryKey({ autoIncrement: true }),
    source: text("source", { enum: ["automatic", "operator"] })
      .notNull()
      .default("automatic"),
    startedAt: text("started_at").notNull(),
    /** null while open. */
    endedAt: text("ended_at"),
    /** The worst status seen while open (never lowered): warn = degraded, bad = outage. */
    severity: text("severity", { enum: ["warn", "bad"] }).notNull(),
    /** Automatic: the latest snapshot's status while open. Operator: the latest severity given. */
    currentSeverity: text("current_severity", { enum: ["warn", "bad"] }).notNull(),
    /** JSON object {check: worst status seen}: every check that was degraded during it ("{}" for operator ones). */
    checks: text("checks").notNull(),
    /** JSON object {check: one-line reason} from the snapshot that opened it ("{}" for operator ones). */
    summary: text("summary").notNull(),
    /** Automatic only: the snapshots that opened and closed it. */
    openedSnapshotId: integer("opened_snapshot_id"),
    closedSnapshotId: integer("closed_snapshot_id"),
    updatedAt: text("updated_at").notNull(),
    /** Operator only: the headline, the state of the latest update, the affected components (JSON array). */
    title: text("title"),
    state: text("state", { enum: ["investigating", "identified", "monitoring", "resolved"] }),
    components: text("components"),
    createdBy: text("created_by"),
    /** Operator only: the Idempotency-Key of the creating request and the sha256 of its body (a retry is a no-op). */
    idempotencyKey: text("idempotency_key"),
    requestHash: text("request_hash"),
  },
  (t) => [
    // The open automatic incident: WHERE ended_at IS NULL AND source = 'automatic'; windows: ORDER BY started_at DESC.
    index("status_incidents_ended_idx").on(t.endedAt),
    index("status_incidents_started_idx").on(t.startedAt),
    uniqueIndex("status_incidents_idempotency_idx").on(t.idempotencyKey),
  ],
);

/** The updates of an operator incident, oldest first; each says the state it moved to and why. */
export const statusIncidentUpdates = sqliteTable(
  "status_incident_updates",
  {
    id: integer("id").primaryKey({ autoIncrement: true }),
    incidentId: foreignId("incident_id", () => statusIncidents.id, { onDelete: "cascade" }),
    state: text("state", { enum: ["investigating", "identified", "monitoring", "resolved"] }).notNull(),
    message: text("message").notNull(),
    /** The severity this update set, when it changed it. */
    severity: text("severity", { enum: ["warn", "bad"] }),
    createdAt: text("created_at").notNull(),
    createdBy: text("created_by").notNull(),
    idempotencyKey: text("idempotency_key"),
    requestHash: text("request_hash"),
  },
  (t) => [
    // An incident's updates in order: WHERE incident_id IN (…) ORDER BY id.
    index("status_incident_updates_incident_idx").on(t.incidentId, t.id),
    // A retried POST of one update (same Idempotency-Key on the same incident) finds the first.
    uniqueIndex("status_incident_updates_idempotency_idx").on(t.incidentId, t.idempotencyKey),
  ],
);

/** Receivers of incident events (admin-registered). One URL is one subscriber: registering it again is a no-op. */
export const statusSubscribers = sqliteTable(
  "status_subscribers",
  {
    id: integer("id").primaryKey({ autoIncrement: true }),
    url: text("url").notNull(),
    description: text("description"),
    /** JSON array of the event types it receives. */
    eventTypes: text("event_types").notNull(),
    /** AES-256-GCM under the master key, bound to the subscriber id; shown once at creation. */
    secretCiphertext: text("secret_ciphertext").notNull(),
    ...madeBy(),
  },
  (t) => [uniqueIndex("status_subscribers_url_idx").on(t.url)],
);

/**
 * The status outbox: one row per event × subscriber, written in the transaction of the incident change (so an
 * event exists exactly when its change does), then leased, sent and retried like partner webhook deliveries.
 * `body` is the exact JSON sent (retries send the same bytes; the event_id is stable across them).
 */
export const statusSubscriberDeliveries = sqliteTable(
  "status_subscriber_deliveries",
  {
    id: integer("id").primaryKey({ autoIncrement: true }),
    subscriberId: foreignId("subscriber_id", () => statusSubscribers.id, { onDelete: "cascade" }),
    eventId: text("event_id").notNull(),
    eventType: text("event_type").notNull(),
    body: text("body").notNull(),
    status: text("status", { enum: ["queued", "failed", "succeeded", "dead_letter"] }).notNull(),
    ...deliveryLease(),
    ...deliveryOutcome(),
  },
  (t) => [
    // The dispatcher's lease query: WHERE status IN ('queued','failed') AND next_attempt_at <= ? (and expired leases).
    index("status_deliveries_due_idx").on(t.status, t.nextAttemptAt),
    // A subscriber's health in the admin list: WHERE subscriber_id = ? GROUP BY status.
    index("status_deliveries_subscriber_idx").on(t.subscriberId, t.id),
    // The status-prune job: WHERE <this index's condition> AND status = ? AND updated_at < ?, in batches. Only settled
    // deliveries have an entry (queued ones, updated at every attempt, write none); SQLite uses a partial index only
    // when the query repeats its condition, as the prune's statements do.
    index("status_deliveries_settled_idx").on(t.status, t.updatedAt).where(sql`status IN ('succeeded', 'dead_letter')`),
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
    ...madeBy(),
  },
  // Overlap with a window: WHERE starts_at < ?end AND ends_at > ?start.
  (t) => [index("status_maintenance_starts_idx").on(t.startsAt, t.endsAt)],
);
