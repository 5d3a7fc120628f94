import type { AdminRequest } from "../../auth/admin-plugin";
import { actorLabel } from "../../auth/actors";
import type { AppContext } from "../../context";
import type { Queryable } from "../../db/port";
import { AppError, found, ValidationError } from "../../http/errors/errors";
import type { PageRequest } from "../../http/pagination";
import { checkTargetUrl, targetPolicyOf, WebhookSecrets } from "../../webhooks/service";
import { schemaView } from "../../http/schema-view";
import { Subscriber } from "../model-admin";
import {
  countSubscribers,
  deleteSubscriberRows,
  deliveryHealthOf,
  insertSubscriber,
  setSubscriberSecret,
  subscriberById,
  subscriberByUrl,
  subscriberPage,
  type SubscriberRow,
} from "../store/subscribers";
import { auditOperator } from "../../auth/audit";

// Status subscribers: URLs that receive incident events (src/status/incidents/notify.ts), registered by operators.
// Admin-only by choice: a public sign-up would need double opt-in, per-IP limits and abuse handling for a
// feature whose subscribers are a handful of partner and on-call systems an operator knows. A URL is one
// subscriber: registering it again with the same event types is a no-op that answers the existing one (a
// retried POST is safe); with other event types it is a 409, so nothing changes silently. The secret is
// shown once, sealed at rest under the master key and bound to the subscriber id.

export const MAX_SUBSCRIBERS = 100;
const AAD = (id: number) => `status-subscriber:${id}`;

const healthOf = async (q: Queryable, id: number) => {
  const { counts, last } = await deliveryHealthOf(q, id);
  const n = (s: string) => counts.find((c) => c.status === s)?.n ?? 0;
  return {
    pending: n("queued"),
    succeeded: n("succeeded"),
    failed: n("failed"),
    dead_letter: n("dead_letter"),
    last_attempt_at: last?.last_attempt_at ?? null,
    last_error: last?.last_error ?? null,
  };
};

const view = async (q: Queryable, r: SubscriberRow) =>
  schemaView(Subscriber, r, { event_types: JSON.parse(r.event_types) as string[], deliveries: await healthOf(q, r.id) });

export type SubscriberView = Awaited<ReturnType<typeof view>>;

export function openSubscriberSecret(ctx: AppContext, id: number, ciphertext: string): string {
  return ctx.secrets.open(ciphertext, AAD(id));
}

/**
 * The URL is claimed by the INSERT itself (insertSubscriber). The limit is counted first: on PostgreSQL two
 * registrations at the very same time may pass it together by one, which bounds nothing that matters.
 */
export async function createSubscriber(
  ctx: AppContext,
  admin: AdminRequest,
  input: { url: string; description?: string; event_types?: string[] },
  allTypes: readonly string[],
): Promise<{ subscriber: SubscriberView; created: boolean; secret: string | null }> {
  const problem = checkTargetUrl(input.url, targetPolicyOf(ctx.config));
  if (problem) throw new ValidationError(`url ${problem}`, [{ field: "url", problem }]);
  const types = JSON.stringify([...new Set(input.event_types ?? allTypes)].sort());
  const nowIso = ctx.clock.now().toISOString();
  // Same secret format as partner webhooks, so the same verifiers accept it.
  const secret = new WebhookSecrets(ctx).newSecret();
  return ctx.store.tx(async (t) => {
    const already = async (existing: SubscriberRow) => {
      if (existing.event_types !== types) {
        throw new AppError("conflict", "This URL is already subscribed with other event types; delete that subscriber first to change them", {
          details: { subscriber_id: existing.id, event_types: JSON.parse(existing.event_types) },
        });
      }
      return { subscriber: await view(t, existing), created: false, secret: null };
    };
    const existing = await subscriberByUrl(t, input.url);
    if (existing) return already(existing);
    if ((await countSubscribers(t)) >= MAX_SUBSCRIBERS) throw new AppError("conflict", `At most ${MAX_SUBSCRIBERS} status subscribers; delete one first`);
    const row = await insertSubscriber(t, {
      url: input.url,
      description: input.description ?? null,
      event_types: types,
      created_by: actorLabel(admin.actor),
      created_at: nowIso,
    });
    // Registered meanwhile by another request: answered as if it had been there first.
    if (!row) return already((await subscriberByUrl(t, input.url))!);
    // Sealed under its own id (known only after the insert), so a ciphertext cannot be moved to another row.
    await setSubscriberSecret(t, row.id, ctx.secrets.seal(secret, AAD(row.id)));
    await auditOperator(t, admin, nowIso, "status.subscriber.create", String(row.id), { url: input.url, event_types: JSON.parse(types) });
    return { subscriber: await view(t, row), created: true, secret };
  });
}

export async function listSubscribers(ctx: AppContext, page: PageRequest) {
  const p = await subscriberPage(ctx.store, page);
  const items: SubscriberView[] = [];
  for (const r of p.items) items.push(await view(ctx.store, r));
  return { ...p, items };
}

/** Deletes a subscriber and its queued and past deliveries (the audit row keeps what it was). */
export async function deleteSubscriber(ctx: AppContext, admin: AdminRequest, id: number): Promise<SubscriberView> {
  const nowIso = ctx.clock.now().toISOString();
  return ctx.store.tx(async (t) => {
    const row = found(await subscriberById(t, id), "status subscriber", id);
    const v = await view(t, row);
    await deleteSubscriberRows(t, id);
    await auditOperator(t, admin, nowIso, "status.subscriber.delete", String(id), { url: row.url, event_types: v.event_types });
    return v;
  });
}
