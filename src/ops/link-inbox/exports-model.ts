import { t } from "elysia";
import { includeMetaQuery, MetaSchema, ignoredMetaQuery } from "../../http/envelope";
import { named } from "../../http/openapi/names";
import { intQuery } from "../../http/params";
import { LINK_EVENTS, SKIP_REASONS, STATUS_CODE_FAMILIES } from "./notify";

// Schemas of the link-inbox event exports (src/ops/link-inbox/exports-routes.ts). Multi-select parameters are arrays:
// Elysia collects `?event=a&event=b` and splits `?event=a,b` alike; the service checks every value against its
// list and names the parameter in a 400 invalid_query (so does the schema for lengths and the numeric limit). The
// values of event, status_code_family and skip_reason are the notifier's own (notify.ts writes them).

export const WINDOW_PRESETS = ["last_digest_warn", "last_outage"] as const;
const LinkEvent = named(
  "LinkInboxEvent",
  t.Object(
    {
      id: t.Optional(t.Integer()),
      at: t.Optional(t.String({ format: "date-time" })),
      event: t.Optional(t.String()),
      issue_id: t.Optional(t.String()),
      target: t.Optional(t.String({ description: "the chat target's name" })),
      url: t.Optional(t.Union([t.String(), t.Null()], { description: "the target URL, redacted by the notifier" })),
      attempt: t.Optional(t.Integer()),
      status_code: t.Optional(t.Union([t.Integer(), t.Null()])),
      status_code_family: t.Optional(t.Union([t.String(), t.Null()])),
      skip_reason: t.Optional(t.Union([t.String(), t.Null()])),
      outbox_id: t.Optional(t.Union([t.Integer(), t.Null()])),
      error: t.Optional(t.Union([t.String(), t.Null()])),
    },
    { description: "one delivery attempt or skip; only the requested fields are present" },
  ),
);
/** The columns of an exported event, in export order (LinkEvent's keys); `fields` picks a subset. */
export const EVENT_FIELDS = Object.keys(LinkEvent.properties) as Array<keyof typeof LinkEvent.properties>;
export type EventField = (typeof EVENT_FIELDS)[number];

export const EXPORT_DEFAULT_LIMIT = 1000;
export const EXPORT_MAX_LIMIT = 50_000;
export const URL_CONTAINS_MAX = 200;

const flag = (description: string) => t.Optional(t.Union([t.Literal("0"), t.Literal("1")], { description }));
const multi = (description: string) => t.Optional(t.Array(t.String(), { description }));

export const filterQuery = {
  event: multi(`event names, repeated or comma-separated (any of them): ${LINK_EVENTS.join(", ")}`),
  event_prefix: t.Optional(t.String({ maxLength: 64, description: "only events whose name starts with this text (incident. → the three incident events)" })),
  at_from: t.Optional(t.String({ maxLength: 40, description: "ISO 8601 instant with a zone: events at or after it" })),
  at_to: t.Optional(t.String({ maxLength: 40, description: "ISO 8601 instant with a zone: events before it; must be after at_from" })),
  status_code_family: multi(`attempt outcome families, repeated or comma-separated: ${STATUS_CODE_FAMILIES.join(", ")}`),
  skip_reason: multi(`skip reasons, repeated or comma-separated: ${SKIP_REASONS.join(", ")}`),
  issue_id: t.Optional(t.String({ maxLength: 200, description: "exactly this issue id (an incident id, an alert or anomaly key)" })),
  url_contains: t.Optional(
    t.String({
      maxLength: URL_CONTAINS_MAX,
      description: `events whose (redacted) url contains this text, case-sensitive; at most ${URL_CONTAINS_MAX} characters`,
    }),
  ),
  window_preset: t.Optional(t.String({ maxLength: 40, description: `a named window, intersected with at_from/at_to: ${WINDOW_PRESETS.join(", ")}` })),
  limit: intQuery({ minimum: 1, maximum: EXPORT_MAX_LIMIT, defaultValue: EXPORT_DEFAULT_LIMIT, description: "rows at most, newest first" }),
};

/** How an export answers, not what it selects: a download token stores none of them but compress. */
export const EXPORT_FLAGS = {
  count_only: flag("1: only the number of matching events"),
  checksum: flag("1: header X-Export-SHA256 = sha256 (hex) of the exact body bytes sent; the body is then never re-encoded by Accept-Encoding"),
  compress: flag("1: the body is gzip (Content-Encoding: gzip), whatever Accept-Encoding says"),
  download_token: flag("1: instead of the body, a one-time download token for export-download.csv (10 minutes, this operator only)"),
  debug: flag("1: the JSON adds how the filters were resolved and timings; the CSV adds a Server-Timing header"),
};

