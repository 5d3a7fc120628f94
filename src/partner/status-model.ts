import { t } from "elysia";
import { Envelope } from "../http/envelope";
import { intQuery } from "../http/params";
import { named } from "../http/openapi/names";

const ms = t.Union([t.Number(), t.Null()], { description: "milliseconds, 3 decimals; null without samples" });
const Percentiles = { p50_ms: ms, p95_ms: ms, p99_ms: ms };
const Window = t.Object({
  hours: t.Integer(),
  start_utc: t.String({ description: "the start of the UTC hour that held `end_utc` minus `hours` (the figures count whole hours), inclusive" }),
  end_utc: t.String({ description: "inclusive (now)" }),
});

export const MAX_USAGE_HOURS = 720;

export const PartnerStatusModel = {
  status: named(
    "PartnerStatus",
    Envelope({
      overall_status: t.Union([t.Literal("ok"), t.Literal("degraded")], {
        description: "degraded: a webhook delivery of yours was dead-lettered in the last hour",
      }),
      status_reasons: t.Array(t.String()),
      key_id: t.String(),
      key_mode: t.Union([t.Literal("sandbox"), t.Literal("live")]),
      window: Window,
      endpoint_percentiles_available: t.Boolean(),
      endpoint_percentiles_ms: t.Object(Percentiles, {
        description: "This key's requests of the window (this hour and the one before), read from latency histograms: within 9.05 % of the nearest-rank value",
      }),
      request_metrics: t.Object({ total_requests: t.Integer(), error_requests: t.Integer({ description: "status ≥ 400" }) }),
      webhook_delivery_health: t.Object({
        dead_letter_events: t.Integer({ description: "your deliveries in the dead-letter queue now" }),
        failed_events: t.Integer({ description: "your deliveries that failed and wait for a retry now" }),
        pending_events: t.Integer({ description: "your deliveries queued or being sent now" }),
        delivered_events: t.Integer({ description: "your deliveries that succeeded in the window (since start_utc)" }),
      }),
      delivery_slo_controls: t.Object({
        max_attempts: t.Integer(),
        timeout_seconds: t.Number(),
        retry_base_seconds: t.Number(),
        retry_max_seconds: t.Number(),
        retry_jitter_pct: t.Number(),
      }),
    }),
  ),
  usageQuery: t.Object({
    hours: intQuery({ minimum: 1, maximum: MAX_USAGE_HOURS, defaultValue: 24 }),
    include_meta: t.Optional(t.String()),
  }),
  usage: named(
    "UsageAnalytics",
    Envelope({
      key_id: t.String(),
      window: Window,
      request_metrics: t.Object({
        total_requests: t.Integer(),
        success_requests: t.Integer({ description: "status < 400" }),
        error_requests: t.Integer({ description: "status ≥ 400" }),
        rate_limited_requests: t.Integer({ description: "status 429" }),
        endpoint_breakdown: t.Array(
          t.Object({ path: t.String({ description: "route template" }), requests: t.Integer(), errors: t.Integer(), error_rate_pct: t.Number() }),
        ),
      }),
      latency_metrics_ms: t.Object({
        available: t.Boolean(),
        method: t.Literal("histogram", { description: "read from hourly latency histograms with 4 buckets per doubling" }),
        relative_error_pct: t.Number({ description: "the largest relative error of a percentile against the nearest-rank value of the raw samples (9.05)" }),
        overall: t.Object({ samples: t.Integer(), ...Percentiles }),
        endpoint_breakdown: t.Array(t.Object({ path: t.String(), samples: t.Integer(), ...Percentiles })),
      }),
    }),
  ),
};
