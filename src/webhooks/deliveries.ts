import type { AppContext } from "../context";
import { AppError, ValidationError } from "../http/errors";
import { pageOf, type PageRequest } from "../http/pagination";
import type { Owner } from "./outbox";
import { getWebhookOrThrow } from "./webhook-rows";

export const DELIVERY_STATUSES = ["queued", "processing", "succeeded", "failed", "dead_letter", "cancelled"] as const;
export type DeliveryStatus = (typeof DELIVERY_STATUSES)[number];
export const MAX_REPLAY_IDS = 100;
export const MAX_RECOVER = 1000;

interface DeliveryRow {
  id: number;
  webhook_id: number;
  event_public_id: string;
  event_type: string;
  status: DeliveryStatus;
  attempts: number;
  reason_tag: string | null;
  last_error: string | null;
  last_status_code: number | null;
  target_url: string;
  created_at: string;
  updated_at: string;
  last_attempt_at: string | null;
  next_attempt_at: string | null;
  delivered_at: string | null;
}

const SELECT = `SELECT d.id, d.webhook_id, e.public_id AS event_public_id, e.event_type, d.status, d.attempts, d.reason_tag, d.last_error,
  d.last_status_code, w.target_url, d.created_at, d.updated_at, d.last_attempt_at, d.next_attempt_at, d.delivered_at
  FROM webhook_deliveries d JOIN events e ON e.id = d.event_id JOIN webhooks w ON w.id = d.webhook_id`;

export const deliveryView = (r: DeliveryRow) => ({
  id: r.id,
  event_id: r.event_public_id,
  webhook_id: r.webhook_id,
  event_type: r.event_type,
  status: r.status,
  attempts: r.attempts,
  is_dead_letter: r.status === "dead_letter",
  reason_tag: r.reason_tag,
  last_error: r.last_error,
  last_status_code: r.last_status_code,
  target_url: r.target_url,
  created_at: r.created_at,
  last_attempt_at: r.last_attempt_at,
  next_attempt_at: r.next_attempt_at,
  delivered_at: r.delivered_at,
});

function isoOrThrow(field: string, v: string | undefined): string | null {
  if (v === undefined || v === "") return null;
  const t = Date.parse(v);
  if (Number.isNaN(t))
    throw new AppError("invalid_query", `${field} must be an ISO 8601 time such as 2026-01-01T00:00:00Z`, {
      details: [{ field, problem: "must be an ISO 8601 time" }],
    });
  return new Date(t).toISOString();
}

export interface ReplayEntry {
  reason_tag: string;
  note: string | null;
  replayed_at: string;
}

/** The replay history of each delivery in `ids`, oldest first (one query for a page of records; also the sandbox list's). */
export function replaysOf(ctx: AppContext, ids: number[]): Map<number, ReplayEntry[]> {
  const out = new Map<number, ReplayEntry[]>(ids.map((id) => [id, []]));
  if (ids.length === 0) return out;
  const rows = ctx.db.sqlite
    .query(`SELECT delivery_id, reason_tag, note, replayed_at FROM webhook_replays WHERE delivery_id IN (${ids.map(() => "?").join(", ")}) ORDER BY id`)
    .all(...ids) as Array<ReplayEntry & { delivery_id: number }>;
  for (const { delivery_id, ...entry } of rows) out.get(delivery_id)!.push(entry);
  return out;
}

/**
 * `reason_tag` matches the record's current tag (why its last attempt failed, or the latest replay's reason once
 * delivered) or any replay in its history: a delivery replayed for receiver_fix is found by receiver_fix whether
 * it has succeeded since, is still retrying or failed again.
 */
export function listDeliveries(
  ctx: AppContext,
  owner: Owner,
  f: { status?: DeliveryStatus; reason_tag?: string; from?: string; to?: string; webhook_id?: number; event_type?: string },
  page: PageRequest,
) {
  const from = isoOrThrow("from", f.from);
  const to = isoOrThrow("to", f.to);
  const rows = ctx.db.sqlite
    .query(
      `${SELECT} WHERE d.partner = ?1 AND d.mode = ?2 AND (?3 IS NULL OR d.status = ?3)
         AND (?4 IS NULL OR d.reason_tag = ?4 OR EXISTS (SELECT 1 FROM webhook_replays r WHERE r.delivery_id = d.id AND r.reason_tag = ?4))
         AND (?5 IS NULL OR d.created_at >= ?5) AND (?6 IS NULL OR d.created_at < ?6) AND (?7 IS NULL OR d.webhook_id = ?7)
         AND (?8 IS NULL OR e.event_type = ?8) AND (?9 IS NULL OR d.id < ?9)
       ORDER BY d.id DESC LIMIT ?10 OFFSET ?11`,
    )
    .all(
      owner.partner,
      owner.mode,
      f.status ?? null,
      f.reason_tag ?? null,
      from,
      to,
      f.webhook_id ?? null,
      f.event_type ?? null,
      page.after,
      page.limit + 1,
      page.offset,
    ) as DeliveryRow[];
  const p = pageOf(rows, page, (r) => r.id);
  const replays = replaysOf(
    ctx,
    p.items.map((r) => r.id),
  );
  return {
    ...p,
    items: p.items.map((r) => ({ ...deliveryView(r), replays: replays.get(r.id)! })),
    filters: { status: f.status ?? null, reason_tag: f.reason_tag ?? null, from, to, webhook_id: f.webhook_id ?? null },
  };
}

