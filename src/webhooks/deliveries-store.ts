import { type BatchBound, type BatchedDelete, type BatchedDeleteResult, deleteInBatches } from "../db/batched-delete";
import { countOf, type Dialect, placeholders, type Queryable, scanWindow, type Store, Where } from "../db/port";
import { apartTask } from "../db/apart";
import type { RowOf } from "../db/rows";
import type { Owner } from "../auth/actors";
import type { events, webhookDeliveries, webhookReplays, webhooks } from "./tables";

// The SQL of the delivery records as partners and operators read and replay them (lists, dead letters, replay
// history, health counts, retention), written once for both engines. The dispatcher's own SQL is lease-store.ts.

type D = RowOf<typeof webhookDeliveries>;

export type DeliveryStatus = D["status"];

/** A delivery as the lists show it: its row but the owner and the lease, with its event's id and type and its webhook's target. */
export type DeliveryRow = Omit<D, "event_id" | "partner" | "mode" | "lease_until" | "lease_token"> &
  Pick<RowOf<typeof webhooks>, "target_url"> & { event_public_id: RowOf<typeof events>["public_id"]; event_type: RowOf<typeof events>["event_type"] };

/** A delivery as the operators' lists show it: with its owner. */
export type OperatorRow = DeliveryRow & Pick<D, "partner" | "mode">;

export type ReplayRow = Pick<RowOf<typeof webhookReplays>, "delivery_id" | "reason_tag" | "note" | "replayed_at">;

const SELECT = `SELECT d.id, d.partner, d.mode, d.webhook_id, e.public_id AS event_public_id, e.event_type, d.status, d.attempts, d.reason_tag,
  d.last_error, d.last_status_code, w.target_url, d.created_at, d.updated_at, d.last_attempt_at, d.next_attempt_at, d.delivered_at
  FROM webhook_deliveries d JOIN events e ON e.id = d.event_id JOIN webhooks w ON w.id = d.webhook_id`;

export interface DeliveryFilter {
  status?: string;
  reason_tag?: string;
  fromIso: string | null;
  toIso: string | null;
  webhook_id?: number;
  event_type?: string;
  before: number | null;
  limit: number;
  offset: number;
}

/**
 * The owner's delivery records, newest first. `reason_tag` matches the record's current tag or any replay in its
 * history. No index holds the filters together (event_type is the event's, reason_tag may be a replay's): with any
 * of them a page looks through at most SCAN_WINDOW of the owner's deliveries from where it starts (`scanWindow`), and
 * `resumeAt` is where the next page starts when the window ended first (the page may be short, even empty).
 */
export async function listDeliveryRows(q: Queryable, owner: Owner, f: DeliveryFilter): Promise<{ rows: DeliveryRow[]; resumeAt: number | null }> {
  const w = new Where().add("d.partner = ? AND d.mode = ?", owner.partner, owner.mode);
  // `failed` takes in the dead letters: the record shows them as failed with is_dead_letter (deliveryView).
  if (f.status === "failed") w.add("d.status IN ('failed', 'dead_letter')");
  else w.when(f.status, "d.status = ?");
  w.when(f.reason_tag, "(d.reason_tag = ? OR EXISTS (SELECT 1 FROM webhook_replays r WHERE r.delivery_id = d.id AND r.reason_tag = ?))", 2)
    .when(f.fromIso, "d.created_at >= ?")
    .when(f.toIso, "d.created_at < ?")
    .when(f.webhook_id, "d.webhook_id = ?")
    .when(f.event_type, "e.event_type = ?")
    .when(f.before, "d.id < ?");
  const filtered = [f.status, f.reason_tag, f.fromIso, f.toIso, f.webhook_id, f.event_type].some((v) => v !== undefined && v !== null);
  const scope = new Where().add("partner = ? AND mode = ?", owner.partner, owner.mode).when(f.before, "id < ?");
  const win = filtered ? await scanWindow(q, "webhook_deliveries", scope) : null;
  if (win && win.edge !== null) w.add(`d.id ${win.bound}`, win.edge);
  const rows = await q.all<DeliveryRow>(`${SELECT} ${w.sql} ORDER BY d.id DESC LIMIT ? OFFSET ?`, [...w.params, f.limit, f.offset]);
  return { rows, resumeAt: (await win?.resumeAt(rows.length < f.limit)) ?? null };
}

