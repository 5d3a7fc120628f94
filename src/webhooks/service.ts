import { timingSafeEqual } from "node:crypto";
import { webhookSignature } from "../client/sign";
import { type AppContext, slot, stateOf } from "../context";
import type { Queryable } from "../db/port";
import { AppError, found, NotFoundError, problemsOrThrow, ValidationError } from "../http/errors/errors";
import { errorFields } from "../log";
import { pageOf, type PageRequest } from "../http/pagination";
import { deadLetterCount } from "./deliveries-store";
import type { WebhookContext } from "./deps";
import { EVENT_TYPE_NAMES, isEventType } from "./event-types";
import { WebhooksModel } from "./model";
import { emitEvent, type Owner } from "./outbox";
import { schemaView } from "../http/schema-view";
import { MAX_WEBHOOK_ROTATION_OVERLAP_HOURS, WebhookSecrets } from "./secrets";
import { CANCEL_BATCH_ROWS, cancelPendingDeliveries, countWebhooks, insertWebhook, listWebhookRows, rotateSecret, softDeleteWebhook, webhookOf } from "./store";
import type { WebhookRow } from "./store";
import { checkTargetUrl, targetPolicyOf } from "./target-policy";

export type { WebhookRow };

export const webhookView = (w: WebhookRow) => schemaView(WebhooksModel.webhook, w, {});

/** A webhook of this owner (partner and mode); another partner's webhook is "not found", never "forbidden". */
export async function getWebhookOrThrow(q: Queryable, owner: Owner, id: number): Promise<WebhookRow> {
  return found(await webhookOf(q, owner, id), "webhook", id);
}

const MAX_WEBHOOKS_PER_OWNER = 100;

// The write verbs run in the caller's transaction `t` (the request's idempotency transaction, docs/design.md §4), so
// the change and its stored response commit together; they await only `t`.

/** Registers a webhook; its secret is in the answer, once. */
export async function createWebhook(
  t: Queryable,
  ctx: Pick<WebhookContext, "config" | "clock" | "rng" | "secrets">,
  owner: Owner,
  input: { event_type: string; target_url: string; description?: string },
) {
  const problems: Array<{ field: string; problem: string }> = [];
  if (!isEventType(input.event_type)) problems.push({ field: "event_type", problem: `must be one of: ${EVENT_TYPE_NAMES.join(", ")}` });
  const urlProblem = checkTargetUrl(input.target_url, targetPolicyOf(ctx.config));
  if (urlProblem) problems.push({ field: "target_url", problem: urlProblem });
  problemsOrThrow("webhook", problems);
  const secrets = new WebhookSecrets(ctx);
  const secret = secrets.newSecret();
  const now = ctx.clock.now().toISOString();
  // Counted in the same transaction; on PostgreSQL two instances creating at the same moment can pass the cap
  // by one each — it is a guard against runaway scripts, not an exact quota.
  if ((await countWebhooks(t, owner)) >= MAX_WEBHOOKS_PER_OWNER) {
    throw new AppError("conflict", `A partner may have at most ${MAX_WEBHOOKS_PER_OWNER} webhooks; delete unused ones first`);
  }
  const fields = { event_type: input.event_type, target_url: input.target_url, description: input.description ?? null };
  const row = await insertWebhook(t, owner, fields, now, (id) => secrets.seal(secret, id));
  return { ...webhookView(row), is_active: true, secret };
}

export async function listWebhooks(ctx: Pick<WebhookContext, "store">, owner: Owner, filter: { event_type?: string; is_active?: boolean }, page: PageRequest) {
  const rows = await listWebhookRows(ctx.store, owner, { ...filter, before: page.after, limit: page.limit + 1, offset: page.offset });
  const p = pageOf(rows, page, (r) => r.id);
  return { ...p, items: p.items.map(webhookView) };
}

/**
 * Soft delete: history stays readable. Its pending deliveries are cancelled, up to CANCEL_BATCH_ROWS in this
 * transaction (the answer's `cancelled_deliveries`) and the rest after its commit (cancelRestAfterDelete).
 */
export async function deleteWebhook(t: Queryable, ctx: Pick<WebhookContext, "clock">, owner: Owner, id: number) {
  const done = await softDeleteWebhook(t, owner, id, ctx.clock.now().toISOString());
  if (!done) throw new NotFoundError("webhook", id);
  return { deleted: true, webhook_id: id, cancelled_deliveries: done.cancelled };
}

/** The cancellations running after deletes, per context: tests wait for them (cancellationsAfterDelete). */
const CANCELLING = slot("webhook cancellations after delete", () => new Set<Promise<void>>());

/**
 * After a delete has committed: when its transaction cancelled a full batch (more may be left), the rest of the
 * webhook's pending deliveries are cancelled in batches, the event loop free between them, while the request has
 * already answered. None of them is sent meanwhile (the dispatcher's lease settles a deleted webhook's delivery as
 * cancelled), and a process that stops before the end leaves the rest to the dispatcher as they come due and to the
 * webhook-prune job's sweep (cancelPendingOfDeleted).
 */
