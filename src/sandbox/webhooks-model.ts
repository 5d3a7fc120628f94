import { t } from "elysia";
import { PageQuery, PageQueryEcho } from "../http/pagination";
import { WebhooksModel } from "../webhooks/model";
import { readOf, SandboxRead, SandboxWrite } from "./model";
import { nullable } from "../http/routes/declare";

/**
 * The sandbox's own webhook routes: its delivery records (filtered by user) and the simulator. Its webhooks and
 * their replay are the live routes on the sandbox mount (src/webhooks/routes.ts), with the simulation added.
 */
export const SandboxWebhooksModel = {
  eventsQuery: t.Object({
    ...PageQuery,
    user_id: t.Optional(t.String({ maxLength: 32, description: "Only events whose data names this user id" })),
    order: t.Optional(t.Union([t.Literal("asc"), t.Literal("desc")], { description: "by delivery id; default desc" })),
    event_type: t.Optional(t.String({ maxLength: 64 })),
  }),
  events: readOf(
    t.Object({
      ...WebhooksModel.events.properties,
      query: PageQueryEcho({ order: t.Union([t.Literal("asc"), t.Literal("desc")]), user_id: nullable(t.String()), event_type: nullable(t.String()) }),
    }),
  ),
  scenarios: SandboxRead({
    scenarios_count: t.Integer(),
    scenarios: t.Array(t.Object({ id: t.String(), title: t.String(), event_type: t.String(), description: t.String() })),
  }),
  runMeta: SandboxRead({
    method: t.Literal("POST"),
    path: t.String(),
    required_fields: t.Array(t.String()),
    optional_fields: t.Array(t.String()),
    field_notes: t.Record(t.String(), t.String()),
  }),
  runBody: t.Object(
    {
      scenario_id: t.String({ minLength: 1, maxLength: 64 }),
      secret: t.Optional(t.String({ minLength: 1, maxLength: 256, description: "Sign with this secret" })),
      key_id: t.Optional(t.String({ pattern: "^[A-Za-z0-9_-]{1,128}$", description: "X-Partner-Key value to show; default the calling key" })),
      webhook_id: t.Optional(t.Integer({ minimum: 1, description: "Sign with this sandbox webhook's secret instead" })),
    },
    { additionalProperties: false },
  ),
  run: SandboxWrite({
    selected_scenario_id: t.String(),
    scenario: t.Object({ id: t.String(), title: t.String(), event_type: t.String() }),
    payload: t.Record(t.String(), t.Any(), { description: "The envelope {event_id, event_type, data, sandbox: true}" }),
    simulation: t.Object({
      headers: t.Record(t.String(), t.String(), { description: "X-Webhook-Id, X-Webhook-Event, X-Webhook-Timestamp, X-Webhook-Signature, X-Partner-Key …" }),
      body: t.String({ description: "The exact raw body the signature covers" }),
      signed_string: t.String({ description: "timestamp + '.' + body: the HMAC-SHA256 input" }),
      secret_source: t.Union([t.Literal("provided"), t.Literal("webhook"), t.Literal("sandbox_default")]),
      secret: t.Optional(t.String({ description: "Only for the public default secret" })),
      sent: t.Literal(false),
    }),
  }),
};