/** The replay history of each delivery in `ids`, oldest first. */
export function replayRows(q: Queryable, ids: number[]): Promise<ReplayRow[]> {
  return q.all<ReplayRow>(
    `SELECT delivery_id, reason_tag, note, replayed_at FROM webhook_replays WHERE delivery_id IN (${placeholders(ids.length)}) ORDER BY id`,
    ids,
  );
}

// ---- dead letters

const DEAD_SINCE = "d.partner = ? AND d.mode = ? AND d.status = 'dead_letter' AND d.updated_at >= ?";

/** How many of the owner's deliveries were dead-lettered at or after `sinceIso` (the partner status's last hour). */
export const deadLettersSince = (q: Queryable, owner: Owner, sinceIso: string) =>
  countOf(q, `SELECT count(*) AS n FROM webhook_deliveries d WHERE ${DEAD_SINCE}`, [owner.partner, owner.mode, sinceIso]);

/** The owner's dead letters since `sinceIso`: the newest 200, their number, and counts by event type and by reason. */
export async function deadLetterRows(q: Queryable, owner: Owner, sinceIso: string) {
  const p = [owner.partner, owner.mode, sinceIso];
  const rows = await q.all<DeliveryRow>(`${SELECT} WHERE ${DEAD_SINCE} ORDER BY d.id DESC LIMIT 200`, p);
  const n = await deadLettersSince(q, owner, sinceIso);
  const byType = await q.all<{ event_type: string; count: number }>(
    `SELECT e.event_type, count(*) AS count FROM webhook_deliveries d JOIN events e ON e.id = d.event_id WHERE ${DEAD_SINCE}
     GROUP BY e.event_type ORDER BY count DESC, e.event_type`,
    p,
  );
  const byReason = await q.all<{ reason_tag: string; count: number }>(
    `SELECT coalesce(d.reason_tag, 'unknown') AS reason_tag, count(*) AS count FROM webhook_deliveries d WHERE ${DEAD_SINCE}
     GROUP BY 1 ORDER BY count DESC, 1`,
    p,
  );
  return { rows, n, byType, byReason };
}

/**
 * deadLetterRows apart from the event loop (src/db/apart.ts): its four reads walk every dead letter of the owner in
 * the window (about 300 ms for 50,000 of them at 10M rows, even down deliveries_dead_letter_idx), so they run
 * together in the read worker and only the 200 rows and the counts come back.
 */
export const deadLetterRowsTask = apartTask("webhook-dead-letters", (q, a: { owner: Owner; sinceIso: string }) => deadLetterRows(q, a.owner, a.sinceIso));

export interface OperatorFilter {
  partner?: string;
  event_type?: string;
}

const operatorWhere = (f: OperatorFilter) =>
  new Where().add("d.status = 'dead_letter'").when(f.partner, "d.partner = ?").when(f.event_type, "e.event_type = ?");

/** Every partner's dead letters (live and sandbox), newest first. */
export function operatorDeadLetterRows(q: Queryable, f: OperatorFilter, page: { before: number | null; limit: number; offset: number }) {
  const w = operatorWhere(f).when(page.before, "d.id < ?");
  return q.all<OperatorRow>(`${SELECT} ${w.sql} ORDER BY d.id DESC LIMIT ? OFFSET ?`, [...w.params, page.limit, page.offset]);
}

export async function countOperatorDeadLetters(q: Queryable, f: OperatorFilter): Promise<number> {
  const w = operatorWhere(f);
  return countOf(q, `SELECT count(*) AS n FROM webhook_deliveries d JOIN events e ON e.id = d.event_id ${w.sql}`, w.params);
}

/**
 * A page of every partner's dead letters (`limit` rows after `offset`, or before the id `before`) and how many match
 * the filter in all: the count walks every matching dead letter, and a page may be the CSV's 10,000 rows.
 */
export async function operatorDeadLetters(q: Queryable, a: { filter: OperatorFilter; before: number | null; limit: number; offset: number }) {
  const rows = await operatorDeadLetterRows(q, a.filter, a);
  return { rows, total: await countOperatorDeadLetters(q, a.filter) };
}

