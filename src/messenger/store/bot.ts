import { type BatchBound, type BatchedDeleteResult, deleteInBatches } from "../../db/batched-delete";
import { changed, countOf, type Dialect, type Param, type Queryable, type Store } from "../../db/port";
import type { RowOf } from "../../db/rows";
import type { messengerBotOutbox, messengerUpdates } from "../tables";

// The bot's tables (messenger_updates, messenger_bot_outbox): the only SQL that touches them. An update is claimed
// by its id before anything else (INSERT … ON CONFLICT DO NOTHING), so of two instances given the same update one
// handles it; replies are leased a batch at a time, and on PostgreSQL rows another instance holds are skipped.

type UpdateRow = RowOf<typeof messengerUpdates>;
export type OutboxRow = Omit<RowOf<typeof messengerBotOutbox>, "status"> & { status: "pending" | "sent" | "dead" };

/** True when this transaction claimed the update (false: seen before, here or on another instance). */
export async function claimUpdate(t: Queryable, u: UpdateRow): Promise<boolean> {
  return changed(
    t,
    "INSERT INTO messenger_updates (update_id, kind, chat_id, command, received_at) VALUES (?, ?, ?, ?, ?) ON CONFLICT (update_id) DO NOTHING",
    [u.update_id, u.kind, u.chat_id, u.command, u.received_at],
  );
}

export async function queueCall(t: Queryable, c: Pick<OutboxRow, "update_id" | "chat_id" | "method" | "payload" | "created_at">): Promise<void> {
  await t.run(
    "INSERT INTO messenger_bot_outbox (update_id, chat_id, method, payload, status, attempts, next_attempt_at, created_at) VALUES (?, ?, ?, ?, 'pending', 0, ?, ?)",
    [c.update_id, c.chat_id, c.method, c.payload, c.created_at, c.created_at],
  );
}

export type LeasedRow = Pick<OutboxRow, "id" | "chat_id" | "method" | "payload" | "attempts" | "lease_until">;

/**
 * The per-engine part of taking due replies. PostgreSQL: the subquery locks the rows it picks and skips rows
 * another instance's lease transaction holds (FOR UPDATE SKIP LOCKED), so two senders never take one reply and
 * never wait for each other; a row leased and committed meanwhile fails the WHERE, checked again on the locked
 * row. SQLite has no row locks and needs none: its one writer runs the statement whole.
 */
const rowLockOf = (dialect: Dialect) => (dialect === "postgres" ? "FOR UPDATE SKIP LOCKED" : "");

/** Leases up to `limit` due pending replies until `leaseUntil`, oldest due first; the rows as leased. */
export const leaseDue = (q: Queryable, dialect: Dialect, nowIso: string, leaseUntil: string, limit: number) =>
  q.all<LeasedRow>(
    `UPDATE messenger_bot_outbox SET lease_until = ?
     WHERE id IN (SELECT id FROM messenger_bot_outbox WHERE status = 'pending' AND next_attempt_at <= ? AND (lease_until IS NULL OR lease_until <= ?)
                  ORDER BY next_attempt_at, id LIMIT ? ${rowLockOf(dialect)})
     RETURNING id, chat_id, method, payload, attempts, lease_until`,
    [leaseUntil, nowIso, nowIso, limit],
  );

/**
 * A reply's outcome, written only while this sender's lease (`leaseUntil`, the value it set) still holds the row:
 * a sender that outlived its lease cannot overwrite the outcome of the one that took the row over.
 */
export const recordSent = (t: Queryable, id: number, leaseUntil: string, at: string) =>
  underLease(t, id, leaseUntil, "status = 'sent', attempts = attempts + 1, sent_at = ?, lease_until = NULL, last_error = NULL", [at]);

export const recordDead = (t: Queryable, id: number, leaseUntil: string, attempts: number, error: string) =>
  underLease(t, id, leaseUntil, "status = 'dead', attempts = ?, lease_until = NULL, last_error = ?", [attempts, error]);

export const recordRetry = (t: Queryable, id: number, leaseUntil: string, attempts: number, nextIso: string, error: string) =>
  underLease(t, id, leaseUntil, "attempts = ?, next_attempt_at = ?, lease_until = NULL, last_error = ?", [attempts, nextIso, error]);

async function underLease(t: Queryable, id: number, leaseUntil: string, set: string, params: Param[]): Promise<boolean> {
  return changed(t, `UPDATE messenger_bot_outbox SET ${set} WHERE id = ? AND lease_until = ?`, [...params, id, leaseUntil]);
}

export async function outboxBacklog(q: Queryable): Promise<{ pending: number; dead: number; oldest_pending_at: string | null }> {
  const r = await q.get<{ pending: number; dead: number; oldest: string | null }>(
    `SELECT count(*) FILTER (WHERE status = 'pending') AS pending, count(*) FILTER (WHERE status = 'dead') AS dead,
       MIN(CASE WHEN status = 'pending' THEN created_at END) AS oldest
     FROM messenger_bot_outbox WHERE status IN ('pending', 'dead')`,
  );
  return { pending: r?.pending ?? 0, dead: r?.dead ?? 0, oldest_pending_at: r?.oldest ?? null };
}

