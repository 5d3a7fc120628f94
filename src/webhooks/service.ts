import type { AppContext } from "../context";
import { AppError, ValidationError } from "../http/errors";
import { pageOf, type PageRequest } from "../http/pagination";
import { webhookSignature } from "../client/sign";
import { EVENT_TYPE_NAMES, isEventType } from "./event-types";
import { emitEventSync, type Owner } from "./outbox";
import { MAX_WEBHOOK_ROTATION_OVERLAP_HOURS, WebhookSecrets } from "./secrets";
import { checkTargetUrl } from "./target-policy";
import { getWebhookOrThrow, type WebhookRow } from "./webhook-rows";

export { getWebhookOrThrow, type WebhookRow } from "./webhook-rows";
import { timingSafeEqual } from "node:crypto";

export const webhookView = (w: WebhookRow) => ({
  id: w.id,
  event_type: w.event_type,
  target_url: w.target_url,
  description: w.description,
  is_active: w.is_active,
  disabled_reason: w.disabled_reason,
  failing_since: w.failing_since,
  previous_secret_valid_until: w.previous_secret_valid_until,
  created_at: w.created_at,
  updated_at: w.updated_at,
});

const MAX_WEBHOOKS_PER_OWNER = 100;

function policyOf(ctx: AppContext) {
  return { allowPrivateTargets: ctx.config.webhooks.allowPrivateTargets, requireHttps: ctx.config.isProduction };
}

/** A webhook of this owner, or 404 — another partner's webhook is reported as not found, on purpose. */
export function createWebhook(ctx: AppContext, owner: Owner, input: { event_type: string; target_url: string; description?: string }) {
  const problems: Array<{ field: string; problem: string }> = [];
  if (!isEventType(input.event_type)) problems.push({ field: "event_type", problem: `must be one of: ${EVENT_TYPE_NAMES.join(", ")}` });
  const urlProblem = checkTargetUrl(input.target_url, policyOf(ctx));
  if (urlProblem) problems.push({ field: "target_url", problem: urlProblem });
  if (problems.length) {
    throw new ValidationError(`Invalid webhook: ${problems.map((p) => `${p.field} ${p.problem}`).join("; ")}`, problems);
  }
  const db = ctx.db.sqlite;
  const secrets = new WebhookSecrets(ctx);
  const secret = secrets.newSecret();
  const now = ctx.clock.now().toISOString();
  const id = db.transaction(() => {
    const { n } = db.query("SELECT count(*) AS n FROM webhooks WHERE partner = ? AND mode = ? AND deleted_at IS NULL").get(owner.partner, owner.mode) as {
      n: number;
    };
    if (n >= MAX_WEBHOOKS_PER_OWNER) throw new AppError("conflict", `A partner may have at most ${MAX_WEBHOOKS_PER_OWNER} webhooks; delete unused ones first`);
    const { id } = db
      .query(
        "INSERT INTO webhooks (partner, mode, event_type, target_url, description, secret_ciphertext, is_active, created_at, updated_at) VALUES (?, ?, ?, ?, ?, '', 1, ?, ?) RETURNING id",
      )
      .get(owner.partner, owner.mode, input.event_type, input.target_url, input.description ?? null, now, now) as { id: number };
    db.query("UPDATE webhooks SET secret_ciphertext = ? WHERE id = ?").run(secrets.seal(secret, id), id);
    return id;
  })();
  const row = getWebhookOrThrow(ctx, owner, id);
  return { ...webhookView(row), is_active: true, secret };
}

export function listWebhooks(ctx: AppContext, owner: Owner, filter: { event_type?: string; is_active?: boolean }, page: PageRequest) {
  const rows = ctx.db.sqlite
    .query(
      `SELECT * FROM webhooks WHERE partner = ?1 AND mode = ?2 AND deleted_at IS NULL
         AND (?3 IS NULL OR event_type = ?3) AND (?4 IS NULL OR is_active = ?4) AND (?5 IS NULL OR id < ?5)
       ORDER BY id DESC LIMIT ?6 OFFSET ?7`,
    )
    .all(
      owner.partner,
      owner.mode,
      filter.event_type ?? null,
      filter.is_active === undefined ? null : filter.is_active ? 1 : 0,
      page.after,
      page.limit + 1,
      page.offset,
    ) as WebhookRow[];
  const p = pageOf(rows, page, (r) => r.id);
  return { ...p, items: p.items.map(webhookView) };
}