/** operatorDeadLetters apart from the event loop (src/db/apart.ts): the count and the rows grow with the dead letters. */
export const operatorDeadLettersTask = apartTask("operator-dead-letters", operatorDeadLetters);

/** Partners that have dead letters, and the event types of dead letters (the console's filter suggestions). */
export async function deadLetterNames(q: Queryable): Promise<{ partners: string[]; eventTypes: string[] }> {
  const partners = await q.all<{ partner: string }>("SELECT DISTINCT partner FROM webhook_deliveries WHERE status = 'dead_letter' ORDER BY partner LIMIT 200");
  const types = await q.all<{ event_type: string }>(
    "SELECT DISTINCT e.event_type FROM webhook_deliveries d JOIN events e ON e.id = d.event_id WHERE d.status = 'dead_letter' ORDER BY 1 LIMIT 200",
  );
  return { partners: partners.map((p) => p.partner), eventTypes: types.map((t) => t.event_type) };
}

/** deadLetterNames apart from the event loop (src/db/apart.ts): both DISTINCTs read every dead letter. */
export const deadLetterNamesTask = apartTask("dead-letter-names", (q, _: null) => deadLetterNames(q));

// ---- replay

export type ReplayTarget = Pick<D, "id" | "status" | "partner" | "mode"> & Pick<RowOf<typeof webhooks>, "deleted_at" | "is_active">;

export const replayTargetOf = (q: Queryable, id: number) =>
  q.get<ReplayTarget>(
    "SELECT d.id, d.status, d.partner, d.mode, w.deleted_at, w.is_active FROM webhook_deliveries d JOIN webhooks w ON w.id = d.webhook_id WHERE d.id = ?",
    [id],
  );

/** Queued again at once with a fresh attempt budget (same event id), and the replay kept in its history. */
export async function requeueDelivery(q: Queryable, t: ReplayTarget, reasonTag: string, note: string | null, nowIso: string): Promise<void> {
  await q.run(
    `UPDATE webhook_deliveries SET status = 'queued', attempts = 0, next_attempt_at = ?, lease_until = NULL, lease_token = NULL, reason_tag = ?,
       last_error = NULL, updated_at = ? WHERE id = ?`,
    [nowIso, reasonTag, nowIso, t.id],
  );
  const replay = [t.id, t.partner, t.mode, reasonTag, note, nowIso];
  await q.run("INSERT INTO webhook_replays (delivery_id, partner, mode, reason_tag, note, replayed_at) VALUES (?, ?, ?, ?, ?, ?)", replay);
}

const DELIVERIES_OF_EVENT = "SELECT d.id, d.status FROM webhook_deliveries d JOIN events e ON e.id = d.event_id WHERE e.public_id = ? ORDER BY d.id";
/** The deliveries of one event (by its evt_… id), with their states. */
export const deliveriesOfEvent = (q: Queryable, publicId: string) => q.all<Pick<D, "id" | "status">>(DELIVERIES_OF_EVENT, [publicId]);

/** The owner's deliveries of one `evt_…` event, oldest first. */
export const ownedDeliveriesOfEvent = async (q: Queryable, owner: Owner, publicId: string): Promise<number[]> =>
  (
    await q.all<{ id: number }>(
      "SELECT d.id FROM webhook_deliveries d JOIN events e ON e.id = d.event_id WHERE e.public_id = ? AND d.partner = ? AND d.mode = ? ORDER BY d.id",
      [publicId, owner.partner, owner.mode],
    )
  ).map((r) => r.id);

export const deliveryStatusOf = (q: Queryable, id: number) => q.get<Pick<D, "id" | "status">>("SELECT id, status FROM webhook_deliveries WHERE id = ?", [id]);

/** Failed or dead-lettered deliveries of one webhook created in [fromIso, toIso), oldest first, at most `limit`. */
export async function recoverableIds(q: Queryable, webhookId: number, fromIso: string, toIso: string, limit: number): Promise<number[]> {
  const rows = await q.all<{ id: number }>(
    "SELECT id FROM webhook_deliveries WHERE webhook_id = ? AND status IN ('failed', 'dead_letter') AND created_at >= ? AND created_at < ? ORDER BY id LIMIT ?",
    [webhookId, fromIso, toIso, limit],
  );
  return rows.map((r) => r.id);
}

