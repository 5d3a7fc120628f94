import { inOrder } from "../db/in-order";
import { changed, type Dialect, type Param, placeholders, type Queryable } from "../db/port";
import type { RowOf } from "../db/rows";
import type { events, webhookAttempts, webhookDeliveries, webhooks } from "./tables";

// The dispatcher's SQL (src/webhooks/leases.ts, dispatcher.ts): taking due deliveries, counting their attempts,
// and writing outcomes. Written once for both engines; the one per-engine fragment is the row lock below.
// Statements of one transaction that do not depend on each other's results are issued together (inOrder): on
// PostgreSQL every statement is a round trip, and statements issued together share one.

type DeliveryRow = RowOf<typeof webhookDeliveries>;
type EventRow = RowOf<typeof events>;
type WebhookRow = RowOf<typeof webhooks>;
type AttemptRow = RowOf<typeof webhookAttempts>;

/** A due delivery with what its send needs (event, target, secrets) and what decides whether it is sent. */
export type DueRow = Pick<DeliveryRow, "id" | "status" | "attempts" | "reason_tag" | "last_error" | "webhook_id" | "partner" | "mode"> &
  Pick<
    WebhookRow,
    "target_url" | "is_active" | "deleted_at" | "secret_ciphertext" | "previous_secret_ciphertext" | "previous_secret_valid_until" | "failing_since"
  > & {
    event_public_id: EventRow["public_id"];
    event_type: EventRow["event_type"];
    event_data: EventRow["data"];
    /** next_attempt_at, or lease_until for an expired lease. */
    due: string;
  };

const DUE_COLUMNS = `d.id, d.status, d.attempts, d.reason_tag, d.last_error, d.webhook_id, d.partner, d.mode,
  e.public_id AS event_public_id, e.event_type, e.data AS event_data, w.target_url, w.is_active, w.deleted_at,
  w.secret_ciphertext, w.previous_secret_ciphertext, w.previous_secret_valid_until, w.failing_since`;
const JOINS = "JOIN events e ON e.id = d.event_id JOIN webhooks w ON w.id = d.webhook_id";

// Due work is read one state at a time, each an ordered range of deliveries_due_idx (status, next_attempt_at) for
// at most `limit` rows: an OR across the states made both engines read and sort every due row on each lease
// (2.5 ms a lease over 20,000 due rows on SQLite, against 0.08 ms). The two engines combine the ranges
// differently, so the statement is per engine:

/**
 * SQLite: the three ranges in one statement (UNION ALL), the joins reading what a send needs for the `limit`
 * rows kept. No lock is needed: a transaction here holds the database's one write lock (BEGIN IMMEDIATE). One
 * statement instead of three saves ~40 µs a lease (measured: 84 against 120 µs with 16 rows).
 */
const DUE_SQLITE = `SELECT ${DUE_COLUMNS}, c.due FROM (
    SELECT * FROM (SELECT id, next_attempt_at AS due FROM webhook_deliveries WHERE status = 'queued' AND next_attempt_at <= ? ORDER BY next_attempt_at, id LIMIT ?)
    UNION ALL
    SELECT * FROM (SELECT id, next_attempt_at AS due FROM webhook_deliveries WHERE status = 'failed' AND next_attempt_at <= ? ORDER BY next_attempt_at, id LIMIT ?)
    UNION ALL
    SELECT * FROM (SELECT id, lease_until AS due FROM webhook_deliveries WHERE status = 'processing' AND lease_until <= ? ORDER BY lease_until, id LIMIT ?)
    ORDER BY due, id LIMIT ?
  ) c JOIN webhook_deliveries d ON d.id = c.id ${JOINS}
  ORDER BY c.due, c.id`;

/**
 * PostgreSQL: one SELECT per state, each locking the rows it returns and skipping rows another instance holds
 * (FOR UPDATE … SKIP LOCKED, which PostgreSQL refuses over a UNION), so two dispatchers leasing at once never take
 * the same delivery and never wait for each other: the second reads past the first's rows to the next due ones. A
 * row committed as `processing` meanwhile fails the WHERE, which PostgreSQL checks again on the locked row. The
 * three are issued together (one round trip; they run in this order): none needs another's answer.
 */