export function deadLetterSummary(ctx: AppContext, owner: Owner, hours: number) {
  const since = new Date(ctx.clock.now().getTime() - hours * 3_600_000).toISOString();
  const db = ctx.db.sqlite;
  const where = "d.partner = ?1 AND d.mode = ?2 AND d.status = 'dead_letter' AND d.updated_at >= ?3";
  const rows = db.query(`${SELECT} WHERE ${where} ORDER BY d.id DESC LIMIT 200`).all(owner.partner, owner.mode, since) as DeliveryRow[];
  const { n } = db.query(`SELECT count(*) AS n FROM webhook_deliveries d WHERE ${where}`).get(owner.partner, owner.mode, since) as { n: number };
  const byType = db
    .query(
      `SELECT e.event_type, count(*) AS count FROM webhook_deliveries d JOIN events e ON e.id = d.event_id WHERE ${where} GROUP BY e.event_type ORDER BY count DESC, e.event_type`,
    )
    .all(owner.partner, owner.mode, since);
  const byReason = db
    .query(
      `SELECT coalesce(d.reason_tag, 'unknown') AS reason_tag, count(*) AS count FROM webhook_deliveries d WHERE ${where} GROUP BY 1 ORDER BY count DESC, 1`,
    )
    .all(owner.partner, owner.mode, since);
  return {
    window_hours: hours,
    dead_letter_count: n,
    max_attempts: ctx.config.webhooks.maxAttempts,
    by_event_type: byType as Array<{ event_type: string; count: number }>,
    by_reason_tag: byReason as Array<{ reason_tag: string; count: number }>,
    events: rows.map((r) => ({
      event_id: r.id,
      public_event_id: r.event_public_id,
      webhook_id: r.webhook_id,
      event_type: r.event_type,
      target_url: r.target_url,
      attempts: r.attempts,
      reason_tag: r.reason_tag,
      last_error: r.last_error,
      created_at: r.created_at,
      updated_at: r.updated_at,
    })),
  };
}

export interface ReplayResult {
  event_id: number;
  replayed: boolean;
  error: string | null;
  reason_tag: string;
}

/**
 * Re-queues deliveries (same event id, fresh attempt budget) and adds each to its replay history with the reason
 * and note. Must run inside a transaction. Ids that are not the owner's get `not_found`, exactly like ids that
 * do not exist — one partner never learns of another's.
 */
export function requeue(ctx: AppContext, owner: Owner | null, ids: number[], reasonTag: string, note: string | null = null): ReplayResult[] {
  const db = ctx.db.sqlite;
  const now = ctx.clock.now().toISOString();
  const get = db.query(
    "SELECT d.id, d.status, d.partner, d.mode, w.deleted_at, w.is_active FROM webhook_deliveries d JOIN webhooks w ON w.id = d.webhook_id WHERE d.id = ?",
  );
  const update = db.query(
    "UPDATE webhook_deliveries SET status = 'queued', attempts = 0, next_attempt_at = ?, lease_until = NULL, lease_token = NULL, reason_tag = ?, last_error = NULL, updated_at = ? WHERE id = ?",
  );
  const remember = db.query("INSERT INTO webhook_replays (delivery_id, partner, mode, reason_tag, note, replayed_at) VALUES (?, ?, ?, ?, ?, ?)");
  return ids.map((id) => {
    const row = get.get(id) as { id: number; status: DeliveryStatus; partner: string; mode: string; deleted_at: string | null; is_active: number } | null;
    const fail = (error: string) => ({ event_id: id, replayed: false, error, reason_tag: reasonTag });
    if (!row || (owner && (row.partner !== owner.partner || row.mode !== owner.mode))) return fail("not_found");
    if (row.deleted_at) return fail("webhook_deleted");
    if (!row.is_active) return fail("webhook_disabled");
    if (row.status === "queued" || row.status === "processing") return fail("already_pending");
    update.run(now, reasonTag, now, id);
    remember.run(id, row.partner, row.mode, reasonTag, note, now);
    return { event_id: id, replayed: true, error: null, reason_tag: reasonTag };
  });
}

