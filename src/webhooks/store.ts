import { type BatchBound, DEFAULT_MAX_MS, repeatBatches } from "../db/batched-delete";
import { inOrder } from "../db/in-order";
import { changed, countOf, type Dialect, insertedId, type Param, type Queryable, type Store, Where } from "../db/port";
import type { RowOf } from "../db/rows";
import type { Owner } from "../auth/actors";
import type { webhooks } from "./tables";

// The SQL of the webhooks and events tables (the outbox's event rows, the partner's receivers), written once for
// both engines (docs/design.md §8a). Deliveries, attempts and replays are in deliveries-store.ts and lease-store.ts.

export type WebhookRow = RowOf<typeof webhooks>;

// ---- the outbox: an event and its deliveries, in the producer's transaction

const INSERT_EVENT = "INSERT INTO events (public_id, partner, mode, event_type, data, created_at) VALUES (?, ?, ?, ?, ?, ?) RETURNING id";
// One queued delivery per active subscribed webhook, in one statement. The casts name the parameters' types for
// PostgreSQL, which cannot infer them from a SELECT list.
const FAN_OUT = `INSERT INTO webhook_deliveries (event_id, webhook_id, partner, mode, status, attempts, next_attempt_at, created_at, updated_at)
  SELECT CAST(? AS bigint), w.id, w.partner, w.mode, 'queued', 0, CAST(? AS text), CAST(? AS text), CAST(? AS text)
  FROM webhooks w WHERE w.partner = ? AND w.mode = ? AND w.event_type = ? AND w.is_active = 1 AND w.deleted_at IS NULL
  RETURNING id`;
/**
 * Whether any webhook subscribes, asked before the fan-out on SQLite only: most events have no receiver there, and
 * this read (0.6 µs) is cheaper than the INSERT … SELECT that finds none (3.1 µs of a credit's ~45 µs of SQL;
 * bench/README.md "Sub-journal in memory"). On PostgreSQL a statement is a round trip, so the event and its fan-out go as one (POSTGRES_EVENT_AND_FAN_OUT).
 */
const ANY_SUBSCRIBED =
  "SELECT 1 AS one FROM webhooks w WHERE w.partner = ? AND w.mode = ? AND w.event_type = ? AND w.is_active = 1 AND w.deleted_at IS NULL LIMIT 1";
const INSERT_ONE_DELIVERY = `INSERT INTO webhook_deliveries (event_id, webhook_id, partner, mode, status, attempts, next_attempt_at, created_at, updated_at)
  VALUES (?, ?, ?, ?, 'queued', 0, ?, ?, ?) RETURNING id`;

export interface EventRow {
  publicId: string;
  owner: Owner;
  eventType: string;
  data: string;
  nowIso: string;
}

const eventParams = (e: EventRow): Param[] => [e.publicId, e.owner.partner, e.owner.mode, e.eventType, e.data, e.nowIso];
const fanOutParams = (eventId: number, e: EventRow): Param[] => [eventId, e.nowIso, e.nowIso, e.nowIso, e.owner.partner, e.owner.mode, e.eventType];
const oneParams = (eventId: number, webhookId: number, { owner, nowIso }: EventRow) => [eventId, webhookId, owner.partner, owner.mode, nowIso, nowIso, nowIso];
const ids = (rows: Array<{ id: number }>) => rows.map((r) => r.id).sort((a, b) => a - b);

/**
 * PostgreSQL: the event and its fan-out in one statement (one round trip instead of two): a row per queued
 * delivery, or one with no delivery id when no webhook subscribes.
 */
const POSTGRES_EVENT_AND_FAN_OUT = `WITH e AS (${INSERT_EVENT}),
  d AS (INSERT INTO webhook_deliveries (event_id, webhook_id, partner, mode, status, attempts, next_attempt_at, created_at, updated_at)
    SELECT e.id, w.id, w.partner, w.mode, 'queued', 0, CAST(? AS text), CAST(? AS text), CAST(? AS text)
    FROM e, webhooks w WHERE w.partner = ? AND w.mode = ? AND w.event_type = ? AND w.is_active = 1 AND w.deleted_at IS NULL
    RETURNING id)
  SELECT e.id AS id, d.id AS delivery_id FROM e LEFT JOIN d ON true`;

