import { refusal } from "../auth/console-kit";
import { AppError } from "../http/errors";
import type { OperatorRequest } from "../auth/session-plugin";
import { adminReplayIn, deadLettersForOperator } from "./deliveries";
import { countOperatorDeadLetters, deadLetterNames, deliveriesOfEvent, deliveryStatusOf } from "./deliveries-store";
import type { WebhookContext } from "./deps";
import { EVENT_TYPE_NAMES } from "./event-types";

type Ctx = Pick<WebhookContext, "store" | "clock">;

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
  for (const [name, field, v] of [
    ["Partner", "partner", partner],
    ["Event type", "event_type", event_type],
  ] as const) {
    if (v.length > FILTER_MAX) {
      throw new AppError("invalid_query", `${name} is ${v.length} characters long; a filter is at most ${FILTER_MAX}. Showing every dead letter.`, {
        details: [{ field: `query.${field}`, problem: `is ${v.length} characters long; at most ${FILTER_MAX}` }],
      });
    }
  }
  return { partner, event_type };
}

const where = (f: DeadLetterFilter) => ({ partner: f.partner || undefined, event_type: f.event_type || undefined });

/** One page of dead letters, newest first, and how many match the filter in all. */
export async function deadLetterPage(ctx: Pick<Ctx, "store">, f: DeadLetterFilter, offset: number, limit: number) {
  const page = await deadLettersForOperator(ctx, where(f), { limit, offset, after: null, cursor: null });
  const total = await countOperatorDeadLetters(ctx.store, where(f));
  return { items: page.items, hasMore: page.pagination.has_more, total };
}

/** The filter form's suggestions: partners that have dead letters, and every event type (the catalog's and any dead letter's). */
export async function filterSuggestions(ctx: Pick<Ctx, "store">): Promise<{ partners: string[]; eventTypes: string[] }> {
  const { partners, eventTypes } = await deadLetterNames(ctx.store);
  return { partners, eventTypes: [...new Set([...EVENT_TYPE_NAMES, ...eventTypes])].sort() };
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

export async function exportRows(ctx: Pick<Ctx, "store">, f: DeadLetterFilter, offset: number, limit: number) {
  const page = await deadLetterPage(ctx, f, offset, limit);
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
export async function replayDeadLetterOrThrow(ctx: Ctx, operator: OperatorRequest, ref: string, rawReason: string): Promise<number[]> {
  const reason = rawReason.trim();
  if (reason === "") throw refusal(400, "Nothing was replayed: say why (the reason is kept with the delivery and in the audit trail).");
  if (reason.length > REASON_MAX) throw refusal(400, `Nothing was replayed: the reason is at most ${REASON_MAX} characters.`);
  const what = /^\d+$/.test(ref) ? `delivery #${ref}` : `event ${ref}`;
  return ctx.store.tx(async (t) => {
    const rows = !REF.test(ref) ? [] : /^\d+$/.test(ref) ? [await deliveryStatusOf(t, Number(ref))].filter((r) => r !== null) : await deliveriesOfEvent(t, ref);
    if (rows.length === 0) throw refusal(404, `Nothing was replayed: there is no ${what}. It may have been pruned (dead letters are kept 90 days).`);
    const dead = rows.filter((r) => r.status === "dead_letter").map((r) => r.id);
    if (dead.length === 0) {
      const states = [...new Set(rows.map((r) => r.status.replace("_", " ")))].join(", ");
      throw refusal(409, `Nothing was replayed: ${what} is not a dead letter (it is ${states}); only dead letters are replayed here.`);
    }
    for (const id of dead) {
      const audit = (details: Record<string, unknown>) => ({
        at: ctx.clock.now().toISOString(),
        actor: operator.actor,
        action: "webhook_event.replay",
        target: String(id),
        details: { ...details, via: "console" },
        requestId: operator.requestId,
      });
      const out = await adminReplayIn(t, ctx, String(id), audit, reason);
      const failed = out.results.find((r) => !r.replayed);
      // Throwing here rolls back every replay of this request (and its audit rows): all or nothing.
      if (failed) throw refusal(409, `Nothing was replayed: delivery #${id}: ${WHY_NOT[failed.error ?? ""] ?? failed.error}.`);
    }
    return dead;
  });
}