const duePostgres = (state: "queued" | "failed" | "processing") => {
  const col = state === "processing" ? "lease_until" : "next_attempt_at";
  return `SELECT ${DUE_COLUMNS}, d.${col} AS due FROM webhook_deliveries d ${JOINS}
    WHERE d.status = '${state}' AND d.${col} <= ? ORDER BY d.${col}, d.id LIMIT ? FOR UPDATE OF d SKIP LOCKED`;
};
const DUE_POSTGRES = [duePostgres("queued"), duePostgres("failed"), duePostgres("processing")];

/**
 * Up to `limit` deliveries due at `nowIso` — queued, failed and due for retry, or processing under an expired
 * lease — oldest due first. Inside the lease transaction. On PostgreSQL up to 3 × limit rows are locked until it
 * commits (each state's own `limit`); those not taken are left unchanged and are free again at commit.
 */
export async function dueDeliveries(q: Queryable, dialect: Dialect, nowIso: string, limit: number): Promise<DueRow[]> {
  if (dialect === "sqlite") return q.all<DueRow>(DUE_SQLITE, [nowIso, limit, nowIso, limit, nowIso, limit, limit]);
  const found = (await inOrder(...DUE_POSTGRES.map((sql) => q.all<DueRow>(sql, [nowIso, limit])))).flat();
  found.sort((a, b) => (a.due < b.due ? -1 : a.due > b.due ? 1 : a.id - b.id));
  return found.slice(0, limit);
}

/** A delivery taken for an attempt (by either lease): what its send needs, its attempts (this one counted) and its attempt row. */
export type TakenRow = Omit<DueRow, "status" | "is_active" | "deleted_at" | "due" | "reason_tag" | "last_error"> & { attempt_id: number };

/**
 * PostgreSQL: the common lease in ONE statement, committed on its own — queued deliveries due now whose webhook is
 * active and whose next attempt cannot be the budget's last (attempts + 1 < max: then no interrupted attempt can
 * change what happens, as in DeliveryLeases.take), oldest due first, locked with SKIP LOCKED like dueDeliveries;
 * each marked processing under the lease with its attempt counted, its attempt row inserted, and what its send
 * needs read back. A per-dialect fragment (data-modifying CTEs; SQLite has none, and there the full lease is one
 * statement already). Everything else — failed deliveries due for a retry, expired leases, cancelled webhooks,
 * budgets near their end — is left to the full lease (DeliveryLeases).
 */
const takeQueuedText = (size: number) => `WITH due AS (
    SELECT d.id FROM webhook_deliveries d JOIN webhooks w ON w.id = d.webhook_id
    WHERE d.status = 'queued' AND d.next_attempt_at <= ? AND d.attempts + 1 < ? AND w.is_active = 1 AND w.deleted_at IS NULL
    ORDER BY d.next_attempt_at, d.id LIMIT ${size} FOR UPDATE OF d SKIP LOCKED),
  taken AS (
    UPDATE webhook_deliveries SET status = 'processing', attempts = attempts + 1, lease_until = ?, lease_token = ?, last_attempt_at = ?, updated_at = ?
    FROM due WHERE webhook_deliveries.id = due.id
    RETURNING webhook_deliveries.id, webhook_deliveries.attempts, webhook_deliveries.event_id, webhook_deliveries.webhook_id,
      webhook_deliveries.partner, webhook_deliveries.mode, webhook_deliveries.next_attempt_at),
  attempt AS (
    INSERT INTO webhook_attempts (delivery_id, attempt_no, started_at, duration_ms)
    SELECT t.id, (SELECT coalesce(max(a.attempt_no), 0) + 1 FROM webhook_attempts a WHERE a.delivery_id = t.id), CAST(? AS text), 0 FROM taken t
    RETURNING id, delivery_id)
  SELECT t.id, t.attempts, t.webhook_id, t.partner, t.mode, e.public_id AS event_public_id, e.event_type, e.data AS event_data, w.target_url,
    w.secret_ciphertext, w.previous_secret_ciphertext, w.previous_secret_valid_until, w.failing_since, a.id AS attempt_id
  FROM taken t JOIN attempt a ON a.delivery_id = t.id JOIN events e ON e.id = t.event_id JOIN webhooks w ON w.id = t.webhook_id
  ORDER BY t.next_attempt_at, t.id`;

