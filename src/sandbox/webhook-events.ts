import type { Owner } from "../auth/actors";
import type { AppContext } from "../context";
import { pageOf, type PageRequest } from "../http/pagination";
import { deliveryView, replaysOf } from "../webhooks/service";

export interface SandboxEventFilter {
  /** Deliveries whose event data names this user (data.user_id), e.g. the salutes and users events. */
  user_id?: string;
  event_type?: string;
  order: "asc" | "desc";
}

/**
 * GET /api/partner/sandbox/webhook-events: the sandbox owner's delivery records — the same rows, view and replay
 * history as the live list (deliveryView + replaysOf), with the sandbox table's filters: user_id (from the event
 * data) and an order.
 * The live list has neither, so this is its own read; the mode is a literal, never a parameter.
 */
export function listSandboxDeliveries(ctx: AppContext, owner: Owner, f: SandboxEventFilter, page: PageRequest) {
  const desc = f.order === "desc";
  const rows = ctx.db.sqlite
    .query(
      `SELECT d.id, d.webhook_id, e.public_id AS event_public_id, e.event_type, d.status, d.attempts, d.reason_tag, d.last_error,
              d.last_status_code, w.target_url, d.created_at, d.updated_at, d.last_attempt_at, d.next_attempt_at, d.delivered_at
       FROM webhook_deliveries d JOIN events e ON e.id = d.event_id JOIN webhooks w ON w.id = d.webhook_id
       WHERE d.partner = ?1 AND d.mode = 'sandbox'
         AND (?2 IS NULL OR e.event_type = ?2)
         AND (?3 IS NULL OR json_extract(e.data, '$.user_id') = ?3)
         AND (?4 IS NULL OR ${desc ? "d.id < ?4" : "d.id > ?4"})
       ORDER BY d.id ${desc ? "DESC" : "ASC"} LIMIT ?5 OFFSET ?6`,
    )
    .all(owner.partner, f.event_type ?? null, f.user_id ?? null, page.after, page.limit + 1, page.offset) as Parameters<typeof deliveryView>[0][];
  const p = pageOf(rows, page, (r) => r.id);
  // Each record with its replay history, exactly as the live list shows it.
  const replays = replaysOf(
    ctx,
    p.items.map((r) => r.id),
  );
  return {
    count: p.count,
    events: p.items.map((r) => ({ ...deliveryView(r), replays: replays.get(r.id)! })),
    query: { ...p.query, order: f.order, user_id: f.user_id ?? null, event_type: f.event_type ?? null },
    pagination: p.pagination,
  };
}
