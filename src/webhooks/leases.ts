import type { Statement } from "bun:sqlite";
import type { AppContext } from "../context";
import { emitEventSync, type OutboxDeps } from "./outbox";
import type { SendResult } from "./send";

/** last_error of a delivery (and error of its attempt row) whose sender stopped while the attempt was out. */
export const INTERRUPTED_ERROR =
  "the sender stopped during this attempt (process killed or lease lost): the receiver may have received the request; its outcome is unknown";

/** A delivery leased for one attempt, already counted: `attempts` includes it and `attempt_id` is its row. */
export interface Leased {
  id: number;
  attempts: number;
  attempt_id: number;
  lease_token: string;
  webhook_id: number;
  partner: string;
  mode: "sandbox" | "live";
  event_public_id: string;
  event_type: string;
  event_data: string;
  target_url: string;
  secret_ciphertext: string;
  previous_secret_ciphertext: string | null;
  previous_secret_valid_until: string | null;
  failing_since: string | null;
}

interface Candidate extends Omit<Leased, "attempt_id" | "lease_token"> {
  status: "queued" | "failed" | "processing";
  is_active: number;
  deleted_at: string | null;
}

/** Tells the partner's webhook.delivery_failed receivers — never about a delivery_failed event itself (no loops). */
export function notifyDeadLetter(
  deps: OutboxDeps,
  d: { id: number; partner: string; mode: "sandbox" | "live"; webhook_id: number; event_public_id: string; event_type: string },
  reasonTag: string | null,
  error: string | null,
): void {
  if (d.event_type === "webhook.delivery_failed") return;
  emitEventSync(deps, { partner: d.partner, mode: d.mode }, "webhook.delivery_failed", {
    delivery_id: d.id,
    event_id: d.event_public_id,
    event_type: d.event_type,
    webhook_id: d.webhook_id,
    reason_tag: reasonTag,
    last_error: error,
  });
}

/**
 * Takes due deliveries for sending, in ONE immediate transaction per batch, so two dispatchers (processes) never
 * take the same delivery and a crash never loses one: a lease that outlives its sender expires and is taken
 * again. Taking a delivery counts its attempt (attempts + 1, and an attempt row without an outcome) before the
 * request leaves, so `attempts` counts every request a receiver may have seen. A delivery whose previous lease
 * expired lost that attempt's outcome: its row is marked `interrupted`, and if the attempt was the last allowed
 * one the delivery is dead-lettered here instead of being sent again.
 */
export class DeliveryLeases {
  private readonly due: Statement;
  private readonly take1: Statement;
  private readonly addAttempt: Statement;
  private readonly interruptAttempt: Statement;
  private readonly settle: Statement;
  private readonly renewStmt: Statement;
  private readonly outcome: Statement;

  constructor(private readonly ctx: Omit<AppContext, "dispatcher">) {
    const db = ctx.db.sqlite;
    // One indexed range scan per state (an OR across states made SQLite sort every due row per lease); the
    // joins read what a send needs, by primary key, for at most `limit` rows.
    this.due = db.prepare(
      `SELECT d.id, d.status, d.attempts, d.webhook_id, d.partner, d.mode, e.public_id AS event_public_id, e.event_type, e.data AS event_data,
              w.target_url, w.is_active, w.deleted_at, w.secret_ciphertext, w.previous_secret_ciphertext, w.previous_secret_valid_until, w.failing_since
       FROM (
         SELECT * FROM (SELECT id, next_attempt_at AS due FROM webhook_deliveries WHERE status = 'queued' AND next_attempt_at <= ?1 ORDER BY next_attempt_at, id LIMIT ?2)
         UNION ALL
         SELECT * FROM (SELECT id, next_attempt_at AS due FROM webhook_deliveries WHERE status = 'failed' AND next_attempt_at <= ?1 ORDER BY next_attempt_at, id LIMIT ?2)
         UNION ALL
         SELECT * FROM (SELECT id, lease_until AS due FROM webhook_deliveries WHERE status = 'processing' AND lease_until <= ?1 ORDER BY lease_until, id LIMIT ?2)
         ORDER BY due, id LIMIT ?2
       ) c
       JOIN webhook_deliveries d ON d.id = c.id JOIN events e ON e.id = d.event_id JOIN webhooks w ON w.id = d.webhook_id
       ORDER BY c.due, c.id`,
    );
    // ?5 = 1 when the previous lease expired: the record then says so until this attempt's outcome replaces it.
    this.take1 = db.prepare(
      `UPDATE webhook_deliveries SET status = 'processing', attempts = attempts + 1, lease_until = ?1, lease_token = ?2, last_attempt_at = ?3, updated_at = ?3,
         reason_tag = CASE WHEN ?5 = 1 THEN 'interrupted' ELSE reason_tag END, last_error = CASE WHEN ?5 = 1 THEN ?6 ELSE last_error END,
         last_status_code = CASE WHEN ?5 = 1 THEN NULL ELSE last_status_code END
       WHERE id = ?4 RETURNING attempts`,
    );
    // attempt_no is the delivery's request number across replays (attempts restarts at 0 on a replay), unique
    // per delivery: a doubled attempt cannot be recorded.
    this.addAttempt = db.prepare(
      `INSERT INTO webhook_attempts (delivery_id, attempt_no, started_at, duration_ms)
       VALUES (?1, (SELECT coalesce(max(attempt_no), 0) + 1 FROM webhook_attempts WHERE delivery_id = ?1), ?2, 0) RETURNING id`,
    );
    // The latest attempt row, if it has no outcome yet (a finished row has a status or an error).
    this.interruptAttempt = db.prepare(
      `UPDATE webhook_attempts SET reason_tag = 'interrupted', error = ?2
       WHERE id = (SELECT max(id) FROM webhook_attempts WHERE delivery_id = ?1) AND status_code IS NULL AND error IS NULL`,
    );
    this.settle = db.prepare(
      `UPDATE webhook_deliveries SET status = ?2, next_attempt_at = NULL, lease_until = NULL, lease_token = NULL, updated_at = ?3,
         reason_tag = CASE WHEN ?4 = 1 THEN 'interrupted' ELSE reason_tag END, last_error = CASE WHEN ?4 = 1 THEN ?5 ELSE last_error END,
         last_status_code = CASE WHEN ?4 = 1 THEN NULL ELSE last_status_code END
       WHERE id = ?1`,
    );
    this.renewStmt = db.prepare("UPDATE webhook_deliveries SET lease_until = ? WHERE id = ? AND lease_token = ?");
    this.outcome = db.prepare(
      "UPDATE webhook_attempts SET started_at = ?, duration_ms = ?, status_code = ?, error = ?, reason_tag = ?, response_excerpt = ? WHERE id = ?",
    );
  }