/**
 * The sizes the one-statement lease takes, written into its text as a literal LIMIT: the largest power of two not
 * above `limit`. With the limit a parameter PostgreSQL planned the statement afresh on every call (its generic plan,
 * costed for an unknown LIMIT, never beat a custom one; forced, it read a webhook's whole queue): ~350 µs of
 * planning a lease, 27 µs a delivery through a backlog, a quarter of PostgreSQL's CPU a delivery
 * (pg_stat_statements with track_planning; bench/README.md "The lease planned once"). With a literal the plan is
 * cached after five runs on each connection; powers of two keep the texts few (at most 12: WEBHOOK_CONCURRENCY ≤ 1024).
 */
export const leaseSize = (limit: number): number => 2 ** Math.floor(Math.log2(Math.max(1, Math.min(limit, 4096))));

const TAKE_QUEUED = new Map<number, string>();

/** Takes up to leaseSize(limit) deliveries (the one-statement lease above). */
export function takeQueuedPostgres(
  q: Queryable,
  limit: number,
  maxAttempts: number,
  lease: { untilIso: string; token: string; nowIso: string },
): Promise<TakenRow[]> {
  const size = leaseSize(limit);
  let text = TAKE_QUEUED.get(size);
  if (text === undefined) TAKE_QUEUED.set(size, (text = takeQueuedText(size)));
  return q.all<TakenRow>(text, [lease.nowIso, maxAttempts, lease.untilIso, lease.token, lease.nowIso, lease.nowIso, lease.nowIso]);
}

// An expression of the UPDATEs below reads the row as it was before the UPDATE: `status = 'processing'` here
// means "its previous lease expired", and the record then says so until this attempt's outcome replaces it.
const INTERRUPTED_FIELDS = `reason_tag = CASE WHEN status = 'processing' THEN 'interrupted' ELSE reason_tag END,
  last_error = CASE WHEN status = 'processing' THEN CAST(? AS text) ELSE last_error END,
  last_status_code = CASE WHEN status = 'processing' THEN NULL ELSE last_status_code END`;

/** The latest attempt row of each delivery whose lease expired, if it has no outcome (a finished row has a status or an error). */
export async function interruptAttempts(q: Queryable, deliveryIds: number[], error: string): Promise<void> {
  if (deliveryIds.length === 0) return;
  await q.run(
    `UPDATE webhook_attempts SET reason_tag = 'interrupted', error = ?
     WHERE id IN (SELECT max(id) FROM webhook_attempts WHERE delivery_id IN (${placeholders(deliveryIds.length)}) GROUP BY delivery_id)
       AND status_code IS NULL AND error IS NULL`,
    [error, ...deliveryIds],
  );
}

/**
 * How many attempts of each delivery's current budget were interrupted (their rows marked `interrupted`: no
 * outcome recorded), for the deliveries that have any. The budget is the delivery's latest `attempts` attempt
 * rows — its attempts since the event or its latest replay — because each attempt is counted and given the next
 * attempt_no in one transaction (takeDeliveries), and a replay sets `attempts` back to 0 without removing rows.
 * An interrupted row whose late outcome its sender wrote afterwards (recordAttempt) is no longer marked.
 */
export async function interruptedInBudget(q: Queryable, deliveryIds: number[]): Promise<Map<number, number>> {
  if (deliveryIds.length === 0) return new Map();
  const rows = await q.all<{ delivery_id: number; n: number }>(
    `SELECT a.delivery_id, count(*) AS n FROM webhook_attempts a JOIN webhook_deliveries d ON d.id = a.delivery_id
     WHERE a.delivery_id IN (${placeholders(deliveryIds.length)}) AND a.reason_tag = 'interrupted'
       AND a.attempt_no > (SELECT max(b.attempt_no) FROM webhook_attempts b WHERE b.delivery_id = a.delivery_id) - d.attempts
     GROUP BY a.delivery_id`,
    deliveryIds,
  );
  return new Map(rows.map((r) => [r.delivery_id, r.n]));
}

/** Settles a delivery without sending it: cancelled (webhook gone) or dead-lettered (no attempt left). */
export async function settleDelivery(q: Queryable, id: number, status: "cancelled" | "dead_letter", nowIso: string, interruptedError: string): Promise<void> {
  await q.run(
    `UPDATE webhook_deliveries SET status = ?, next_attempt_at = NULL, lease_until = NULL, lease_token = NULL, updated_at = ?, ${INTERRUPTED_FIELDS} WHERE id = ?`,
    [status, nowIso, interruptedError, id],
  );
}