/** The event row and its deliveries (to every subscribed webhook, or to `onlyWebhookId`); their ids. */
export async function insertEvent(q: Queryable, e: EventRow, onlyWebhookId: number | null): Promise<{ id: number; deliveryIds: number[] }> {
  if (onlyWebhookId === null && q.dialect === "postgres") {
    const rows = await q.all<{ id: number; delivery_id: number | null }>(POSTGRES_EVENT_AND_FAN_OUT, [...eventParams(e), ...fanOutParams(0, e).slice(1)]);
    return { id: rows[0]!.id, deliveryIds: ids(rows.flatMap((r) => (r.delivery_id === null ? [] : [{ id: r.delivery_id }]))) };
  }
  const id = await insertedId(q, INSERT_EVENT, eventParams(e));
  if (onlyWebhookId !== null) return { id, deliveryIds: ids(await q.all<{ id: number }>(INSERT_ONE_DELIVERY, oneParams(id, onlyWebhookId, e))) };
  if (q.dialect === "sqlite" && !(await q.get(ANY_SUBSCRIBED, [e.owner.partner, e.owner.mode, e.eventType]))) return { id, deliveryIds: [] };
  const rows = await q.all<{ id: number }>(FAN_OUT, fanOutParams(id, e));
  return { id, deliveryIds: ids(rows) };
}

// ---- webhooks

const OWNED = "partner = ? AND mode = ? AND deleted_at IS NULL";

export const webhookOf = (q: Queryable, owner: Owner, id: number) =>
  q.get<WebhookRow>(`SELECT * FROM webhooks WHERE id = ? AND ${OWNED}`, [id, owner.partner, owner.mode]);

export const countWebhooks = (q: Queryable, owner: Owner) => countOf(q, `SELECT count(*) AS n FROM webhooks WHERE ${OWNED}`, [owner.partner, owner.mode]);

/**
 * A new webhook; its secret is sealed with its id (the AAD), so it is written second, by `seal` — in the same
 * transaction, so nobody ever sees the row without it.
 */
export async function insertWebhook(
  q: Queryable,
  owner: Owner,
  input: { event_type: string; target_url: string; description: string | null },
  nowIso: string,
  seal: (id: number) => string,
): Promise<WebhookRow> {
  const id = await insertedId(
    q,
    `INSERT INTO webhooks (partner, mode, event_type, target_url, description, secret_ciphertext, is_active, created_at, updated_at)
     VALUES (?, ?, ?, ?, ?, '', 1, ?, ?) RETURNING id`,
    [owner.partner, owner.mode, input.event_type, input.target_url, input.description, nowIso, nowIso],
  );
  return (await q.get<WebhookRow>("UPDATE webhooks SET secret_ciphertext = ? WHERE id = ? RETURNING *", [seal(id), id]))!;
}

export interface WebhookFilter {
  event_type?: string;
  is_active?: boolean;
  /** Keyset cursor: ids below this one. */
  before: number | null;
  limit: number;
  offset: number;
}

/** The owner's webhooks, newest first. Only the filters given are in the SQL (no `? IS NULL OR …`). */
export function listWebhookRows(q: Queryable, owner: Owner, f: WebhookFilter): Promise<WebhookRow[]> {
  const w = new Where()
    .add(OWNED, owner.partner, owner.mode)
    .when(f.event_type, "event_type = ?")
    .when(f.is_active === undefined ? undefined : f.is_active ? 1 : 0, "is_active = ?")
    .when(f.before, "id < ?");
  return q.all<WebhookRow>(`SELECT * FROM webhooks ${w.sql} ORDER BY id DESC LIMIT ? OFFSET ?`, [...w.params, f.limit, f.offset]);
}

/**
 * Pending deliveries of one webhook: the condition of every cancellation batch below, a range of
 * deliveries_webhook_idx (webhook_id, status) — a batch reads the rows it cancels and no others.
 */
const PENDING_OF = "webhook_id = ? AND status IN ('queued', 'failed')";
const CANCELLED = "status = 'cancelled', next_attempt_at = NULL, updated_at = ?";