// ---- counts and retention

/**
 * Dead letters stay until they are requeued or pruned, so there are as many as the failure rate over the retention:
 * read from webhook_dead_letter_counts, which triggers keep (migration 0037 / postgres 0013), never counted.
 */
const DEAD_TOTAL = "SELECT COALESCE(SUM(n), 0) AS n FROM webhook_dead_letter_counts";
const DEAD_OF_OWNER = "SELECT n FROM webhook_dead_letter_counts WHERE partner = ? AND mode = ?";

/**
 * The states a delivery holds on its way: as many as the backlog, not as the history, so they are counted exactly.
 * Delivered ones are counted only over a recent window (below), dead letters kept counted (above).
 */
const OPEN_STATES = "status IN ('queued', 'processing', 'failed')";

/** Counts by state: the open states now, and `succeeded` for the deliveries settled after the window's start. */
export type StateCounts = Array<{ status: DeliveryStatus; n: number }>;

/**
 * Delivery counts of one owner or of all (operators), in statements whose cost is the backlog's and the window's,
 * never the history's (a GROUP BY over every delivery took 1.2 s at 3M rows). One owner: webhook by
 * webhook down deliveries_webhook_idx (webhook_id, status, updated_at) — a partner has a few webhooks. All: the open
 * states down deliveries_due_idx (status, …), the delivered down deliveries_settled_idx (its condition repeated, for
 * SQLite to use the partial index).
 */
export async function stateCounts(q: Queryable, a: { owner: Owner | null; settledSinceIso: string }): Promise<StateCounts> {
  if (a.owner) {
    // CROSS JOIN: SQLite keeps the tables in this order (the owner's webhooks, then each one's deliveries); left to
    // itself, without statistics, it walked every partner's open deliveries down deliveries_due_idx instead.
    const own = "FROM webhooks w CROSS JOIN webhook_deliveries d WHERE d.webhook_id = w.id AND w.partner = ? AND w.mode = ?";
    const ownerParams = [a.owner.partner, a.owner.mode];
    const open = await q.all<{ status: DeliveryStatus; n: number }>(
      `SELECT d.status AS status, count(*) AS n ${own} AND d.${OPEN_STATES} GROUP BY d.status`,
      ownerParams,
    );
    const done = await countOf(q, `SELECT count(*) AS n ${own} AND d.status = 'succeeded' AND d.updated_at >= ?`, [...ownerParams, a.settledSinceIso]);
    return [...open, { status: "succeeded", n: done }, { status: "dead_letter", n: await countOf(q, DEAD_OF_OWNER, ownerParams) }];
  }
  const open = await q.all<{ status: DeliveryStatus; n: number }>(`SELECT status, count(*) AS n FROM webhook_deliveries WHERE ${OPEN_STATES} GROUP BY status`);
  const settled = `SELECT count(*) AS n FROM webhook_deliveries WHERE ${SETTLED} AND status = 'succeeded' AND updated_at >= ?`;
  const done = await countOf(q, settled, [a.settledSinceIso]);
  return [...open, { status: "succeeded", n: done }, { status: "dead_letter", n: await deadLetterCount(q) }];
}

/** stateCounts apart from the event loop (src/db/apart.ts): a backlog of a million deliveries is a million index entries. */
export const stateCountsTask = apartTask("delivery-state-counts", stateCounts);

export const deadLetterCount = (q: Queryable) => countOf(q, DEAD_TOTAL);

/**
 * The condition of deliveries_settled_idx, repeated in the prune's statements: SQLite uses a partial index only for a
 * query whose WHERE names its condition.
 */
const SETTLED = "status IN ('succeeded', 'cancelled', 'dead_letter')";

/**
 * Deletes succeeded and cancelled deliveries last changed before `settledBefore`, dead letters before `deadBefore`,
 * with their attempts (replays cascade): two passes (one range each down deliveries_settled_idx, where an OR of the
 * two would read every settled row), each in bounded batches of deliveries and their attempts, one transaction a
 * batch (src/db/batched-delete.ts). On PostgreSQL a batch's deliveries are locked first, in id order, as the sandbox
 * reset locks its deliveries before their attempts (sandboxLocks below): two transactions that delete the same
 * attempts and deliveries then queue on the deliveries instead of each holding what the other needs; and a dead
 * letter replayed meanwhile is no longer chosen.
 */