/**
 * Leases the deliveries and counts the attempt each is about to make (attempts + 1), and writes that attempt's row
 * (no outcome yet) — both before any request leaves. attempt_no is the delivery's request number across replays
 * (attempts restarts at 0 on a replay), unique per delivery (attempts_delivery_no_idx): an attempt doubled by two
 * senders fails on that index instead of being recorded twice. Returns, per delivery id, its attempts and attempt row.
 * The two statements are issued together (one round trip on PostgreSQL, in this order): the attempt rows read the
 * deliveries' ids only, and the attempts of earlier requests, none of which the lease's UPDATE changes.
 */
export async function takeDeliveries(
  q: Queryable,
  ids: number[],
  lease: { untilIso: string; token: string; nowIso: string; interruptedError: string },
): Promise<Map<number, { attempts: number; attemptId: number }>> {
  const out = new Map<number, { attempts: number; attemptId: number }>();
  if (ids.length === 0) return out;
  const [taken, rows] = await inOrder(
    q.all<Pick<DeliveryRow, "id" | "attempts">>(
      `UPDATE webhook_deliveries SET status = 'processing', attempts = attempts + 1, lease_until = ?, lease_token = ?, last_attempt_at = ?, updated_at = ?,
         ${INTERRUPTED_FIELDS}
       WHERE id IN (${placeholders(ids.length)}) RETURNING id, attempts`,
      [lease.untilIso, lease.token, lease.nowIso, lease.nowIso, lease.interruptedError, ...ids],
    ),
    q.all<Pick<AttemptRow, "id" | "delivery_id">>(
      `INSERT INTO webhook_attempts (delivery_id, attempt_no, started_at, duration_ms)
       SELECT d.id, (SELECT coalesce(max(a.attempt_no), 0) + 1 FROM webhook_attempts a WHERE a.delivery_id = d.id), CAST(? AS text), 0
       FROM webhook_deliveries d WHERE d.id IN (${placeholders(ids.length)}) RETURNING id, delivery_id`,
      [lease.nowIso, ...ids],
    ),
  );
  const attemptOf = new Map(rows.map((r) => [r.delivery_id, r.id]));
  for (const t of taken) out.set(t.id, { attempts: t.attempts, attemptId: attemptOf.get(t.id)! });
  return out;
}

/** Extends a lease still held (guarded by its token); false when another dispatcher owns the delivery now. */
export async function renewLease(q: Queryable, id: number, token: string, untilIso: string): Promise<boolean> {
  return changed(q, "UPDATE webhook_deliveries SET lease_until = ? WHERE id = ? AND lease_token = ?", [untilIso, id, token]);
}

export interface AttemptOutcome {
  startedAtIso: string;
  durationMs: number;
  statusCode: number | null;
  error: string | null;
  reasonTag: string | null;
  excerpt: string | null;
}

/** An attempt's outcome as the SET of its row's UPDATE (attemptOutcomeParams are its `?`s). */
const ATTEMPT_OUTCOME_SET = "started_at = ?, duration_ms = ?, status_code = ?, error = ?, reason_tag = ?, response_excerpt = ?";
const attemptOutcomeParams = (o: AttemptOutcome): Param[] => [o.startedAtIso, o.durationMs, o.statusCode, o.error, o.reasonTag, o.excerpt];

export async function recordAttempt(q: Queryable, attemptId: number, o: AttemptOutcome): Promise<void> {
  await q.run(`UPDATE webhook_attempts SET ${ATTEMPT_OUTCOME_SET} WHERE id = ?`, [...attemptOutcomeParams(o), attemptId]);
}

/**
 * A delivery's record after a successful attempt, guarded by its lease token; its `?`s: last_error,
 * last_status_code, last_attempt_at, delivered_at, updated_at, id, lease_token. It keeps the latest replay's reason.
 */
const DELIVERY_SUCCEEDED = `UPDATE webhook_deliveries SET status = 'succeeded', next_attempt_at = NULL, lease_until = NULL, lease_token = NULL,
    reason_tag = (SELECT rp.reason_tag FROM webhook_replays rp WHERE rp.delivery_id = webhook_deliveries.id ORDER BY rp.id DESC LIMIT 1),
    last_error = ?, last_status_code = ?, last_attempt_at = ?, delivered_at = ?, updated_at = ?
  WHERE id = ? AND lease_token = ?`;