export function replaySummary(results: ReplayResult[], reasonTag: string, note: string | null) {
  const replayed = results.filter((r) => r.replayed).length;
  return { count: results.length, replayed_count: replayed, failed_count: results.length - replayed, reason_tag: reasonTag, note, results };
}

/** Every failed or dead-lettered delivery of one webhook created in [since, until), bounded, replayed at once. */
export function recoverIds(ctx: AppContext, owner: Owner, webhookId: number, since: string, until: string | undefined): number[] {
  getWebhookOrThrow(ctx, owner, webhookId);
  const from = isoOrThrow("since", since)!;
  // Without `until`, everything up to and including now.
  const to = isoOrThrow("until", until) ?? new Date(ctx.clock.now().getTime() + 1).toISOString();
  if (from >= to) throw new ValidationError("since must be before until", [{ field: "since", problem: "must be before until" }]);
  const rows = ctx.db.sqlite
    .query(
      `SELECT id FROM webhook_deliveries WHERE webhook_id = ? AND status IN ('failed', 'dead_letter') AND created_at >= ? AND created_at < ? ORDER BY id LIMIT ?`,
    )
    .all(webhookId, from, to, MAX_RECOVER + 1) as Array<{ id: number }>;
  if (rows.length > MAX_RECOVER) {
    throw new AppError("conflict", `More than ${MAX_RECOVER} deliveries match; recover a shorter time range`, { details: { max: MAX_RECOVER } });
  }
  return rows.map((r) => r.id);
}

/** For partner status and metrics: delivery counts of one owner (or all, for operators). */
export function deliveryHealth(ctx: AppContext, owner: Owner | null) {
  const rows = ctx.db.sqlite
    .query(`SELECT status, count(*) AS n FROM webhook_deliveries WHERE (?1 IS NULL OR partner = ?1) AND (?2 IS NULL OR mode = ?2) GROUP BY status`)
    .all(owner?.partner ?? null, owner?.mode ?? null) as Array<{ status: DeliveryStatus; n: number }>;
  const c = Object.fromEntries(rows.map((r) => [r.status, r.n])) as Partial<Record<DeliveryStatus, number>>;
  return {
    dead_letter_events: c.dead_letter ?? 0,
    failed_events: c.failed ?? 0,
    pending_events: (c.queued ?? 0) + (c.processing ?? 0),
    delivered_events: c.succeeded ?? 0,
  };
}

export function deliverySloControls(ctx: AppContext) {
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
 * Every partner's dead letters (live and sandbox), newest first, for the operator: the console's dead-letters
 * page. Optional filters: one partner, one event type.
 */
export function deadLettersForOperator(ctx: AppContext, f: { partner?: string; event_type?: string }, page: PageRequest) {
  const rows = ctx.db.sqlite
    .query(
      `${SELECT.replace("SELECT d.id,", "SELECT d.id, d.partner, d.mode,")} WHERE d.status = 'dead_letter' AND (?1 IS NULL OR d.partner = ?1) AND (?2 IS NULL OR e.event_type = ?2)
         AND (?3 IS NULL OR d.id < ?3) ORDER BY d.id DESC LIMIT ?4 OFFSET ?5`,
    )
    .all(f.partner ?? null, f.event_type ?? null, page.after, page.limit + 1, page.offset) as Array<DeliveryRow & { partner: string; mode: string }>;
  const p = pageOf(rows, page, (r) => r.id);
  return { ...p, items: p.items.map((r) => ({ ...deliveryView(r), partner: r.partner, mode: r.mode, updated_at: r.updated_at })) };
}

/**
 * Operator replay of one delivery (integer id) or every delivery of one event (evt_… id), with an audit row.
 * `note`: why (the console's replay form requires one); kept with each replay and in the audit details.
 */
export function adminReplay(ctx: AppContext, ref: string, audit: (details: Record<string, unknown>) => void, note: string | null = null) {
  const db = ctx.db.sqlite;
  const ids = /^\d+$/.test(ref)
    ? [Number(ref)]
    : (
        db.query("SELECT d.id FROM webhook_deliveries d JOIN events e ON e.id = d.event_id WHERE e.public_id = ? ORDER BY d.id").all(ref) as Array<{
          id: number;
        }>
      ).map((r) => r.id);
  if (ids.length === 0) throw new AppError("not_found", `No webhook event ${JSON.stringify(ref)}; use a delivery id or an evt_… event id`);
  return db.transaction(() => {
    const results = requeue(ctx, null, ids, "operator_replay", note);
    if (results.every((r) => r.error === "not_found")) throw new AppError("not_found", `No webhook event ${JSON.stringify(ref)}`);
    audit(note === null ? { ref, results } : { ref, note, results });
    return { event_id: ref, requeued: results.filter((r) => r.replayed).length, results };
  })();
}
