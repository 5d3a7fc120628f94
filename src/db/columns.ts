import { integer, type ReferenceConfig, text } from "drizzle-orm/sqlite-core";

// Timestamps are stored as ISO 8601 UTC text ending in Z: sortable, readable in the CLI, what the API returns.

/** A required foreign key to another table's integer id, with the reference's actions when given (onDelete: "cascade"). */
export const foreignId = <N extends string>(name: N, target: ReferenceConfig["ref"], actions?: ReferenceConfig["actions"]) =>
  integer(name).notNull().references(target, actions);

/** The owner of a partner's row: a sandbox key's rows live beside the live ones, never among them. */
export const owner = () => ({
  partner: text("partner").notNull(),
  mode: text("mode", { enum: ["sandbox", "live"] }).notNull(),
});

/** When the row was made and when it last changed. */
export const timestamps = () => ({
  createdAt: text("created_at").notNull(),
  updatedAt: text("updated_at").notNull(),
});

/** Who made the row (an operator) and when. */
export const madeBy = () => ({
  createdBy: text("created_by").notNull(),
  createdAt: text("created_at").notNull(),
});

/**
 * An HTTP delivery's send state (partner webhooks, status subscribers): `attempts` is raised when a sender takes the
 * lease, before the request leaves; `lease_until`/`lease_token` make a send exclusive (an expired lease is taken
 * again, and a stale sender's result is ignored because its token no longer matches).
 */
export const deliveryLease = () => ({
  attempts: integer("attempts").notNull().default(0),
  nextAttemptAt: text("next_attempt_at"),
  leaseUntil: text("lease_until"),
  leaseToken: text("lease_token"),
});

/** An HTTP delivery's last attempt and its outcome, and the row's times. */
export const deliveryOutcome = () => ({
  lastError: text("last_error"),
  lastStatusCode: integer("last_status_code"),
  lastAttemptAt: text("last_attempt_at"),
  deliveredAt: text("delivered_at"),
  ...timestamps(),
});

/**
 * A durable outbox's message and its sending state (the bot's replies, the link inbox's notices): written with what
 * it tells, sent by a job with retries. A sender holds the row until `lease_until`; a crashed sender's rows come back
 * when it passes.
 */
export const outboxMessage = () => ({
  payload: text("payload").notNull(),
  status: text("status", { enum: ["pending", "sent", "dead"] }).notNull(),
  attempts: integer("attempts").notNull().default(0),
  nextAttemptAt: text("next_attempt_at").notNull(),
  leaseUntil: text("lease_until"),
  lastError: text("last_error"),
  createdAt: text("created_at").notNull(),
  sentAt: text("sent_at"),
});
