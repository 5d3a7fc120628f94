import type { Static } from "elysia";
import type { Owner } from "../auth/actors";
import type { AppContext } from "../context";
import { listAnswer, pageOf, type PageRequest } from "../http/pagination";
import { deliveryRecords } from "../webhooks/service";
import { sandboxDeliveryRows } from "./store";
import type { SandboxWebhooksModel } from "./webhooks-model";

/** The query's filters (user_id: deliveries whose event data names this user, as the salutes and users events do), its order settled. */
type SandboxEventFilter = Pick<Static<typeof SandboxWebhooksModel.eventsQuery>, "user_id" | "event_type"> & { order: "asc" | "desc" };

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
