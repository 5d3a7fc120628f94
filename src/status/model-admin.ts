import { t } from "elysia";
import { Envelope } from "../http/envelope";
import { ListAnswer, PageQuery } from "../http/pagination";
import { intPath } from "../http/params";
import { ComponentIdSchema, Incident, IncidentStateSchema, MaintenanceWindow } from "./model";
import { named } from "../http/openapi/names";

// Request and response schemas of the operators' status routes: maintenance windows, operator incidents and
// their updates, and status subscribers. Bodies refuse unknown fields (a typo is a 400, not a silent no-op).

const strict = { additionalProperties: false } as const;
const Severity = t.Union([t.Literal("warn"), t.Literal("bad")], { description: "warn = degraded service, bad = outage" });
const Components = t.Array(ComponentIdSchema, { maxItems: 10, description: "ids of the affected components (see components in the status answer)" });
const Title = t.String({ minLength: 1, maxLength: 200 });
const Message = t.String({ minLength: 1, maxLength: 5000, description: "plain text shown to the public; 1–5000 characters" });
const ListQuery = t.Object(PageQuery);

export const IdempotencyHeaders = t.Object({
  "idempotency-key": t.Optional(
    t.String({
      minLength: 1,
      maxLength: 255,
      pattern: "^[\\x21-\\x7e]+$",
      description: "1–255 visible ASCII characters; a retry with the same key and body changes nothing",
    }),
  ),
});

const AdminMaintenanceWindow = t.Object({ ...MaintenanceWindow.properties, created_by: t.String(), created_at: t.String() });
// Written out for the literal types; test/status/subscribers.test.ts checks it against STATUS_EVENT_TYPES.
const EventType = t.Union([t.Literal("status.incident.created"), t.Literal("status.incident.updated"), t.Literal("status.incident.resolved")]);

export const Subscriber = named(
  "StatusSubscriber",
  t.Object({
    id: t.Integer(),
    url: t.String(),
    description: t.Union([t.String(), t.Null()]),
    event_types: t.Array(t.String()),
    created_by: t.String(),
    created_at: t.String(),
    deliveries: t.Object({
      pending: t.Integer(),
      succeeded: t.Integer(),
      failed: t.Integer({ description: "failed at least once, retry scheduled" }),
      dead_letter: t.Integer(),
      last_attempt_at: t.Union([t.String(), t.Null()]),
      last_error: t.Union([t.String(), t.Null()]),
    }),
  }),
);

export const StatusAdminModel = {
  maintenanceList: Envelope(ListAnswer("windows", t.Array(AdminMaintenanceWindow))),
  maintenanceListQuery: ListQuery,
  maintenanceBody: t.Object(
    {
      starts_at: t.String({ maxLength: 40, description: "ISO 8601 UTC; at most 5 minutes in the past" }),
      ends_at: t.String({ maxLength: 40, description: "ISO 8601 UTC; after starts_at, within 14 days of it" }),
      title: Title,
      description: t.Optional(t.String({ maxLength: 2000 })),
    },
    strict,
  ),
  maintenanceParams: t.Object({ id: intPath() }),
  maintenanceOne: Envelope({ window: AdminMaintenanceWindow }),

  incidentListQuery: t.Object({
    ...PageQuery,
    source: t.Optional(t.Union([t.Literal("automatic"), t.Literal("operator")])),
    status: t.Optional(t.Union([t.Literal("open"), t.Literal("resolved")])),
  }),
  incidentList: Envelope(ListAnswer("incidents", t.Array(Incident), { source: t.Union([t.String(), t.Null()]), status: t.Union([t.String(), t.Null()]) })),
  incidentParams: t.Object({ incident_id: intPath() }),
  incidentCreateBody: t.Object(
    {
      title: Title,
      message: Message,
      severity: Severity,
      state: t.Optional(IncidentStateSchema),
      components: t.Optional(Components),
      started_at: t.Optional(t.String({ maxLength: 40, description: "ISO 8601 UTC, when it began (default now); up to 30 days back, never in the future" })),
    },
    strict,
  ),
  incidentUpdateBody: t.Object({ state: IncidentStateSchema, message: Message, severity: t.Optional(Severity) }, strict),
  incidentEditBody: t.Object({ title: t.Optional(Title), components: t.Optional(Components) }, strict),
  incidentWritten: Envelope({
    incident: Incident,
    replayed: t.Boolean({ description: "true: an earlier request with this Idempotency-Key did it; nothing changed now" }),
  }),
  incidentOne: Envelope({ incident: Incident }),

  subscriberListQuery: ListQuery,
  subscriberList: Envelope(ListAnswer("subscribers", t.Array(Subscriber))),
  subscriberParams: t.Object({ subscriber_id: intPath() }),
  subscriberBody: t.Object(
    {
      url: t.String({
        minLength: 1,
        maxLength: 2048,
        description: "https URL that receives POSTed events (http and private addresses only where WEBHOOK_ALLOW_PRIVATE_TARGETS)",
      }),
      description: t.Optional(t.String({ maxLength: 500 })),
      event_types: t.Optional(t.Array(EventType, { minItems: 1, maxItems: 3, description: "default: all three" })),
    },
    strict,
  ),
  subscriberCreated: Envelope({
    subscriber: Subscriber,
    created: t.Boolean({ description: "false: this URL was already subscribed with these event types; nothing changed" }),
    secret: t.Union([t.String(), t.Null()], { description: "the signing secret, shown once (null when created is false)" }),
  }),
  subscriberOne: Envelope({ subscriber: Subscriber }),
};