export async function pruneDeliveries(store: Store, settledBefore: string, deadBefore: string, bound: BatchBound = {}): Promise<BatchedDeleteResult> {
  const pass = (where: string, before: string) =>
    deleteInBatches(store, {
      table: "webhook_deliveries",
      key: "id",
      where: `${SETTLED} AND ${where} AND updated_at < ?`,
      params: [before],
      children: [{ table: "webhook_attempts", column: "delivery_id" }],
      ...bound,
    });
  const settled = await pass("status IN ('succeeded', 'cancelled')", settledBefore);
  const dead = await pass("status = 'dead_letter'", deadBefore);
  return { deleted: settled.deleted + dead.deleted, statements: settled.statements + dead.statements, done: settled.done && dead.done };
}

// ---- the sandbox reset (src/sandbox/reset.ts): children before parents. Every statement names mode = 'sandbox'
// as a LITERAL, never a bound parameter: whatever partner this is handed, it cannot delete a live row.

export type SandboxTable = "webhook_attempts" | "webhook_deliveries" | "events" | "webhooks";

/**
 * What the reset locks before its deletes, per engine: on PostgreSQL the partner's sandbox deliveries, then its
 * sandbox webhooks, then the deliveries again, all FOR UPDATE in id order. Sandbox writes wait for the reset
 * (they hold the sandbox's fixture row), but the dispatcher does not: it may add an attempt to a delivery, or a
 * delivery (webhook.delivery_failed, webhook.disabled) to a webhook, between two of the reset's deletes, and the
 * reset's next delete would fail on the foreign key. Locked deliveries take no attempt (the dispatcher skips them
 * or waits); locked webhooks take no delivery; the second pass over the deliveries takes one added between the
 * first two locks. Deliveries come first, as in the dispatcher's own transactions (a delivery, then its webhook), so
 * neither holds what the other waits for. SQLite has no row locks and needs none: a transaction holds the writer.
 */
export function sandboxLocks(dialect: Dialect): readonly string[] {
  if (dialect === "sqlite") return [];
  const deliveries = "SELECT id FROM webhook_deliveries WHERE partner = ? AND mode = 'sandbox' ORDER BY id FOR UPDATE";
  return [deliveries, "SELECT id FROM webhooks WHERE partner = ? AND mode = 'sandbox' ORDER BY id FOR UPDATE", deliveries];
}

export const SANDBOX_DELETES: ReadonlyArray<readonly [table: SandboxTable, sql: string]> = [
  ["webhook_attempts", "DELETE FROM webhook_attempts WHERE delivery_id IN (SELECT id FROM webhook_deliveries WHERE partner = ? AND mode = 'sandbox')"],
  ["webhook_deliveries", "DELETE FROM webhook_deliveries WHERE partner = ? AND mode = 'sandbox'"],
  ["events", "DELETE FROM events WHERE partner = ? AND mode = 'sandbox'"],
  ["webhooks", "DELETE FROM webhooks WHERE partner = ? AND mode = 'sandbox'"],
];

/**
 * The reset's batches, before its transaction (src/webhooks/sandbox-service.ts): the partner's sandbox deliveries
 * with their attempts (their replays go with them, ON DELETE CASCADE), then its sandbox events that no delivery
 * references, each down an index of (partner, mode). A delivery is written only with its event, in the event's
 * transaction, so an event found without deliveries never gets one: deleting it cannot fail on a delivery added
 * meanwhile, and one written meanwhile with its deliveries waits for the reset's transaction. Webhooks stay for that
 * transaction too (at most 100 active an owner): the dispatcher may add a delivery to one at any moment.
 */
export const sandboxBatches = (partner: string): readonly BatchedDelete[] => [
  {
    table: "webhook_deliveries",
    key: "id",
    where: "partner = ? AND mode = 'sandbox'",
    params: [partner],
    children: [{ table: "webhook_attempts", column: "delivery_id" }],
  },
  {
    table: "events",
    where: "partner = ? AND mode = 'sandbox' AND NOT EXISTS (SELECT 1 FROM webhook_deliveries d WHERE d.event_id = events.id)",
    params: [partner],
  },
];
