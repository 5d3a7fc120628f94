import { t } from "elysia";
import { Envelope } from "../../http/envelope";
import { named } from "../../http/openapi/names";
import { OffsetQueryEcho, PaginationSchema } from "../../http/pagination";
import { intQuery } from "../../http/params";
import { USAGE_CHART_BOUNDS } from "../export-usage/chart";

// Request and response schemas of the alerts monitor and export usage routes (docs/ops-alerts.md).

export const ALERTS_DEFAULTS = { days: 7, limit: 50, offset: 0 } as const;
export const USAGE_DEFAULTS = { days: 7 } as const;

const days = intQuery({ minimum: 1, maximum: 90, defaultValue: ALERTS_DEFAULTS.days, description: "window: this many days back from now" });
const alertFilters = {
  days,
  source: t.Optional(
    t.Union([t.Literal("all"), t.Literal("status"), t.Literal("transparency"), t.Literal("webhooks"), t.Literal("digest"), t.Literal("preflight")], {
      description: "only the alerts of this source; default all",
    }),
  ),
  status: t.Optional(
    t.Union([t.Literal("all"), t.Literal("ok"), t.Literal("warn"), t.Literal("fail")], { description: "only alerts with this status; default all" }),
  ),
  include_meta: t.Optional(t.String()),
};
const usageFilters = {
  days: intQuery({ minimum: 1, maximum: 90, defaultValue: USAGE_DEFAULTS.days, description: "window: today and the days − 1 UTC days before it" }),
  source: t.Optional(
    t.Union([t.Literal("all"), t.Literal("export"), t.Literal("token")], {
      description: "export = direct downloads, token = link-inbox download tokens; default all",
    }),
  ),
  include_meta: t.Optional(t.String()),
};
const B = USAGE_CHART_BOUNDS;

export const AlertRow = named(
  "OpsAlertRow",
  t.Object({
    id: t.Integer(),
    run_id: t.String(),
    at: t.String({ format: "date-time" }),
    source: t.String(),
    name: t.String(),
    status: t.Union([t.Literal("ok"), t.Literal("warn"), t.Literal("fail")]),
    value: t.Union([t.String(), t.Null()]),
    details: t.Union([t.Record(t.String(), t.Unknown()), t.Null()]),
  }),
);
export const OpsAlertRunSummary = named(
  "OpsAlertRunSummary",
  t.Object({
    run_id: t.String(),
    at: t.String({ format: "date-time" }),
    source: t.String({ description: 'every source of the run\'s rows, joined by "+" (status+transparency+webhooks)' }),
    alerts: t.Integer(),
    ok: t.Integer(),
    warn: t.Integer(),
    fail: t.Integer(),
    status: t.Union([t.Literal("ok"), t.Literal("warn"), t.Literal("fail")]),
  }),
);
const Window = t.Object({ from: t.String({ format: "date-time" }), to: t.String({ format: "date-time" }), days: t.Integer() });
const UsageRow = named(
  "OpsExportUsageRow",
  t.Object({
    day: t.String(),
    export: t.String(),
    downloads: t.Integer(),
    bytes: t.Integer(),
    actors: t.Integer(),
    operators: t.Array(t.String(), { description: "Who: the admin actor labels that downloaded it that day, sorted" }),
  }),
);
const UsageDay = named(
  "OpsExportUsageDay",
  t.Object({ day: t.String(), downloads: t.Integer(), export_downloads: t.Integer(), token_downloads: t.Integer(), bytes: t.Integer() }),
);

export const AlertsModel = {
  exportQuery: t.Object({
    ...alertFilters,
    limit: intQuery({ minimum: 1, maximum: 200, defaultValue: ALERTS_DEFAULTS.limit, description: "alert rows per page" }),
    offset: intQuery({ minimum: 0, maximum: 1_000_000, defaultValue: 0, description: "rows to skip" }),
  }),
  windowQuery: t.Object(alertFilters),
  usageQuery: t.Object(usageFilters),
  chartQuery: t.Object({
    ...usageFilters,
    w: intQuery({ minimum: B.w.minimum, maximum: B.w.maximum, defaultValue: B.w.default, description: "image width in pixels" }),
    h: intQuery({ minimum: B.h.minimum, maximum: B.h.maximum, defaultValue: B.h.default, description: "image height in pixels" }),
  }),
  exportJson: Envelope(
    {
      generated_at: t.String({ format: "date-time" }),
      window: Window,
      query: OffsetQueryEcho({ days: t.Integer(), source: t.String(), status: t.String() }),
      count: t.Integer(),
      total: t.Integer(),
      alerts: t.Array(AlertRow),
      runs: t.Array(OpsAlertRunSummary),
      pagination: PaginationSchema,
    },
    "Alert rows of the window, newest first, and the runs they belong to",
  ),
  usageJson: Envelope(
    {
      generated_at: t.String({ format: "date-time" }),
      window: Window,
      query: t.Object({ days: t.Integer(), source: t.String() }),
      count: t.Integer(),
      rows: t.Array(UsageRow),
      series: t.Array(UsageDay),
      totals: t.Object({ downloads: t.Integer(), bytes: t.Integer(), actors: t.Integer(), exports: t.Integer() }),
    },
    "Export downloads per UTC day and export",
  ),
};
