import { sql } from "drizzle-orm";
import { index, integer, primaryKey, sqliteTable, text, uniqueIndex } from "drizzle-orm/sqlite-core";
import { deliveryLease, deliveryOutcome, foreignId, owner, timestamps } from "../db/columns";

/** Receivers a partner registered, one event type each. Secrets are AES-256-GCM ciphertext. */
export const webhooks = sqliteTable(
  "webhooks",
  {
    id: integer("id").primaryKey({ autoIncrement: true }),
    ...owner(),
    eventType: text("event_type").notNull(),
    targetUrl: text("target_url").notNull(),
    description: text("description"),
    secretCiphertext: text("secret_ciphertext").notNull(),
    previousSecretCiphertext: text("previous_secret_ciphertext"),
    previousSecretValidUntil: text("previous_secret_valid_until"),
    isActive: integer("is_active", { mode: "boolean" }).notNull().default(true),
    disabledReason: text("disabled_reason"),
    /** Set at the first failure after a success, cleared by a success: drives WEBHOOK_DISABLE_AFTER_HOURS. */
    failingSince: text("failing_since"),
    ...timestamps(),
    deletedAt: text("deleted_at"),
  },
  (t) => [
    // Fan-out at emit time: active receivers of one partner, mode and event type.
    index("webhooks_fanout_idx").on(t.partner, t.mode, t.eventType, t.isActive),
  ],
);

/** The transactional outbox: written in the same transaction as the change the event describes. */
export const events = sqliteTable(
  "events",
  {
    id: integer("id").primaryKey({ autoIncrement: true }),
    publicId: text("public_id").notNull(),
    ...owner(),
    eventType: text("event_type").notNull(),
    data: text("data").notNull(),
    createdAt: text("created_at").notNull(),
  },
  (t) => [uniqueIndex("events_public_id_idx").on(t.publicId), index("events_partner_created_idx").on(t.partner, t.mode, t.createdAt)],
);

/**
 * One delivery per event × webhook — the spec's "webhook event" records (their integer ids are what partners
 * replay). `lease_until`/`lease_token` make a send exclusive: an expired lease (a crashed process) is taken
 * again, and a stale worker's result is ignored because its token no longer matches. `attempts` is raised in
 * the transaction that takes the lease, before the request leaves, so it counts every request a receiver may
 * have seen — a crash mid-attempt cannot make it undercount. `max_attempts` bounds the attempts whose outcome
 * was recorded, and separately those interrupted (src/webhooks/leases.ts): `attempts` ≤ 2 × max − 1 per budget.
 * `reason_tag`: why the last attempt failed; once an attempt succeeds, the latest replay's reason (or null).
 */
/** A delivery's states, the stored ones (the records show a dead letter as `failed`: DELIVERY_VIEW_STATUSES). */
export const DELIVERY_STATUSES = ["queued", "processing", "succeeded", "failed", "dead_letter", "cancelled"] as const;

export const webhookDeliveries = sqliteTable(
  "webhook_deliveries",
  {
    id: integer("id").primaryKey({ autoIncrement: true }),
    eventId: foreignId("event_id", () => events.id),
    webhookId: foreignId("webhook_id", () => webhooks.id),
    ...owner(),
    status: text("status", { enum: DELIVERY_STATUSES }).notNull(),
    ...deliveryLease(),
    reasonTag: text("reason_tag"),
    ...deliveryOutcome(),
  },
  (t) => [
    // The dispatcher's lease query: due work in order.
    index("deliveries_due_idx").on(t.status, t.nextAttemptAt),
    // Partner lists and the DLQ summary: WHERE partner = ? AND mode = ? ORDER BY id DESC.
    index("deliveries_partner_idx").on(t.partner, t.mode, t.id),
    // A webhook's deliveries by state (a delete's cancellations), and a partner's delivery health (deliveryHealth):
    // counts of the states that stay small, and the deliveries settled in a recent window, webhook by webhook.
    // updated_at changes with status at every lease and outcome, so it adds no index write of its own.
    index("deliveries_webhook_idx").on(t.webhookId, t.status, t.updatedAt),
    // An event's deliveries: the foreign key's own check when an event is deleted (a sandbox reset, a prune) read
    // every delivery without it (20,000 events beside 100,000 deliveries: 82 s on SQLite).
    index("deliveries_event_idx").on(t.eventId),
    // The webhook-prune job: WHERE <this index's condition> AND status … AND updated_at < ?, in batches. Only settled
    // deliveries have an entry, so queued and in-flight ones (whose updated_at changes at every lease) write none;
    // SQLite uses a partial index only when the query repeats its condition, as the prune's statements do.
    index("deliveries_settled_idx").on(t.status, t.updatedAt).where(sql`status IN ('succeeded', 'cancelled', 'dead_letter')`),
    // The partner's dead-letter summary (GET /api/partner/webhooks/dlq, deadLetterRows): WHERE partner = ? AND mode = ?
    // AND status = 'dead_letter' AND updated_at >= ?. Through deliveries_partner_idx it walked every delivery of the
    // owner (418 ms at 10M rows); only dead letters have an entry here, and SQLite uses it because the
    // summary's statements repeat the condition.
    index("deliveries_dead_letter_idx").on(t.partner, t.mode, t.updatedAt).where(sql`status = 'dead_letter'`),
  ],
);