/** Unsent replies with an error, newest first (ops health). */
export const recentErrors = (q: Queryable, limit: number) =>
  q.all<Pick<OutboxRow, "id" | "status" | "attempts" | "next_attempt_at"> & { last_error: string }>(
    "SELECT id, status, attempts, last_error, next_attempt_at FROM messenger_bot_outbox WHERE last_error IS NOT NULL AND status <> 'sent' ORDER BY id DESC LIMIT ?",
    [limit],
  );

/** Pending and dead rows with an error, newest first (the bot preview: the status index bounds the read). */
export const unsentWithErrors = (q: Queryable, limit: number) =>
  q.all<Pick<OutboxRow, "id" | "method" | "status" | "attempts" | "next_attempt_at"> & { last_error: string }>(
    "SELECT id, method, status, attempts, last_error, next_attempt_at FROM messenger_bot_outbox WHERE status IN ('pending', 'dead') AND last_error IS NOT NULL ORDER BY id DESC LIMIT ?",
    [limit],
  );

export const newestOutboxRows = (q: Queryable, limit: number) =>
  q.all<Pick<OutboxRow, "id" | "update_id" | "chat_id" | "method" | "status" | "attempts" | "created_at" | "sent_at" | "last_error">>(
    "SELECT id, update_id, chat_id, method, status, attempts, created_at, sent_at, last_error FROM messenger_bot_outbox ORDER BY id DESC LIMIT ?",
    [limit],
  );

/**
 * The newest `cap` outbox rows (by id, which grows with created_at), counted per status and method: how many fall
 * in the window since `sinceIso`, how many were read, and the oldest read.
 */
export const outboxWindowCounts = (q: Queryable, sinceIso: string, cap: number) =>
  q.all<Pick<OutboxRow, "status" | "method"> & { n: number; scanned: number; oldest: string }>(
    `SELECT status, method, count(*) FILTER (WHERE created_at >= ?) AS n, COUNT(*) AS scanned, MIN(created_at) AS oldest
     FROM (SELECT status, method, created_at FROM messenger_bot_outbox ORDER BY id DESC LIMIT ?) recent GROUP BY status, method`,
    [sinceIso, cap],
  );

export const deadSince = (q: Queryable, sinceIso: string) =>
  countOf(q, "SELECT COUNT(*) AS n FROM messenger_bot_outbox WHERE status = 'dead' AND created_at >= ?", [sinceIso]);

// ---- updates ----

export async function lastUpdateAt(q: Queryable): Promise<string | null> {
  return (await q.get<{ at: UpdateRow["received_at"] | null }>("SELECT MAX(received_at) AS at FROM messenger_updates"))?.at ?? null;
}

/**
 * Updates since `sinceIso` per hour and command, from the newest `cap` of them down the received_at index. The
 * hour is the first 13 characters of the ISO time, grouped here and completed in TypeScript.
 */
export const updatesPerHourAndCommand = (q: Queryable, sinceIso: string, cap: number) =>
  q.all<Pick<UpdateRow, "command"> & { hour13: string; n: number }>(
    `SELECT substr(received_at, 1, 13) AS hour13, command, COUNT(*) AS n
     FROM (SELECT received_at, command FROM messenger_updates WHERE received_at >= ? ORDER BY received_at DESC LIMIT ?) recent
     GROUP BY substr(received_at, 1, 13), command`,
    [sinceIso, cap],
  );

export const recentUpdates = (q: Queryable, sinceIso: string, limit: number) =>
  q.all<Pick<UpdateRow, "update_id" | "kind" | "command" | "chat_id" | "received_at">>(
    "SELECT update_id, kind, command, chat_id, received_at FROM messenger_updates WHERE received_at >= ? ORDER BY received_at DESC, update_id DESC LIMIT ?",
    [sinceIso, limit],
  );

/**
 * Retention (src/messenger/prune.ts), each table in bounded batches (src/db/batched-delete.ts): updates down
 * messenger_updates_received_idx, sent and dead replies down messenger_bot_outbox_created_idx.
 */
export async function pruneBotRows(
  store: Store,
  updatesBefore: string,
  outboxBefore: string,
  bound: BatchBound = {},
): Promise<{ updates: BatchedDeleteResult; bot_replies: BatchedDeleteResult }> {
  const updates = await deleteInBatches(store, { table: "messenger_updates", where: "received_at < ?", params: [updatesBefore], ...bound });
  const botReplies = await deleteInBatches(store, {
    table: "messenger_bot_outbox",
    where: "status IN ('sent', 'dead') AND created_at < ?",
    params: [outboxBefore],
    ...bound,
  });
  return { updates, bot_replies: botReplies };
}
