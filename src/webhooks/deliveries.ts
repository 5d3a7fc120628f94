import { parseCalendarStrict } from "../clock";
import { type AuditEntry, recordAudit } from "../auth/audit";
import type { Queryable } from "../db/port";
import { AppError, NotFoundError, queryProblem, ValidationError } from "../http/errors/errors";
import { offsetPage, pageOf, type PageRequest } from "../http/pagination";
import {
  type DeliveryRow,
  type DeliveryStatus,
  type OperatorFilter,
  deadLetterRowsTask,
  deliveriesOfEvent,
  listDeliveryRows,
  ownedDeliveriesOfEvent,
  operatorDeadLettersTask,
  recoverableIds,
  replayRows,
  replayTargetOf,
  requeueDelivery,
  stateCountsTask,
} from "./deliveries-store";
import type { WebhookContext } from "./deps";
import type { Owner } from "./outbox";
import { DeadLetterEvent, Delivery, type ReplayResultItem } from "./model";
import { webhookOf } from "./store";
import { schemaView } from "../http/schema-view";

export const MAX_RECOVER = 1000;

type Ctx = Pick<WebhookContext, "store" | "clock" | "config">;

/**
 * A delivery record as partners and operators read it. The spec's record model has a dead letter as status `failed`
 * with `is_dead_letter: true` (its state table: failed → failed_dead_letter); the stored state keeps `dead_letter`,
 * which the dispatcher, retention and the alerts read.
 */
export const deliveryView = (r: DeliveryRow) =>
  schemaView(Delivery, r, {
    event_id: r.event_public_id,
    status: r.status === "dead_letter" ? "failed" : r.status,
    is_dead_letter: r.status === "dead_letter",
  });

/** A time filter as ISO text, or null when absent; refused as the part it came in (a list's query, recover's body). */
function isoOrThrow(field: string, v: string | undefined, part: "query" | "body"): string | null {
  if (v === undefined || v === "") return null;
  const t = parseCalendarStrict(v);
  if (Number.isNaN(t)) {
    const problem = "must be an ISO 8601 time such as 2026-01-01T00:00:00Z";
    throw part === "query" ? queryProblem(field, problem) : new ValidationError(`Invalid request body: ${field} ${problem}`, [{ field, problem }]);
  }
  return new Date(t).toISOString();
}

export type ReplayEntry = NonNullable<typeof Delivery.static.replays>[number];

/**
 * A page of delivery records as the lists show them (the live list's and the sandbox's), each with its replay
 * history, oldest first: one query for the page.
 */
export async function deliveryRecords(q: Queryable, rows: DeliveryRow[]) {
  const replays = new Map<number, ReplayEntry[]>(rows.map((r) => [r.id, []]));
  const ids = rows.map((r) => r.id);
  if (ids.length > 0) for (const { delivery_id, ...entry } of await replayRows(q, ids)) replays.get(delivery_id)!.push(entry);
  return rows.map((r) => ({ ...deliveryView(r), replays: replays.get(r.id)! }));
}

/**
 * `reason_tag` matches the record's current tag (why its last attempt failed, or the latest replay's reason once
 * delivered) or any replay in its history: a delivery replayed for receiver_fix is found by receiver_fix whether
 * it has succeeded since, is still retrying or failed again.
 */
export async function listDeliveries(
  ctx: Ctx,
  owner: Owner,
  f: { status?: DeliveryStatus; reason_tag?: string; from?: string; to?: string; webhook_id?: number; event_type?: string },
  page: PageRequest,
) {
  const from = isoOrThrow("from", f.from, "query");
  const to = isoOrThrow("to", f.to, "query");
  const { rows, resumeAt } = await listDeliveryRows(ctx.store, owner, {
    ...f,
    fromIso: from,
    toIso: to,
    before: page.after,
    limit: page.limit + 1,
    offset: page.offset,
  });
  const p = pageOf(rows, page, (r) => r.id, resumeAt);
  return {
    ...p,
    items: await deliveryRecords(ctx.store, p.items),
    filters: { status: f.status ?? null, reason_tag: f.reason_tag ?? null, from, to, webhook_id: f.webhook_id ?? null },
  };
}

