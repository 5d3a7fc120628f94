import { Elysia, t } from "elysia";
import { conditionalGet } from "../../http/openapi/contract";
import type { Guards } from "../../auth/guards";
import type { AppContext } from "../../context";
import { OPERATOR_REVALIDATE } from "../../http/caching/cache-control";
import { conditionalBytes } from "../../http/caching/conditional";
import { Envelope, includeMetaQuery, requestedMeta, ok } from "../../http/envelope";
import { named } from "../../http/openapi/names";
import { intQuery } from "../../http/params";
import { subscribeLinkInbox } from "./notify";
import { RESOLVED_DEFAULT_DAYS, RESOLVED_MAX_DAYS, resolvedVerification, SUMMARY_DEFAULT_DAYS, SUMMARY_MAX_DAYS, verificationSummary } from "./readmodels";

const Failures = named(
  "LinkInboxFailures",
  t.Object({ "4xx": t.Integer(), "5xx": t.Integer(), timeout: t.Integer(), other: t.Integer({ description: "network errors, 1xx/3xx, refused targets" }) }),
);
const TargetHealth = named(
  "LinkInboxTargetHealth",
  t.Object({
    target: t.String({ description: "redacted: host, first path segment, … and a fingerprint of the whole URL" }),
    configured: t.Boolean({ description: "in LINK_INBOX_WEBHOOK_URLS now" }),
    policy_problem: t.Union([t.String(), t.Null()], { description: "why the webhook target policy refuses it (without DNS), or null" }),
    attempts: t.Integer(),
    successes: t.Integer(),
    failures: Failures,
    skips: t.Object({ cooldown: t.Integer(), other: t.Integer() }),
    last_attempt_at: t.Union([t.String({ format: "date-time" }), t.Null()]),
    last_success_at: t.Union([t.String({ format: "date-time" }), t.Null()]),
    failing_streak: t.Integer({ description: "failed attempts since the last success (or since the first attempt)" }),
    pending: t.Integer({ description: "messages waiting or retrying" }),
    dead: t.Integer({ description: "messages given up on" }),
  }),
);
const KindHealth = named(
  "LinkInboxEventHealth",
  t.Object({
    event: t.String(),
    attempts: t.Integer(),
    successes: t.Integer(),
    failures: Failures,
    skips: t.Object({
      no_url: t.Integer(),
      cooldown: t.Integer(),
      silenced: t.Integer({ description: "alert notices held back by a silence" }),
      other: t.Integer(),
    }),
    pending: t.Integer(),
    dead: t.Integer(),
  }),
);
const Summary = Envelope({
  generated_at: t.String({ format: "date-time" }),
  days: t.Integer(),
  window: t.Object({ start_utc: t.String({ format: "date-time" }), end_utc: t.String({ format: "date-time" }) }),
  configured_targets: t.Integer(),
  cooldown_seconds: t.Integer(),
  max_attempts: t.Integer(),
  no_url_skips: t.Integer({ description: "messages not queued because no target was configured" }),
  targets: t.Array(TargetHealth),
  events: t.Array(KindHealth, { description: "per event kind" }),
});
const ResolvedTarget = named(
  "ResolvedNoticeTarget",
  t.Object({
    target: t.String(),
    delivered: t.Boolean(),
    delivered_at: t.Union([t.String({ format: "date-time" }), t.Null()]),
    attempts: t.Integer(),
    last_status_code_family: t.Union([t.String(), t.Null()]),
    outbox_status: t.Union([t.Literal("pending"), t.Literal("sent"), t.Literal("dead"), t.Null()]),
  }),
);
const ResolvedIncident = named(
  "ResolvedIncidentVerification",
  t.Object({
    incident_id: t.Integer(),
    issue_id: t.String(),
    title: t.String(),
    source: t.Union([t.Literal("automatic"), t.Literal("operator")]),
    resolved_at: t.String({ format: "date-time" }),
    delivered_to_all: t.Boolean({ description: "at least one target, and a 2xx from every one" }),
    targets: t.Array(ResolvedTarget),
    event_ids: t.Array(t.Integer(), { description: "ops_link_events ids of the resolution notice (attempts and skips)" }),
    skip_reasons: t.Array(t.String()),
  }),
);
const Resolved = Envelope({
  days: t.Integer(),
  configured_targets: t.Array(t.String()),
  count: t.Integer(),
  delivered_to_all_count: t.Integer(),
  incidents: t.Array(ResolvedIncident, { description: "newest first" }),
});

/** The link inbox's read-models, bearer token or operator session; the targets' URLs never appear, only their redacted labels. */
export function linkInboxRoutes(ctx: AppContext, guards: Guards) {
  subscribeLinkInbox(ctx);
  return new Elysia({ name: "herald:ops-link-inbox" })
    .use(guards.operator.plugin)
    .get("/admin/ops/link-inbox/verification-summary.json", async ({ query }) => ok(await verificationSummary(ctx, query)), {
      operator: "api",
      query: t.Object({
        days: intQuery({ minimum: 1, maximum: SUMMARY_MAX_DAYS, defaultValue: SUMMARY_DEFAULT_DAYS, description: "events and messages of the last days" }),
        ...includeMetaQuery,
      }),
      response: { 200: Summary },
      detail: { summary: "Link-inbox delivery health per target (attempts, failures by family, last success, failing streak, dead) and per event kind" },
    })
    .get(
      "/admin/ops/digest/resolved-verification.json",
      async ({ query, request, set }) => {
        const { body, lastModified } = await resolvedVerification(ctx, query);
        // include_meta makes the bytes (and so the ETag) per request; without it equal data gives equal bytes.
        const meta = requestedMeta(request, set.headers["x-request-id"], ctx.clock.now());
        const bytes = JSON.stringify({ success: true, ...body, ...(meta ? { meta } : {}) });
        return conditionalBytes(request, bytes, { lastModified, cacheControl: OPERATOR_REVALIDATE, contentType: "application/json", headers: set.headers });
      },
      {
        operator: "api",
        query: t.Object({
          days: intQuery({ minimum: 1, maximum: RESOLVED_MAX_DAYS, defaultValue: RESOLVED_DEFAULT_DAYS, description: "incidents resolved in the last days" }),
          ...includeMetaQuery,
        }),
        response: { 200: Resolved },
        detail: {
          ...conditionalGet("etag", "last-modified"),
          summary:
            "Resolved incidents of the window and whether their resolution notice reached every link-inbox target, with the event ids; strong ETag, Last-Modified, 304",
        },
      },
    );
}
