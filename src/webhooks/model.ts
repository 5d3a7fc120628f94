import { t } from "elysia";
import { Envelope } from "../http/envelope";
import { ListAnswer, PageQuery } from "../http/pagination";
import { intPath, intQuery } from "../http/params";
import { named } from "../http/openapi/names";
import { nullable } from "../http/routes/declare";
import { CANCEL_BATCH_ROWS } from "./store";
import { DELIVERY_STATUSES } from "./tables";

/** The statuses a delivery record shows: a dead letter is a `failed` record with `is_dead_letter: true`. */
export const DELIVERY_VIEW_STATUSES = ["queued", "processing", "succeeded", "failed", "cancelled"] as const;

/** An `evt_…` event id as the envelope carries it (X-Webhook-Id). */
export const EVENT_PUBLIC_ID = /^evt_[0-9a-f]{24}$/;

const Webhook = named(
  "Webhook",
  t.Object({
    id: t.Integer(),
    event_type: t.String(),
    target_url: t.String(),
    description: nullable(t.String()),
    is_active: t.Integer({ description: "1 active, 0 disabled" }),
    disabled_reason: nullable(t.String()),
    failing_since: nullable(t.String()),
    previous_secret_valid_until: nullable(t.String()),
    created_at: t.String(),
    updated_at: t.String(),
  }),
);

export const Delivery = named(
  "WebhookEvent",
  t.Object({
    id: t.Integer(),
    event_id: t.String({ description: "The envelope's event_id (X-Webhook-Id), stable across retries and replays" }),
    webhook_id: t.Integer(),
    event_type: t.String(),
    status: t.UnionEnum(DELIVERY_VIEW_STATUSES, {
      description: "A dead letter is `failed` with is_dead_letter true (its attempts are spent); `failed` alone will be retried",
    }),
    attempts: t.Integer({ description: "Requests sent since the event or the latest replay, each counted before it leaves" }),
    is_dead_letter: t.Boolean(),
    reason_tag: nullable(t.String({ description: "Why the last attempt failed; once delivered, the latest replay's reason (null if never replayed)" })),
    last_error: nullable(t.String()),
    last_status_code: nullable(t.Integer()),
    target_url: t.String(),
    created_at: t.String(),
    last_attempt_at: nullable(t.String()),
    next_attempt_at: nullable(t.String()),
    delivered_at: nullable(t.String()),
    replays: t.Optional(
      t.Array(t.Object({ reason_tag: t.String(), note: nullable(t.String()), replayed_at: t.String() }), {
        description: "Every replay of this delivery, oldest first (the live list; empty when never replayed)",
      }),
    ),
  }),
);

/** A dead letter as the partner's summary lists it. */
export const DeadLetterEvent = t.Object({
  event_id: t.Integer(),
  public_event_id: t.String(),
  webhook_id: t.Integer(),
  event_type: t.String(),
  target_url: t.String(),
  attempts: t.Integer(),
  reason_tag: nullable(t.String()),
  last_error: nullable(t.String()),
  created_at: t.String(),
  updated_at: t.String(),
});

/** One replay result (the sandbox's adds its simulation). */
export const ReplayResultItem = t.Object({
  event_id: t.Union([t.Integer(), t.String()], { description: "As given: a delivery id, or an evt_… event id" }),
  delivery_id: nullable(t.Integer({ description: "The delivery replayed or refused; null when none of yours was found" })),
  replayed: t.Boolean(),
  error: nullable(t.String()),
  reason_tag: t.String(),
});

const ReplayResult = named(
  "ReplayResult",
  Envelope({
    count: t.Integer(),
    replayed_count: t.Integer(),
    failed_count: t.Integer(),
    reason_tag: t.String(),
    note: nullable(t.String()),
    results: t.Array(ReplayResultItem),
  }),
);

const reasonTag = t.String({ pattern: "^[a-z0-9_]{1,40}$", description: "why you replay, e.g. receiver_fix" });

