import { changed, type Dialect, type Queryable } from "../../db/port";
import type { RowOf } from "../../db/rows";
import type { opsLinkEvents, opsLinkOutbox } from "../tables";

// The link inbox's writes: ops_link_outbox (the durable queue) and ops_link_events (every attempt and skip).
// Written once for both engines; the one per-engine fragment is the row lock of the due-row query below. The read
// models' SQL is in store-reads.ts.

export type OutboxRow = RowOf<typeof opsLinkOutbox>;
export type LinkEventRow = RowOf<typeof opsLinkEvents>;

/** A skip: an event row for a message that was not queued (attempt 0, no status). */
export const insertSkip = (q: Queryable, e: Pick<LinkEventRow, "at" | "event" | "issue_id" | "target" | "url" | "skip_reason" | "error">) =>
  insertAttempt(q, { ...e, attempt: 0, status_code: null, status_code_family: null, outbox_id: null });

/** The newest message for this issue and target queued after `since` (the cooldown), or null. */
export const recentMessage = (q: Queryable, issueId: string, target: string, since: string) =>
  q.get<Pick<OutboxRow, "id" | "created_at">>(
    "SELECT id, created_at FROM ops_link_outbox WHERE issue_id = ? AND target = ? AND created_at > ? ORDER BY id DESC LIMIT 1",
    [issueId, target, since],
  );

export async function insertMessage(q: Queryable, m: Pick<OutboxRow, "event" | "issue_id" | "target" | "payload">, nowIso: string): Promise<void> {
  await q.run(
    "INSERT INTO ops_link_outbox (event, issue_id, target, payload, status, attempts, next_attempt_at, created_at) VALUES (?, ?, ?, ?, 'pending', 0, ?, ?)",
    [m.event, m.issue_id, m.target, m.payload, nowIso, nowIso],
  );
}

export type DueMessage = Pick<OutboxRow, "id" | "event" | "issue_id" | "target" | "payload" | "attempts">;

/**
 * PostgreSQL: the due rows are locked as they are read, skipping rows another instance's lease transaction holds
 * (FOR UPDATE SKIP LOCKED), so two senders never take the same message and never wait for each other; a row leased
 * meanwhile fails the lease_until condition, which PostgreSQL checks again on the locked row. SQLite has no row
 * locks and needs none: the lease transaction holds the database's one write lock (BEGIN IMMEDIATE).
 */
const DUE = `SELECT id, event, issue_id, target, payload, attempts FROM ops_link_outbox
  WHERE status = 'pending' AND next_attempt_at <= ? AND (lease_until IS NULL OR lease_until <= ?)
  ORDER BY next_attempt_at, id LIMIT ?`;

/** Up to `limit` messages due at `nowIso`, oldest due first; inside the lease transaction. */
export const dueMessages = (t: Queryable, dialect: Dialect, nowIso: string, limit: number) =>
  t.all<DueMessage>(dialect === "postgres" ? `${DUE} FOR UPDATE SKIP LOCKED` : DUE, [nowIso, nowIso, limit]);

/** A lease that expired after the last allowed attempt (the sender died mid-send): nothing more is sent. */
export async function markInterruptedDead(t: Queryable, id: number): Promise<void> {
  await t.run("UPDATE ops_link_outbox SET status = 'dead', lease_until = NULL, last_error = coalesce(last_error, 'interrupted') WHERE id = ?", [id]);
}

/** Leases one message and counts its attempt before the request leaves. */
export async function leaseMessage(t: Queryable, id: number, untilIso: string): Promise<void> {
  await t.run("UPDATE ops_link_outbox SET lease_until = ?, attempts = attempts + 1 WHERE id = ?", [untilIso, id]);
}

export interface AttemptRecord {
  id: number;
  leaseUntil: string;
  status: "sent" | "pending" | "dead";
  nextIso: string;
  error: string | null;
  sentAt: string | null;
}

/** The message's outcome, only while this sender still holds its lease; false when the lease was lost. */
export async function settleMessage(t: Queryable, r: AttemptRecord): Promise<boolean> {
  return changed(
    t,
    "UPDATE ops_link_outbox SET status = ?, next_attempt_at = ?, lease_until = NULL, last_error = ?, sent_at = ? WHERE id = ? AND lease_until = ?",
    [r.status, r.nextIso, r.error, r.sentAt, r.id, r.leaseUntil],
  );
}

export async function insertAttempt(t: Queryable, e: Omit<LinkEventRow, "id">): Promise<void> {
  await t.run(
    `INSERT INTO ops_link_events (at, event, issue_id, target, url, attempt, status_code, status_code_family, skip_reason, outbox_id, error)
     VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
    [e.at, e.event, e.issue_id, e.target, e.url, e.attempt, e.status_code, e.status_code_family, e.skip_reason, e.outbox_id, e.error],
  );
}