  /**
   * Leases up to `limit` due deliveries until `leaseUntil`. Returns those to send, and how many were settled
   * without a send: cancelled (webhook disabled or deleted) or dead-lettered (attempts already at max_attempts).
   */
  take(limit: number, leaseUntil: string): { leased: Leased[]; settled: number } {
    const db = this.ctx.db.sqlite;
    const now = this.ctx.clock.now().toISOString();
    const token = Buffer.from(this.ctx.rng.bytes(8)).toString("hex");
    const max = this.ctx.config.webhooks.maxAttempts;
    return db
      .transaction(() => {
        const leased: Leased[] = [];
        let settled = 0;
        for (const c of this.due.all(now, limit) as Candidate[]) {
          const interrupted = c.status === "processing";
          if (interrupted) this.interruptAttempt.run(c.id, INTERRUPTED_ERROR);
          const flag = interrupted ? 1 : 0;
          if (!c.is_active || c.deleted_at) {
            this.settle.run(c.id, "cancelled", now, flag, INTERRUPTED_ERROR);
            settled++;
          } else if (c.attempts >= max) {
            // Every allowed request may have reached the receiver already (the last one cut off by a crash, or
            // max_attempts lowered since): sending again would exceed the bound.
            this.settle.run(c.id, "dead_letter", now, flag, INTERRUPTED_ERROR);
            const after = db.query("SELECT reason_tag, last_error FROM webhook_deliveries WHERE id = ?").get(c.id) as {
              reason_tag: string | null;
              last_error: string | null;
            };
            notifyDeadLetter(this.deps(), c, after.reason_tag, after.last_error);
            settled++;
          } else {
            const { attempts } = this.take1.get(leaseUntil, token, now, c.id, flag, INTERRUPTED_ERROR) as { attempts: number };
            const { id: attemptId } = this.addAttempt.get(c.id, now) as { id: number };
            const { status: _s, is_active: _a, deleted_at: _d, ...rest } = c;
            leased.push({ ...rest, attempts, attempt_id: attemptId, lease_token: token });
          }
        }
        return { leased, settled };
      })
      .immediate();
  }

  /** Extends a lease still held (guarded by its token); false when another dispatcher owns the delivery now. */
  renew(d: Leased, leaseUntil: string): boolean {
    return this.renewStmt.run(leaseUntil, d.id, d.lease_token).changes > 0;
  }

  /**
   * Fills in the outcome of an attempt row. Written even when the lease was lost meanwhile: the row is this
   * request's history, and its answer is the truth about it (the delivery record is not touched here).
   */
  recordOutcome(d: Leased, startedAt: Date, r: SendResult): void {
    this.outcome.run(startedAt.toISOString(), r.durationMs, r.statusCode, r.error, r.reasonTag, r.excerpt, d.attempt_id);
  }

  private deps(): OutboxDeps {
    return { sqlite: this.ctx.db.sqlite, clock: this.ctx.clock, rng: this.ctx.rng };
  }
}