export const WebhooksModel = {
  webhook: Webhook,
  createBody: t.Object(
    {
      event_type: t.String({ maxLength: 64 }),
      target_url: t.String({ maxLength: 2048 }),
      description: t.Optional(t.String({ maxLength: 500 })),
    },
    { additionalProperties: false },
  ),
  created: Envelope({ webhook: t.Object({ ...Webhook.properties, is_active: t.Boolean(), secret: t.String({ description: "Shown once" }) }) }),
  listQuery: t.Object({
    ...PageQuery,
    event_type: t.Optional(t.String()),
    is_active: t.Optional(t.Union([t.Literal("0"), t.Literal("1"), t.Literal("true"), t.Literal("false")])),
  }),
  list: Envelope(ListAnswer("webhooks", t.Array(Webhook), { event_type: nullable(t.String()), is_active: nullable(t.Boolean()) })),
  idParams: t.Object({ webhook_id: intPath() }),
  deleted: Envelope({
    deleted: t.Boolean(),
    webhook_id: t.Integer(),
    cancelled_deliveries: t.Integer({
      description: `Pending deliveries cancelled with the delete itself, at most ${CANCEL_BATCH_ROWS}; any others are cancelled within seconds after the answer, and none is sent`,
    }),
  }),
  tested: Envelope({ queued: t.Boolean(), event_id: t.String(), webhook_id: t.Integer(), event_type: t.String(), delivery_id: t.Integer() }),
  rotateBody: t.Object({ overlap_hours: t.Optional(t.Integer({ minimum: 0, maximum: 24 })) }, { additionalProperties: false }),
  rotated: Envelope({ webhook: t.Object({ ...Webhook.properties, secret: t.String() }) }),
  dlqQuery: t.Object({ hours: intQuery({ minimum: 1, maximum: 2160, defaultValue: 24 }), include_meta: t.Optional(t.String()) }),
  dlq: named(
    "DeadLetterSummary",
    Envelope({
      window_hours: t.Integer(),
      dead_letter_count: t.Integer(),
      max_attempts: t.Integer(),
      by_event_type: t.Array(t.Object({ event_type: t.String(), count: t.Integer() })),
      by_reason_tag: t.Array(t.Object({ reason_tag: t.String(), count: t.Integer() })),
      events: t.Array(DeadLetterEvent),
    }),
  ),
  eventsQuery: t.Object({
    ...PageQuery,
    status: t.Optional(t.Union(DELIVERY_STATUSES.map((s) => t.Literal(s)))),
    reason_tag: t.Optional(t.String({ maxLength: 40 })),
    event_type: t.Optional(t.String({ maxLength: 64 })),
    from: t.Optional(t.String()),
    to: t.Optional(t.String()),
    webhook_id: intQuery({ minimum: 1, maximum: Number.MAX_SAFE_INTEGER }),
  }),
  events: Envelope(
    ListAnswer("events", t.Array(Delivery), {
      status: nullable(t.String()),
      reason_tag: nullable(t.String()),
      from: nullable(t.String({ description: "as applied: ISO 8601 UTC" })),
      to: nullable(t.String({ description: "as applied: ISO 8601 UTC" })),
      webhook_id: nullable(t.Integer()),
      event_type: nullable(t.String()),
    }),
  ),
  replayBody: t.Object(
    {
      event_ids: t.Array(
        t.Union([
          t.Integer({ minimum: 1, description: "a delivery id: a record's id, the dead-letter summary's event_id" }),
          t.String({ pattern: EVENT_PUBLIC_ID.source, description: "an event id: the X-Webhook-Id, as the test route answers it" }),
        ]),
        { minItems: 1, maxItems: 100 },
      ),
      reason_tag: t.Optional(reasonTag),
      note: t.Optional(t.String({ maxLength: 500 })),
    },
    { additionalProperties: false },
  ),
  replay: ReplayResult,
  recoverBody: t.Object(
    {
      since: t.String({ maxLength: 64, description: "ISO 8601 time such as 2026-01-01T00:00:00Z" }),
      until: t.Optional(t.String({ maxLength: 64, description: "ISO 8601 time such as 2026-01-02T00:00:00Z; default now" })),
      reason_tag: t.Optional(reasonTag),
      note: t.Optional(t.String({ maxLength: 500 })),
    },
    { additionalProperties: false },
  ),
  verifyBody: t.Object(
    {
      signature: t.String({ maxLength: 256 }),
      timestamp: t.Union([t.String({ maxLength: 20 }), t.Integer()]),
      payload: t.Union([t.String({ maxLength: 1_000_000 }), t.Record(t.String(), t.Any())]),
      secret: t.String({ minLength: 1, maxLength: 256 }),
    },
    { additionalProperties: false },
  ),
  verified: Envelope({
    valid: t.Boolean(),
    provided_signature: t.String(),
    expected_signature: t.String(),
    timestamp: t.String(),
    canonical_body: t.String(),
    payload_was_object: t.Boolean(),
    validator_example: t.String(),
  }),
  eventTypes: named("WebhookEventTypes", Envelope({ count: t.Integer(), event_types: t.Array(t.Object({ event_type: t.String(), description: t.String() })) })),
  adminReplayParams: t.Object({ event_id: t.String({ maxLength: 64 }) }),
  adminReplayed: Envelope({
    event_id: t.String(),
    requeued: t.Integer(),
    results: t.Array(ReplayResultItem),
  }),
};