/**
 * The delivery's record after its attempt, guarded by the lease token: false when the lease was lost (another
 * dispatcher owns the delivery; its outcome counts). On success the record keeps the reason of the latest replay,
 * if any — a replayed delivery stays findable by why it was replayed; on failure it says why it failed.
 */
export async function recordDelivery(
  q: Queryable,
  d: { id: number; token: string },
  r: { status: "succeeded" | "failed" | "dead_letter"; nextIso: string | null; reasonTag: string | null; error: string | null; statusCode: number | null },
  startedAtIso: string,
  nowIso: string,
): Promise<boolean> {
  const common: Param[] = [r.error, r.statusCode, startedAtIso];
  const res =
    r.status === "succeeded"
      ? await q.run(DELIVERY_SUCCEEDED, [...common, nowIso, nowIso, d.id, d.token])
      : await q.run(
          `UPDATE webhook_deliveries SET status = ?, next_attempt_at = ?, lease_until = NULL, lease_token = NULL, reason_tag = ?,
             last_error = ?, last_status_code = ?, last_attempt_at = ?, updated_at = ?
           WHERE id = ? AND lease_token = ?`,
          [r.status, r.nextIso, r.reasonTag, ...common, nowIso, d.id, d.token],
        );
  return res.changes > 0;
}

/** A delivery that succeeded, with its attempt's outcome: written with others by recordSuccesses. */
export interface Success {
  id: number;
  token: string;
  attemptId: number;
  nowIso: string;
  attempt: AttemptOutcome;
}

/**
 * PostgreSQL: a success's two records in ONE statement (a data-modifying CTE), the delivery's first: the attempt's
 * UPDATE joins the count of the delivery's, so PostgreSQL runs that one to completion (and takes its row lock)
 * before it touches the attempt row, the order the lease locks them in. Answers whether the delivery was still
 * held. One statement instead of two: ~4 µs less of the dispatcher's CPU a delivery, deliveries/s +3 % (three
 * alternated pairs of drains, tests' cluster; bench/README.md "A success in one statement").
 */
const SUCCESS_POSTGRES = `WITH d AS (${DELIVERY_SUCCEEDED} RETURNING id)
  UPDATE webhook_attempts a SET ${ATTEMPT_OUTCOME_SET} FROM (SELECT count(*) AS n FROM d) h WHERE a.id = ? RETURNING h.n AS held`;

const successParams = (r: Success): Param[] => {
  const o = r.attempt;
  return [o.error, o.statusCode, o.startedAtIso, r.nowIso, r.nowIso, r.id, r.token, ...attemptOutcomeParams(o), r.attemptId];
};

/**
 * Records several successes in one transaction, each guarded by its lease token as recordDelivery does, with no
 * savepoint between them (none of these statements fails on its own: a lost lease changes no row). Every statement
 * is issued at once (one round trip on PostgreSQL, run in call order: a delivery's record, then its attempt's, as
 * the lease locks them). Returns the ids of the deliveries still held; an attempt's outcome is written either way
 * (recordDelivery says why). One statement per row by its primary key, not one UPDATE … FROM a list of rows: that
 * join is planned from table statistics, and a webhook_attempts table filled since its last ANALYZE was read whole
 * for every batch (33 ms a statement; bench/README.md, "Webhook successes written together").
 */
export async function recordSuccesses(q: Queryable, rows: Success[]): Promise<Set<number>> {
  const byId = [...rows].sort((a, b) => a.id - b.id);
  if (q.dialect === "postgres") {
    const held = await inOrder(...byId.map((r) => q.get<{ held: number }>(SUCCESS_POSTGRES, successParams(r))));
    return new Set(byId.filter((_, k) => Number(held[k]?.held ?? 0) > 0).map((r) => r.id));
  }
  const written = await inOrder(
    ...byId.flatMap((r) => [
      recordDelivery(
        q,
        { id: r.id, token: r.token },
        { status: "succeeded", nextIso: null, reasonTag: null, error: r.attempt.error, statusCode: r.attempt.statusCode },
        r.attempt.startedAtIso,
        r.nowIso,
      ),
      recordAttempt(q, r.attemptId, r.attempt).then(() => true),
    ]),
  );
  return new Set(byId.filter((_, k) => written[2 * k]).map((r) => r.id));
}
