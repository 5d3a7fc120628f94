import { type BatchBound, type BatchedDeleteResult, deleteInBatches } from "../../db/batched-delete";
import { changed, countOf, type Dialect, type Param, type Queryable, type Store } from "../../db/port";
import type { RowOf } from "../../db/rows";
import type { PageRequest } from "../../http/pagination";
import { newestFirst } from "./newest-first";
import type { statusSubscriberDeliveries, statusSubscribers } from "../tables";

// status_subscribers and their outbox, status_subscriber_deliveries: who receives incident events, what is queued
// for them, and the notifier's leases. Written once for both engines; the one per-engine fragment is the row lock
// of the lease (below).

export type SubscriberRow = RowOf<typeof statusSubscribers>;
type DeliveryRow = RowOf<typeof statusSubscriberDeliveries>;

export function subscriberByUrl(q: Queryable, url: string): Promise<SubscriberRow | null> {
  return q.get<SubscriberRow>("SELECT * FROM status_subscribers WHERE url = ?", [url]);
}

export function subscriberById(q: Queryable, id: number): Promise<SubscriberRow | null> {
  return q.get<SubscriberRow>("SELECT * FROM status_subscribers WHERE id = ?", [id]);
}

export const countSubscribers = (q: Queryable) => countOf(q, "SELECT count(*) AS n FROM status_subscribers");

/**
 * Inserts a subscriber, claiming its URL in the same statement: null when the URL is subscribed already (on
 * PostgreSQL after the transaction that subscribed it ends), so two instances registering one URL at once make one.
 */
export function insertSubscriber(t: Queryable, s: Omit<SubscriberRow, "id" | "secret_ciphertext">): Promise<SubscriberRow | null> {
  return t.get<SubscriberRow>(
    `INSERT INTO status_subscribers (url, description, event_types, secret_ciphertext, created_by, created_at) VALUES (?, ?, ?, '', ?, ?)
     ON CONFLICT (url) DO NOTHING RETURNING *`,
    [s.url, s.description, s.event_types, s.created_by, s.created_at],
  );
}

export async function setSubscriberSecret(t: Queryable, id: number, ciphertext: string): Promise<void> {
  await t.run("UPDATE status_subscribers SET secret_ciphertext = ? WHERE id = ?", [ciphertext, id]);
}

export const subscriberPage = (q: Queryable, page: PageRequest) => newestFirst<SubscriberRow>(q, "status_subscribers", page);

export async function deleteSubscriberRows(t: Queryable, id: number): Promise<void> {
  await t.run("DELETE FROM status_subscriber_deliveries WHERE subscriber_id = ?", [id]);
  await t.run("DELETE FROM status_subscribers WHERE id = ?", [id]);
}

/** A subscriber's deliveries by status, and its latest attempt. */
export async function deliveryHealthOf(q: Queryable, id: number) {
  const counts = await q.all<{ status: DeliveryRow["status"]; n: number }>(
    "SELECT status, count(*) AS n FROM status_subscriber_deliveries WHERE subscriber_id = ? GROUP BY status",
    [id],
  );
  const last = await q.get<Pick<DeliveryRow, "last_attempt_at" | "last_error">>(
    `SELECT last_attempt_at, last_error FROM status_subscriber_deliveries WHERE subscriber_id = ? AND last_attempt_at IS NOT NULL
     ORDER BY last_attempt_at DESC, id DESC LIMIT 1`,
    [id],
  );
  return { counts, last };
}

// ------------------------------------------------------------------------------------------ the outbox

export function subscriberTypes(q: Queryable) {
  return q.all<Pick<SubscriberRow, "id" | "event_types">>("SELECT id, event_types FROM status_subscribers ORDER BY id");
}

/** One queued delivery per subscriber: the same event (id and body) for each. Inside the incident change's transaction. */
export async function queueDeliveries(
  t: Queryable,
  subscriberIds: readonly number[],
  e: { eventId: string; eventType: string; body: string; nowIso: string },
): Promise<void> {
  if (subscriberIds.length === 0) return;
  const params: Param[] = [];
  for (const id of subscriberIds) params.push(id, e.eventId, e.eventType, e.body, e.nowIso, e.nowIso, e.nowIso);
  await t.run(
    `INSERT INTO status_subscriber_deliveries (subscriber_id, event_id, event_type, body, status, attempts, next_attempt_at, created_at, updated_at)
     VALUES ${subscriberIds.map(() => "(?, ?, ?, ?, 'queued', 0, ?, ?, ?)").join(", ")}`,
    params,
  );
}