/**
 * One batch of a webhook's pending deliveries cancelled, by the row's own address as deleteInBatches deletes
 * (src/db/batched-delete.ts): rowid on SQLite; on PostgreSQL ctid, a TID scan of the chosen rows. A row the
 * dispatcher changed meanwhile (its lease settles a deleted webhook's delivery as cancelled itself) has a new ctid
 * and is skipped. A named per-dialect fragment: neither engine has the other's row address.
 */
const CANCEL_BATCH: Record<Dialect, string> = {
  sqlite: `UPDATE webhook_deliveries SET ${CANCELLED} WHERE rowid IN (SELECT rowid FROM webhook_deliveries WHERE ${PENDING_OF} LIMIT ?)`,
  postgres: `UPDATE webhook_deliveries SET ${CANCELLED} WHERE ctid = ANY(ARRAY(SELECT ctid FROM webhook_deliveries WHERE ${PENDING_OF} LIMIT ?))`,
};

/**
 * PostgreSQL: the batch's choice with seq scans priced out, around its statement only. Under a LIMIT PostgreSQL
 * reckons a Seq Scan finds the first rows soon when many rows match its estimate, which takes webhook_id and status
 * to be independent: over 458,000 deliveries, 200,000 of them one webhook's delivered ones and 200 its pending, it
 * read the whole table for every batch (41–64 ms) where deliveries_webhook_idx reads the 200 (0.1 ms).
 */
const SEQ_SCAN_OFF = "SET LOCAL enable_seqscan = off";
const SEQ_SCAN_ON = "SET LOCAL enable_seqscan = on";

/** Cancels up to `limit` pending deliveries of the webhook: how many it did. */
async function cancelBatch(q: Queryable, webhookId: number, nowIso: string, limit: number): Promise<number> {
  const params = [nowIso, webhookId, limit];
  if (q.dialect === "sqlite") return (await q.run(CANCEL_BATCH.sqlite, params)).changes;
  // Sent together (one round trip), run in this order.
  const [, cancelled] = await inOrder(q.run(SEQ_SCAN_OFF), q.run(CANCEL_BATCH.postgres, params), q.run(SEQ_SCAN_ON));
  return cancelled.changes;
}

/**
 * How many pending deliveries a webhook's delete cancels in its own transaction; the rest are cancelled after its
 * commit, in batches of as many (cancelPendingDeliveries). A receiver down for days can leave hundreds of thousands
 * queued, and one UPDATE over them all holds SQLite's one thread (every request waits) as long as it runs: 0.66 s
 * for 200,000 of them among 800,000 deliveries. Fewer rows a batch than a prune's (DEFAULT_BATCH_ROWS): each row
 * cancelled changes three of the table's indexes, and a batch of 2,000 took 5.6 ms (median) where 500 took 1.6 ms.
 */
export const CANCEL_BATCH_ROWS = 500;

/**
 * Soft delete (history stays readable) and the first `batchRows` of its pending deliveries cancelled, inside the
 * caller's transaction; `more` when that batch was full (some may be left for cancelPendingDeliveries). Meanwhile
 * none of those left is sent: the dispatcher's lease takes no delivery of a deleted webhook (it settles it as
 * cancelled, src/webhooks/leases.ts). Null when the owner has no such webhook (also when another instance deleted
 * it first).
 */
export async function softDeleteWebhook(
  q: Queryable,
  owner: Owner,
  id: number,
  nowIso: string,
  batchRows = CANCEL_BATCH_ROWS,
): Promise<{ cancelled: number; more: boolean } | null> {
  const params = [nowIso, nowIso, id, owner.partner, owner.mode];
  const gone = await q.run(`UPDATE webhooks SET deleted_at = ?, is_active = 0, updated_at = ? WHERE id = ? AND ${OWNED}`, params);
  if (gone.changes === 0) return null;
  const cancelled = await cancelBatch(q, id, nowIso, batchRows);
  return { cancelled, more: cancelled >= batchRows };
}

export interface CancelResult {
  cancelled: number;
  /** Batches run: one statement each (on PostgreSQL, with its planner setting, one transaction each). */
  statements: number;
  /** False when the call stopped at its time bound with deliveries possibly left. */
  done: boolean;
}

