import type { Owner } from "../auth/actors";
import type { AppContext } from "../context";
import { listAnswer, pageOf, type PageRequest } from "../http/pagination";
import { deliveryRecords } from "../webhooks/service";
import { sandboxDeliveryRows } from "./store";

export interface SandboxEventFilter {
  /** Deliveries whose event data names this user (data.user_id), e.g. the salutes and users events. */
  user_id?: string;
  event_type?: string;
  order: "asc" | "desc";
}

/**
 * GET /api/partner/sandbox/webhook-events: the sandbox owner's delivery records — the same rows, view and replay
 * history as the live list (deliveryRecords), with the sandbox table's filters: user_id (from the event
 * data) and an order.
 * The live list has neither, so this is its own read; the mode is a literal, never a parameter.
 */
export async function listSandboxDeliveries(ctx: AppContext, owner: Owner, f: SandboxEventFilter, page: PageRequest) {
  const rows = await sandboxDeliveryRows(ctx.store, ctx.store.dialect, owner, {
    eventType: f.event_type ?? null,
    userId: f.user_id ?? null,
    order: f.order,
    after: page.after,
    limit: page.limit + 1,
    offset: page.offset,
  });
  const p = pageOf(rows, page, (r) => r.id);
  // Each record with its replay history, exactly as the live list shows it.
  const records = { ...p, items: await deliveryRecords(ctx.store, p.items) };
  return listAnswer("events", records, { order: f.order, user_id: f.user_id ?? null, event_type: f.event_type ?? null });
}