export async function deadLetterSummary(ctx: Ctx, owner: Owner, hours: number) {
  const since = new Date(ctx.clock.now().getTime() - hours * 3_600_000).toISOString();
  const { rows, n, byType, byReason } = await ctx.store.apart(deadLetterRowsTask, { owner: { partner: owner.partner, mode: owner.mode }, sinceIso: since });
  return {
    window_hours: hours,
    dead_letter_count: n,
    max_attempts: ctx.config.webhooks.maxAttempts,
    by_event_type: byType,
    by_reason_tag: byReason,
    events: rows.map((r) => schemaView(DeadLetterEvent, r, { event_id: r.id, public_event_id: r.event_public_id })),
  };
}

export type ReplayResult = typeof ReplayResultItem.static;

/**
 * Re-queues deliveries (same event id, fresh attempt budget) and adds each to its replay history with the reason
 * and note, with the caller's transaction handle `t`. Ids that are not the owner's get `not_found`, exactly like
 * ids that do not exist — one partner never learns of another's.
 */
export async function requeue(
  t: Queryable,
  ctx: Pick<Ctx, "clock">,
  owner: Owner | null,
  ids: number[],
  reasonTag: string,
  note: string | null = null,
): Promise<ReplayResult[]> {
  const now = ctx.clock.now().toISOString();
  const results: ReplayResult[] = [];
  for (const id of ids) {
    const row = await replayTargetOf(t, id);
    const fail = (error: string, deliveryId: number | null = id) =>
      results.push({ event_id: id, delivery_id: deliveryId, replayed: false, error, reason_tag: reasonTag });
    if (!row || (owner && (row.partner !== owner.partner || row.mode !== owner.mode))) fail("not_found", null);
    else if (row.deleted_at) fail("webhook_deleted");
    else if (!row.is_active) fail("webhook_disabled");
    else if (row.status === "queued" || row.status === "processing") fail("already_pending");
    else {
      await requeueDelivery(t, row, reasonTag, note, now);
      results.push({ event_id: id, delivery_id: id, replayed: true, error: null, reason_tag: reasonTag });
    }
  }
  return results;
}

/**
 * The partner replay's ids: a delivery id (an integer, as the records and the dead-letter summary show it) or the
 * `evt_…` event id that `POST /webhooks/{id}/test` answers and every envelope carries. An event id replays each of
 * the owner's deliveries of that event (one per subscribed webhook), each result naming the event id as given and
 * its delivery; an event id with none of the owner's deliveries is one `not_found`, as an unknown one is.
 */
export async function requeueRefs(
  t: Queryable,
  ctx: Pick<Ctx, "clock">,
  owner: Owner,
  refs: Array<number | string>,
  reasonTag: string,
  note: string | null,
): Promise<ReplayResult[]> {
  const results: ReplayResult[] = [];
  for (const ref of new Set(refs)) {
    if (typeof ref === "number") {
      results.push(...(await requeue(t, ctx, owner, [ref], reasonTag, note)));
      continue;
    }
    const ids = await ownedDeliveriesOfEvent(t, owner, ref);
    if (ids.length === 0) results.push({ event_id: ref, delivery_id: null, replayed: false, error: "not_found", reason_tag: reasonTag });
    for (const r of await requeue(t, ctx, owner, ids, reasonTag, note)) results.push({ ...r, event_id: ref });
  }
  return results;
}

export function replaySummary(results: ReplayResult[], reasonTag: string, note: string | null) {
  const replayed = results.filter((r) => r.replayed).length;
  return { count: results.length, replayed_count: replayed, failed_count: results.length - replayed, reason_tag: reasonTag, note, results };
}

/** Every failed or dead-lettered delivery of one webhook created in [since, until), bounded, replayed at once; read with `q`. */
export async function recoverIds(
  q: Queryable,
  ctx: Pick<Ctx, "clock">,
  owner: Owner,
  webhookId: number,
  since: string,
  until: string | undefined,
): Promise<number[]> {
  if (!(await webhookOf(q, owner, webhookId))) throw new NotFoundError("webhook", webhookId);
  const from = isoOrThrow("since", since, "body")!;
  // Without `until`, everything up to and including now.
  const to = isoOrThrow("until", until, "body") ?? new Date(ctx.clock.now().getTime() + 1).toISOString();
  if (from >= to) throw new ValidationError("since must be before until", [{ field: "since", problem: "must be before until" }]);
  const ids = await recoverableIds(q, webhookId, from, to, MAX_RECOVER + 1);
  if (ids.length > MAX_RECOVER) {
    throw new AppError("conflict", `More than ${MAX_RECOVER} deliveries match; recover a shorter time range`, { details: { max: MAX_RECOVER } });
  }
  return ids;
}