/** A due delivery with where it goes and what signs it. */
export type DueDelivery = Pick<DeliveryRow, "id" | "subscriber_id" | "event_id" | "event_type" | "body" | "attempts"> &
  Pick<SubscriberRow, "url" | "secret_ciphertext">;

const DUE = `SELECT d.id, d.subscriber_id, d.event_id, d.event_type, d.body, d.attempts, s.url, s.secret_ciphertext
  FROM status_subscriber_deliveries d JOIN status_subscribers s ON s.id = d.subscriber_id
  WHERE d.status IN ('queued', 'failed') AND d.next_attempt_at <= ? AND (d.lease_until IS NULL OR d.lease_until <= ?)
  ORDER BY d.next_attempt_at, d.id LIMIT ?`;

/**
 * PostgreSQL: the due rows are locked as they are read, skipping rows another instance's lease transaction holds
 * (FOR UPDATE OF d SKIP LOCKED), so two notifiers leasing at once never take the same delivery and never wait for
 * each other; a row leased meanwhile fails `lease_until <= now`, which PostgreSQL checks again on the locked row.
 * SQLite has no row locks and needs none: the lease transaction holds the database's one write lock.
 */
const DUE_POSTGRES = `${DUE} FOR UPDATE OF d SKIP LOCKED`;

/** Up to `limit` deliveries due at `nowIso` and not under a live lease, oldest due first. Inside the lease transaction. */
export function dueDeliveries(t: Queryable, dialect: Dialect, nowIso: string, limit: number): Promise<DueDelivery[]> {
  return t.all<DueDelivery>(dialect === "postgres" ? DUE_POSTGRES : DUE, [nowIso, nowIso, limit]);
}

/** A lease that expired after the last allowed attempt (the sender died): nothing more may be sent. */
export async function deadLetterInterrupted(t: Queryable, id: number, nowIso: string): Promise<void> {
  await t.run(
    "UPDATE status_subscriber_deliveries SET status = 'dead_letter', lease_until = NULL, lease_token = NULL, last_error = coalesce(last_error, 'interrupted'), updated_at = ? WHERE id = ?",
    [nowIso, id],
  );
}

/** Leases a delivery and counts the attempt about to be made, before the request leaves. */
export async function leaseDelivery(t: Queryable, id: number, lease: { untilIso: string; token: string; nowIso: string }): Promise<void> {
  await t.run("UPDATE status_subscriber_deliveries SET lease_until = ?, lease_token = ?, attempts = attempts + 1, updated_at = ? WHERE id = ?", [
    lease.untilIso,
    lease.token,
    lease.nowIso,
    id,
  ]);
}

/** Records an attempt's outcome, guarded by the lease token: false when the lease was lost (another sender owns it). */
export async function recordOutcome(
  q: Queryable,
  d: { id: number; token: string },
  r: {
    status: "succeeded" | "failed" | "dead_letter";
    nextIso: string | null;
    error: string | null;
    statusCode: number | null;
    startedAtIso: string;
    nowIso: string;
  },
): Promise<boolean> {
  return changed(
    q,
    `UPDATE status_subscriber_deliveries SET status = ?, next_attempt_at = ?, lease_until = NULL, lease_token = NULL, last_error = ?, last_status_code = ?,
       last_attempt_at = ?, delivered_at = coalesce(CAST(? AS text), delivered_at), updated_at = ? WHERE id = ? AND lease_token = ?`,
    [r.status, r.nextIso, r.error, r.statusCode, r.startedAtIso, r.status === "succeeded" ? r.nowIso : null, r.nowIso, d.id, d.token],
  );
}

/**
 * The condition of status_deliveries_settled_idx, repeated in the prune's statements: SQLite uses a partial index only
 * for a query whose WHERE names its condition.
 */
const SETTLED = "status IN ('succeeded', 'dead_letter')";

/**
 * Delivered notifications after `deliveredBefore`, dead letters after `deadBefore`: two passes (one range each down
 * status_deliveries_settled_idx, where an OR of the two would read every settled row), each in bounded batches.
 */
export async function pruneDeliveries(store: Store, deliveredBefore: string, deadBefore: string, bound: BatchBound = {}): Promise<BatchedDeleteResult> {
  const table = "status_subscriber_deliveries";
  const delivered = await deleteInBatches(store, {
    table,
    where: `${SETTLED} AND status = 'succeeded' AND updated_at < ?`,
    params: [deliveredBefore],
    ...bound,
  });
  const dead = await deleteInBatches(store, { table, where: `${SETTLED} AND status = 'dead_letter' AND updated_at < ?`, params: [deadBefore], ...bound });
  return { deleted: delivered.deleted + dead.deleted, statements: delivered.statements + dead.statements, done: delivered.done && dead.done };
}