/**
 * Every HTTP try of a delivery: what was sent when, and what came back (excerpt ≤ 1 KiB). The row is written
 * with the lease, before the request leaves (duration 0, no status, no error: outcome pending), and its outcome
 * filled in afterwards. A row whose sender died keeps no status and gets reason_tag `interrupted` when the
 * delivery is taken over.
 */
export const webhookAttempts = sqliteTable(
  "webhook_attempts",
  {
    id: integer("id").primaryKey({ autoIncrement: true }),
    deliveryId: foreignId("delivery_id", () => webhookDeliveries.id),
    attemptNo: integer("attempt_no").notNull(),
    startedAt: text("started_at").notNull(),
    durationMs: integer("duration_ms").notNull(),
    statusCode: integer("status_code"),
    error: text("error"),
    reasonTag: text("reason_tag"),
    responseExcerpt: text("response_excerpt"),
  },
  (t) => [
    // A delivery's attempts (WHERE delivery_id = ?, and the foreign key's checks) are read through this index's first
    // column; a second index on delivery_id alone was one more B-tree insert per attempt (dropped by migration 0029).
    // attempt_no counts every request made for the delivery, replays included, so a doubled attempt (two
    // instances sending the same attempt) cannot be recorded.
    uniqueIndex("attempts_delivery_no_idx").on(t.deliveryId, t.attemptNo),
  ],
);

/**
 * Every replay of a delivery (partner replay, recover, operator replay), oldest first: the history behind the
 * delivery's reason_tag, which a later failure overwrites. Partner and mode as on the delivery (sandbox rows
 * stay sandbox rows); deleted with their delivery.
 */
export const webhookReplays = sqliteTable(
  "webhook_replays",
  {
    id: integer("id").primaryKey({ autoIncrement: true }),
    deliveryId: foreignId("delivery_id", () => webhookDeliveries.id, { onDelete: "cascade" }),
    ...owner(),
    reasonTag: text("reason_tag").notNull(),
    note: text("note"),
    replayedAt: text("replayed_at").notNull(),
  },
  (t) => [
    // A delivery's history (list views), the latest replay's reason (on success) and the reason_tag filter's
    // EXISTS (delivery_id = ? AND reason_tag = ?).
    index("replays_delivery_idx").on(t.deliveryId, t.reasonTag),
  ],
);

/**
 * How many dead letters each owner holds, kept by triggers on webhook_deliveries (migration 0037; PostgreSQL 0013):
 * +1 when a delivery becomes a dead letter, −1 when one is requeued, pruned or deleted, whoever writes it. A partner's
 * delivery health and /metrics read this row instead of counting the dead letters, which grow with the delivery rate
 * until their retention (50,000 for one partner in bench scale's 10M database: 2.56× its 10k time).
 */
export const webhookDeadLetterCounts = sqliteTable(
  "webhook_dead_letter_counts",
  {
    ...owner(),
    n: integer("n").notNull().default(0),
  },
  (t) => [primaryKey({ columns: [t.partner, t.mode] })],
);