export function cancelRestAfterDelete(ctx: AppContext, answer: { webhook_id: number; cancelled_deliveries: number }): void {
  if (answer.cancelled_deliveries < CANCEL_BATCH_ROWS) return;
  const running = stateOf(ctx, CANCELLING);
  const id = answer.webhook_id;
  const work = cancelPendingDeliveries(ctx.store, id, ctx.clock.now().toISOString(), { maxMs: Number.POSITIVE_INFINITY }).then(
    (r) => ctx.log.info("deleted webhook's deliveries cancelled", { webhook_id: id, cancelled: r.cancelled, statements: r.statements }),
    (err: unknown) =>
      ctx.log.warn("cancelling a deleted webhook's deliveries stopped; the dispatcher cancels the rest", { webhook_id: id, ...errorFields(err) }),
  );
  running.add(work);
  void work.finally(() => running.delete(work));
}

/** Resolves once every cancellation begun by cancelRestAfterDelete in this context has ended. */
export async function cancellationsAfterDelete(ctx: AppContext): Promise<void> {
  await Promise.all(stateOf(ctx, CANCELLING));
}

/** Queues a real, signed delivery of a webhook.test event to this one webhook; nudge the dispatcher after the commit. */
export async function testWebhook(t: Queryable, ctx: Pick<WebhookContext, "clock" | "rng">, owner: Owner, id: number) {
  const w = await getWebhookOrThrow(t, owner, id);
  if (!w.is_active)
    throw new AppError("conflict", `Webhook ${id} is disabled (${w.disabled_reason ?? "no reason recorded"}); create a new one to receive deliveries`);
  const now = ctx.clock.now().toISOString();
  const data = { webhook_id: id, message: "Test delivery from Herald", requested_at: now };
  const event = await emitEvent(t, ctx, owner, "webhook.test", data, { webhookId: id });
  return { queued: true, event_id: event.publicId, webhook_id: id, event_type: "webhook.test" as const, delivery_id: event.deliveryIds[0]! };
}

export async function rotateWebhookSecret(
  t: Queryable,
  ctx: Pick<WebhookContext, "clock" | "rng" | "secrets">,
  owner: Owner,
  id: number,
  overlapHours: number,
) {
  if (!Number.isInteger(overlapHours) || overlapHours < 0 || overlapHours > MAX_WEBHOOK_ROTATION_OVERLAP_HOURS) {
    throw new ValidationError(`overlap_hours must be an integer from 0 to ${MAX_WEBHOOK_ROTATION_OVERLAP_HOURS}`, [
      { field: "overlap_hours", problem: "must be 0–24" },
    ]);
  }
  const w = await getWebhookOrThrow(t, owner, id);
  const secrets = new WebhookSecrets(ctx);
  const secret = secrets.newSecret();
  const now = ctx.clock.now();
  const validUntil = overlapHours > 0 ? new Date(now.getTime() + overlapHours * 3_600_000).toISOString() : null;
  const row = await rotateSecret(t, id, secrets.seal(secret, id), validUntil ? w.secret_ciphertext : null, validUntil, now.toISOString());
  if (!row) throw new NotFoundError("webhook", id);
  return { ...webhookView(row), secret };
}

/** Recomputes a delivery signature for a receiver debugging its check; compares in constant time. */
export function verifyWebhookSignatureFor(input: { signature: string; timestamp: string | number; payload: string | Record<string, unknown>; secret: string }) {
  const body = typeof input.payload === "string" ? input.payload : JSON.stringify(input.payload);
  const expected = webhookSignature(input.secret, input.timestamp, body);
  const provided = input.signature.trim().toLowerCase();
  const valid = /^[0-9a-f]{64}$/.test(provided) && timingSafeEqual(Buffer.from(provided, "hex"), Buffer.from(expected, "hex"));
  return {
    valid,
    provided_signature: input.signature,
    expected_signature: expected,
    timestamp: String(input.timestamp),
    canonical_body: `${input.timestamp}.${body}`,
    payload_was_object: typeof input.payload !== "string",
    validator_example: [
      'import { createHmac, timingSafeEqual } from "node:crypto";',
      "// rawBody: the exact bytes received, before any JSON parsing",
      'const expected = createHmac("sha256", secret).update(`${req.headers["x-webhook-timestamp"]}.${rawBody}`).digest("hex");',
      'const ok = timingSafeEqual(Buffer.from(expected, "hex"), Buffer.from(req.headers["x-webhook-signature"], "hex"))',
      '  && Math.abs(Date.now() / 1000 - Number(req.headers["x-webhook-timestamp"])) <= 300;',
    ].join("\n"),
  };
}

// What other domains may use of the webhook domain besides the verbs above (docs/design.md §1: through its service).
export { emitEvent, type Owner } from "./outbox";
export type { DeliveryRow } from "./deliveries-store";
export { deadLettersSince } from "./deliveries-store";
export { deliveryRecords, deliveryHealth, deliverySloControls, replaySummary, requeue, requeueRefs } from "./deliveries";
export { EVENT_TYPE_NAMES, type EventType } from "./event-types";
export { deliveryHeaders } from "./send";
export { WebhookSecrets } from "./secrets";
// Status subscribers (src/status/incidents/notify.ts) are sent, signed, SSRF-checked and retried exactly like deliveries.
export { sendDelivery, sendFailure, type SendResult } from "./send";
export { checkResolvedTarget, checkTargetUrl, targetPolicyOf } from "./target-policy";
export { retryDecision } from "./dispatcher";

/**
 * Dead-lettered deliveries now, over every partner and mode: the ops alerts monitor records it each run and
 * warns when it grew since the previous run (pruning of old dead letters can make it shrink).
 */
export function deadLetterTotal(ctx: Pick<WebhookContext, "store">): Promise<number> {
  return deadLetterCount(ctx.store);
}
