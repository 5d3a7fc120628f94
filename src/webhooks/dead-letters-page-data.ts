import { writeAudit } from "../auth/audit";
import { refusal } from "../auth/console-kit";
import type { OperatorRequest } from "../auth/session-plugin";
import type { AppContext } from "../context";
import { adminReplay, type DeliveryStatus, deadLettersForOperator } from "./deliveries";
import { EVENT_TYPE_NAMES } from "./event-types";

// What the console's dead-letters page reads and does: every partner's dead letters (filtered, paged, counted),
// the suggestions of its filter form, its exports' rows, and the replay of one dead letter with a reason. The
// replay is adminReplay — the verb of POST /admin/partners/webhook-events/{event_id}/replay — with the check the
// page adds: only a dead letter is replayed here (a delivery that succeeded, or is still retrying, is a 409).

export const FILTER_MAX = 64;
export const REASON_MAX = 500;

export interface DeadLetterFilter {
  partner: string;
  event_type: string;
}

/** A filter as typed into the GET form, trimmed; a value past FILTER_MAX is a 400 the page shows above its form. */
export function filterOrThrow(raw: { partner?: string; event_type?: string }): DeadLetterFilter {
  const partner = (raw.partner ?? "").trim();
  const event_type = (raw.event_type ?? "").trim();
  for (const [name, v] of [
    ["Partner", partner],
    ["Event type", event_type],
  ] as const) {
    if (v.length > FILTER_MAX) throw refusal(400, `${name} is ${v.length} characters long; a filter is at most ${FILTER_MAX}. Showing every dead letter.`);
  }
  return { partner, event_type };
}

const where = (f: DeadLetterFilter) => ({ partner: f.partner || undefined, event_type: f.event_type || undefined });

/** One page of dead letters, newest first, and how many match the filter in all. */
export function deadLetterPage(ctx: AppContext, f: DeadLetterFilter, offset: number, limit: number) {
  const page = deadLettersForOperator(ctx, where(f), { limit, offset, after: null, cursor: null });
  const { n } = ctx.db.sqlite
    .query(
      `SELECT count(*) AS n FROM webhook_deliveries d JOIN events e ON e.id = d.event_id
       WHERE d.status = 'dead_letter' AND (?1 IS NULL OR d.partner = ?1) AND (?2 IS NULL OR e.event_type = ?2)`,
    )
    .get(f.partner || null, f.event_type || null) as { n: number };
  return { items: page.items, hasMore: page.pagination.has_more, total: n };
}

/** The filter form's suggestions: partners that have dead letters, and every event type (the catalog's and any dead letter's). */
export function filterSuggestions(ctx: AppContext): { partners: string[]; eventTypes: string[] } {
  const partners = ctx.db.sqlite
    .query("SELECT DISTINCT partner FROM webhook_deliveries WHERE status = 'dead_letter' ORDER BY partner LIMIT 200")
    .all() as Array<{ partner: string }>;
  const dead = ctx.db.sqlite
    .query("SELECT DISTINCT e.event_type FROM webhook_deliveries d JOIN events e ON e.id = d.event_id WHERE d.status = 'dead_letter' ORDER BY 1 LIMIT 200")
    .all() as Array<{ event_type: string }>;
  return { partners: partners.map((p) => p.partner), eventTypes: [...new Set([...EVENT_TYPE_NAMES, ...dead.map((d) => d.event_type)])].sort() };
}

/** A dead letter as the exports give it (JSON and CSV: the same keys, in this order). */
export const EXPORT_COLUMNS = [
  "delivery_id",
  "partner",
  "mode",
  "event_id",
  "event_type",
  "webhook_id",
  "attempts",
  "last_status_code",
  "last_error",
  "reason_tag",
  "target_url",
  "created_at",
  "dead_since",
] as const;

export function exportRows(ctx: AppContext, f: DeadLetterFilter, offset: number, limit: number) {
  const page = deadLetterPage(ctx, f, offset, limit);
  return {
    ...page,
    rows: page.items.map((d) => ({
      delivery_id: d.id,
      partner: d.partner,
      mode: d.mode,
      event_id: d.event_id,
      event_type: d.event_type,
      webhook_id: d.webhook_id,
      attempts: d.attempts,
      last_status_code: d.last_status_code,
      last_error: d.last_error,
      reason_tag: d.reason_tag,
      target_url: d.target_url,
      created_at: d.created_at,
      dead_since: d.updated_at,
    })),
  };
}

const WHY_NOT: Record<string, string> = {
  webhook_deleted: "its webhook was deleted by the partner, so there is nowhere to send it",
  webhook_disabled: "its webhook is disabled; the partner enables it again first",
  already_pending: "it is already queued again",
};

const REF = /^(\d{1,15}|evt_[A-Za-z0-9]{1,60})$/;

/**
 * Replays the dead letters `ref` names — a delivery id, or an evt_… event id (its dead-lettered deliveries) — with
 * the operator's reason, in one transaction: each through adminReplay (re-queued at once with its attempts reset,
 * the reason kept in its replay history as the note) and its audit row `webhook_event.replay`, whose details carry
 * the reason as `note` and `via: "console"` (the JSON route has no reason field). Refusals, nothing changed:
 * 400 no reason, 404 unknown id, 409 not a dead letter or its webhook deleted/disabled.
 */
export function replayDeadLetterOrThrow(ctx: AppContext, operator: OperatorRequest, ref: string, rawReason: string): number[] {
  const reason = rawReason.trim();
  if (reason === "") throw refusal(400, "Nothing was replayed: say why (the reason is kept with the delivery and in the audit trail).");
  if (reason.length > REASON_MAX) throw refusal(400, `Nothing was replayed: the reason is at most ${REASON_MAX} characters.`);
  const db = ctx.db.sqlite;
  const what = /^\d+$/.test(ref) ? `delivery #${ref}` : `event ${ref}`;
  return db.transaction(() => {
    const rows = !REF.test(ref)
      ? []
      : /^\d+$/.test(ref)
        ? (db.query("SELECT id, status FROM webhook_deliveries WHERE id = ?").all(Number(ref)) as Array<{ id: number; status: DeliveryStatus }>)
        : (db
            .query("SELECT d.id, d.status FROM webhook_deliveries d JOIN events e ON e.id = d.event_id WHERE e.public_id = ? ORDER BY d.id")
            .all(ref) as Array<{ id: number; status: DeliveryStatus }>);
    if (rows.length === 0) throw refusal(404, `Nothing was replayed: there is no ${what}. It may have been pruned (dead letters are kept 90 days).`);
    const dead = rows.filter((r) => r.status === "dead_letter").map((r) => r.id);
    if (dead.length === 0) {
      const states = [...new Set(rows.map((r) => r.status.replace("_", " ")))].join(", ");
      throw refusal(409, `Nothing was replayed: ${what} is not a dead letter (it is ${states}); only dead letters are replayed here.`);
    }
    for (const id of dead) {
      const out = adminReplay(
        ctx,
        String(id),
        (details) =>
          writeAudit(db, {
            at: ctx.clock.now().toISOString(),
            actor: operator.actor,
            action: "webhook_event.replay",
            target: String(id),
            details: { ...details, via: "console" },
            requestId: operator.requestId,
          }),
        reason,
      );
      const failed = out.results.find((r) => !r.replayed);
      // Throwing here rolls back every replay of this request (and its audit rows): all or nothing.
      if (failed) throw refusal(409, `Nothing was replayed: delivery #${id}: ${WHY_NOT[failed.error ?? ""] ?? failed.error}.`);
    }
    return dead;
  })();
}