/**
 * Cancels the pending deliveries of a deleted webhook in batches of `batchRows`, each its own short statement, the
 * event loop free between them (repeatBatches); stops after `maxMs`. `store` is the store itself, never a
 * transaction's handle: the batches commit one by one. On SQLite a batch shorter than its limit means none are left;
 * on PostgreSQL a row the dispatcher changed meanwhile is skipped, so a short batch proves nothing and the batches
 * go on until one cancels none.
 */
export async function cancelPendingDeliveries(store: Store, webhookId: number, nowIso: string, bound: BatchBound = {}): Promise<CancelResult> {
  const r = await repeatBatches({ batchRows: CANCEL_BATCH_ROWS, ...bound }, async (limit) => {
    if (store.dialect === "sqlite") {
      const changed = await cancelBatch(store, webhookId, nowIso, limit);
      return { deleted: changed, statements: 1, chosen: changed };
    }
    // A transaction of its own, which the planner's setting does not outlive.
    const changed = await store.tx((t) => cancelBatch(t, webhookId, nowIso, limit));
    return { deleted: changed, statements: 1, chosen: changed > 0 ? limit : 0 };
  });
  return { cancelled: r.deleted, statements: r.statements, done: r.done };
}

/**
 * Deleted webhooks that still have pending deliveries: those whose delete's batches were cut short (a process
 * stopped between them). The webhooks table is read whole, one row per webhook ever registered (at most 100 live
 * ones an owner), each probed down deliveries_webhook_idx; there is no index on deleted_at to read instead.
 */
const DELETED_WITH_PENDING = `SELECT w.id FROM webhooks w WHERE w.deleted_at IS NOT NULL
  AND EXISTS (SELECT 1 FROM webhook_deliveries d WHERE d.webhook_id = w.id AND d.status IN ('queued', 'failed')) ORDER BY w.id`;

/**
 * The webhook-prune job's sweep: every deleted webhook's pending deliveries cancelled (cancelPendingDeliveries), all
 * within one time bound. Until it runs, the dispatcher cancels them as they come due instead of sending them.
 */
export async function cancelPendingOfDeleted(store: Store, nowIso: string, bound: BatchBound = {}): Promise<CancelResult> {
  const began = performance.now();
  const maxMs = bound.maxMs ?? DEFAULT_MAX_MS;
  const webhooks = await store.all<{ id: number }>(DELETED_WITH_PENDING);
  const total: CancelResult = { cancelled: 0, statements: 1, done: true };
  for (const { id } of webhooks) {
    const left = maxMs - (performance.now() - began);
    if (left <= 0) return { ...total, done: false };
    const r = await cancelPendingDeliveries(store, id, nowIso, { ...bound, maxMs: left });
    total.cancelled += r.cancelled;
    total.statements += r.statements;
    if (!r.done) return { ...total, done: false };
  }
  return total;
}

/** New current secret; the old one kept as previous until `validUntil` (null: dropped at once). */
export const rotateSecret = (q: Queryable, id: number, sealed: string, previous: string | null, validUntil: string | null, nowIso: string) =>
  q.get<WebhookRow>(
    "UPDATE webhooks SET secret_ciphertext = ?, previous_secret_ciphertext = ?, previous_secret_valid_until = ?, updated_at = ? WHERE id = ? RETURNING *",
    [sealed, previous, validUntil, nowIso, id],
  );

// ---- webhook health, written with a delivery's outcome

export const clearFailing = (q: Queryable, webhookId: number) => q.run("UPDATE webhooks SET failing_since = NULL WHERE id = ?", [webhookId]);

export const markFailing = (q: Queryable, webhookId: number, nowIso: string) =>
  q.run("UPDATE webhooks SET failing_since = ? WHERE id = ? AND failing_since IS NULL", [nowIso, webhookId]);

/** Disables an active webhook; true when this call did (so its webhook.disabled event is emitted once). */
export async function disableWebhook(q: Queryable, webhookId: number, reason: string, nowIso: string): Promise<boolean> {
  return changed(q, "UPDATE webhooks SET is_active = 0, disabled_reason = ?, updated_at = ? WHERE id = ? AND is_active = 1", [reason, nowIso, webhookId]);
}