/** Soft delete: history stays readable, pending deliveries are cancelled in the same transaction. */
export function deleteWebhook(ctx: AppContext, owner: Owner, id: number) {
  getWebhookOrThrow(ctx, owner, id);
  const now = ctx.clock.now().toISOString();
  const db = ctx.db.sqlite;
  const cancelled = db.transaction(() => {
    db.query("UPDATE webhooks SET deleted_at = ?, is_active = 0, updated_at = ? WHERE id = ?").run(now, now, id);
    return db
      .query(
        "UPDATE webhook_deliveries SET status = 'cancelled', next_attempt_at = NULL, updated_at = ? WHERE webhook_id = ? AND status IN ('queued', 'failed')",
      )
      .run(now, id).changes;
  })();
  return { deleted: true, webhook_id: id, cancelled_deliveries: cancelled };
}

/** Queues a real, signed delivery of a webhook.test event to this one webhook. */
export function testWebhook(ctx: AppContext, owner: Owner, id: number) {
  const w = getWebhookOrThrow(ctx, owner, id);
  if (!w.is_active)
    throw new AppError("conflict", `Webhook ${id} is disabled (${w.disabled_reason ?? "no reason recorded"}); create a new one to receive deliveries`);
  const now = ctx.clock.now().toISOString();
  const db = ctx.db.sqlite;
  const event = db.transaction(() =>
    emitEventSync(
      { sqlite: db, clock: ctx.clock, rng: ctx.rng },
      owner,
      "webhook.test",
      { webhook_id: id, message: "Test delivery from Herald", requested_at: now },
      { webhookId: id },
    ),
  )();
  ctx.dispatcher.nudge();
  return { queued: true, event_id: event.publicId, webhook_id: id, event_type: "webhook.test" as const, delivery_id: event.deliveryIds[0]! };
}

export function rotateWebhookSecret(ctx: AppContext, owner: Owner, id: number, overlapHours: number) {
  if (!Number.isInteger(overlapHours) || overlapHours < 0 || overlapHours > MAX_WEBHOOK_ROTATION_OVERLAP_HOURS) {
    throw new ValidationError(`overlap_hours must be an integer from 0 to ${MAX_WEBHOOK_ROTATION_OVERLAP_HOURS}`, [
      { field: "overlap_hours", problem: "must be 0–24" },
    ]);
  }
  const w = getWebhookOrThrow(ctx, owner, id);
  const secrets = new WebhookSecrets(ctx);
  const secret = secrets.newSecret();
  const now = ctx.clock.now();
  const validUntil = overlapHours > 0 ? new Date(now.getTime() + overlapHours * 3_600_000).toISOString() : null;
  ctx.db.sqlite
    .query("UPDATE webhooks SET secret_ciphertext = ?, previous_secret_ciphertext = ?, previous_secret_valid_until = ?, updated_at = ? WHERE id = ?")
    .run(secrets.seal(secret, id), validUntil ? w.secret_ciphertext : null, validUntil, now.toISOString(), id);
  return { ...webhookView(getWebhookOrThrow(ctx, owner, id)), secret };
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

// What other domains may use of the webhook domain besides the verbs above (STYLE.md: through its service).
export { emitEventSync, type Owner } from "./outbox";
export { deliveryView, deliveryHealth, deliverySloControls, replaysOf, replaySummary, requeue } from "./deliveries";
export { EVENT_TYPE_NAMES, type EventType } from "./event-types";
export { deliveryHeaders } from "./send";
export { WebhookSecrets } from "./secrets";
// Status subscribers (src/status/incidents/notify.ts) are sent, signed, SSRF-checked and retried exactly like deliveries.
export { sendDelivery, type SendResult } from "./send";
export { checkResolvedTarget, checkTargetUrl } from "./target-policy";
export { parseRetryAfter, retryDelaySeconds } from "./schedule";

/**
 * Dead-lettered deliveries now, over every partner and mode: the ops alerts monitor records it each run and
 * warns when it grew since the previous run (pruning of old dead letters can make it shrink).
 */
export function deadLetterTotal(ctx: AppContext): number {
  return (ctx.db.sqlite.prepare("SELECT count(*) AS n FROM webhook_deliveries WHERE status = 'dead_letter'").get() as { n: number }).n;
}
