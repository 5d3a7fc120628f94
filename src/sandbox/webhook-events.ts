import type { Owner } from "../auth/actors";
import type { AppContext } from "../context";
import { listAnswer, pageOf, type PageRequest } from "../http/pagination";
import { deliveryRecords } from "../webhooks/service";
import { type SandboxEventFilter, sandboxDeliveryRows } from "./store";

/**
 * GET /api/partner/sandbox/webhook-events: the sandbox owner's delivery records — the same rows, view and replay
 * history as the live list (deliveryRecords), with two filters the live list has not (user_id from the event data,
 * an order), so this is its own read.
 */
export async function listSandboxDeliveries(ctx: AppContext, owner: Owner, f: SandboxEventFilter, page: PageRequest) {
  const { rows, resumeAt } = await sandboxDeliveryRows(ctx.store, owner, f, { ...page, limit: page.limit + 1 });
  const p = pageOf(rows, page, (r) => r.id, resumeAt);
  // Each record with its replay history, exactly as the live list shows it.
  const records = { ...p, items: await deliveryRecords(ctx.store, p.items) };
  return listAnswer("events", records, { order: f.order, user_id: f.user_id ?? null, event_type: f.event_type ?? null });
}