export const exportQuery = t.Object({
  ...filterQuery,
  fields: t.Optional(
    t.Array(t.String(), {
      description: `columns to include, comma list, in this order: ${EVENT_FIELDS.join(", ")}; default all`,
    }),
  ),
  ...EXPORT_FLAGS,
  ...includeMetaQuery,
});

export const ExportWindow = named(
  "LinkInboxExportWindow",
  t.Object({
    preset: t.Union([t.String(), t.Null()]),
    from: t.Union([t.String(), t.Null()], { description: "inclusive lower bound applied, or null" }),
    to: t.Union([t.String(), t.Null()], { description: "exclusive upper bound applied, or null" }),
    note: t.Union([t.String(), t.Null()], { description: "why the preset matched nothing, or where its window came from" }),
  }),
);

/** The filters as checked by exports.ts; the store filters by them without window_preset and limit (store-reads.ts). */
export const ExportQueryEcho = named(
  "LinkInboxExportQuery",
  t.Object({
    event: t.Array(t.String()),
    event_prefix: t.Union([t.String(), t.Null()]),
    at_from: t.Union([t.String(), t.Null()]),
    at_to: t.Union([t.String(), t.Null()]),
    status_code_family: t.Array(t.String()),
    skip_reason: t.Array(t.String()),
    issue_id: t.Union([t.String(), t.Null()]),
    url_contains: t.Union([t.String(), t.Null()]),
    window_preset: t.Union([t.String(), t.Null()]),
    limit: t.Integer(),
  }),
);

export const LinkExportsModel = {
  exportQuery,
  export: named(
    "LinkInboxEventsExport",
    t.Object({
      success: t.Literal(true),
      generated_at: t.String({ format: "date-time" }),
      total: t.Integer({ description: "events matching the filters" }),
      count: t.Integer({ description: "events in this answer (total, or limit when truncated; with count_only, total)" }),
      truncated: t.Boolean(),
      fields: t.Array(t.String()),
      query: ExportQueryEcho,
      window: ExportWindow,
      events: t.Optional(t.Array(LinkEvent, { description: "newest first; absent with count_only=1" })),
      debug: t.Optional(t.Record(t.String(), t.Unknown(), { description: "debug=1: filters in words, and timings in ms" })),
      meta: t.Optional(MetaSchema),
    }),
  ),
  tokenIssued: named(
    "LinkInboxDownloadToken",
    t.Object({
      success: t.Literal(true),
      download_token: t.String({ description: "shown once; only its sha256 is stored" }),
      download_url: t.String(),
      export: t.String(),
      expires_at: t.String({ format: "date-time" }),
      requested_by: t.String(),
      params: t.Record(t.String(), t.Unknown()),
      meta: t.Optional(MetaSchema),
    }),
  ),
  downloadQuery: t.Object({ ...ignoredMetaQuery, download_token: t.String({ minLength: 1, maxLength: 100, description: "the token from download_token=1" }) }),
  telemetryQuery: t.Object({
    requested_by: t.Optional(t.String({ maxLength: 200, description: "only this operator (admin:<name>#<token id>)" })),
    ...includeMetaQuery,
  }),
  telemetry: named(
    "LinkInboxExportTelemetry",
    t.Object({
      success: t.Literal(true),
      generated_at: t.String({ format: "date-time" }),
      requested_by: t.Union([t.String(), t.Null()]),
      exports: t.Object({
        downloads: t.Integer(),
        bytes: t.Integer(),
        by_source: t.Record(t.String(), t.Object({ downloads: t.Integer(), bytes: t.Integer() })),
      }),
      download_tokens: t.Object({ requested: t.Integer(), used: t.Integer(), expired: t.Integer(), pending: t.Integer() }),
      by_actor: t.Array(
        t.Object({
          actor: t.String(),
          downloads: t.Integer(),
          bytes: t.Integer(),
          tokens_requested: t.Integer(),
          tokens_used: t.Integer(),
          tokens_expired: t.Integer(),
        }),
      ),
      meta: t.Optional(MetaSchema),
    }),
  ),
};