/** How far back `delivered_events` counts: the deliveries that succeeded in the last hour. */
export const DELIVERED_WINDOW_MS = 3_600_000;

/**
 * For partner status and the status page: delivery counts of one owner (or all, for operators) — those waiting,
 * retrying and dead-lettered now, and those delivered since `deliveredSince` (the last hour by default).
 */
export async function deliveryHealth(ctx: Pick<Ctx, "store" | "clock">, owner: Owner | null, deliveredSince?: string) {
  const settledSinceIso = deliveredSince ?? new Date(ctx.clock.now().getTime() - DELIVERED_WINDOW_MS).toISOString();
  return healthOf(await ctx.store.apart(stateCountsTask, { owner, settledSinceIso }));
}

export function healthOf(rows: Array<{ status: DeliveryStatus; n: number }>) {
  const c = Object.fromEntries(rows.map((r) => [r.status, r.n])) as Partial<Record<DeliveryStatus, number>>;
  return {
    dead_letter_events: c.dead_letter ?? 0,
    failed_events: c.failed ?? 0,
    pending_events: (c.queued ?? 0) + (c.processing ?? 0),
    delivered_events: c.succeeded ?? 0,
  };
}

export function deliverySloControls(ctx: Pick<Ctx, "config">) {
  const w = ctx.config.webhooks;
  return {
    max_attempts: w.maxAttempts,
    timeout_seconds: w.timeoutSeconds,
    retry_base_seconds: w.retryBaseSeconds,
    retry_max_seconds: w.retryMaxSeconds,
    retry_jitter_pct: w.retryJitterPct,
  };
}

/**
 * Every partner's dead letters (live and sandbox), newest first, for the console's dead-letters page: `total` matching
 * the filter, `rows` as read (the exports' source). Read in the read worker (operatorDeadLettersTask).
 */
export async function deadLettersForOperator(ctx: Pick<Ctx, "store">, filter: OperatorFilter, limit: number, offset: number) {
  const { rows, total } = await ctx.store.apart(operatorDeadLettersTask, { filter, before: null, limit: limit + 1, offset });
  const p = offsetPage(rows, limit, offset);
  return { ...p, total, rows: p.items, items: p.items.map((r) => ({ ...deliveryView(r), partner: r.partner, mode: r.mode, updated_at: r.updated_at })) };
}

/**
 * Operator replay of one delivery (integer id) or every delivery of one event (evt_… id), with its audit row,
 * in the caller's transaction `t`. `note`: why (the console's replay form requires one); kept with each replay and
 * in the audit details. `audit` makes the audit row from the details.
 */
export async function adminReplayIn(
  t: Queryable,
  ctx: Pick<Ctx, "clock">,
  ref: string,
  audit: (details: Record<string, unknown>) => AuditEntry,
  note: string | null = null,
) {
  const ids = /^\d+$/.test(ref) ? [Number(ref)] : (await deliveriesOfEvent(t, ref)).map((r) => r.id);
  if (ids.length === 0) throw new AppError("not_found", `No webhook event ${JSON.stringify(ref)}; use a delivery id or an evt_… event id`);
  const results = await requeue(t, ctx, null, ids, "operator_replay", note);
  if (results.every((r) => r.error === "not_found")) throw new AppError("not_found", `No webhook event ${JSON.stringify(ref)}`);
  await recordAudit(t, audit(note === null ? { ref, results } : { ref, note, results }));
  return { event_id: ref, requeued: results.filter((r) => r.replayed).length, results };
}

/** The audit row of an operator's replay of `target` (webhook_event.replay), made from adminReplayIn's details. */
export const replayAudit =
  (ctx: Pick<Ctx, "clock">, by: Pick<AuditEntry, "actor" | "requestId">, target: string, extra: Record<string, unknown> = {}) =>
  (details: Record<string, unknown>): AuditEntry => ({
    at: ctx.clock.now().toISOString(),
    actor: by.actor,
    action: "webhook_event.replay",
    target,
    details: { ...details, ...extra },
    requestId: by.requestId,
  });

/** adminReplayIn in a transaction of its own (POST /admin/partners/webhook-events/{event_id}/replay). */
export function adminReplay(ctx: Ctx, ref: string, audit: (details: Record<string, unknown>) => AuditEntry, note: string | null = null) {
  return ctx.store.tx((t) => adminReplayIn(t, ctx, ref, audit, note));
}
