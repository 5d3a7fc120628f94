import { t } from "elysia";
import { Envelope } from "../../http/envelope";
import { named } from "../../http/openapi/names";
import { MAX_OFFSET_PARSED, OffsetListAnswer } from "../../http/pagination";
import { intQuery } from "../../http/params";
import { Incident } from "../../status/model";
import { DRAFT_LIMITS, TimelineEntrySchema } from "./draft";
import { EXPORT_COLUMNS, LIST_LIMITS } from "./export";
import { nullable as N } from "../../http/routes/declare";

// Request and response schemas of /admin/ops/incidents* (docs/ops-incidents.md).

const lit = <const V extends readonly [string, ...string[]]>(values: V, description: string) => t.UnionEnum(values, { description });
/**
 * Query enums as a union of literals: Elysia fills an absent query parameter typed t.UnionEnum with its first
 * value, which would turn "not asked for" into "asked for" (the same as src/transparency/reports/audit-model.ts).
 */
const litQ = <const V extends readonly [string, ...string[]]>(values: V, description: string) =>
  t.Optional(
    t.Union(
      values.map((v) => t.Literal(v)),
      { description },
    ) as unknown as ReturnType<typeof lit<V>>,
  );
const Instant = (description: string) =>
  t.Optional(t.String({ maxLength: 40, description: `${description}; ISO 8601 instant with a zone, e.g. 2026-02-01T10:00:00Z` }));
const Severity = t.Union([t.Literal("warn"), t.Literal("bad")]);
const L = DRAFT_LIMITS;
/** A draft parameter bounded by its DRAFT_LIMITS entry (minimum 1 unless it says otherwise). */
const limited = (l: { fallback: number; max: number; min?: number }, description: string) =>
  intQuery({ minimum: l.min ?? 1, maximum: l.max, defaultValue: l.fallback, description });

export const draftQuery = t.Object({
  hours: limited(L.hours, "window: the last N hours (since/until override it)"),
  limit: limited(L.limit, "status incidents of the window listed (index picks among them)"),
  source: litQ(["all", "status", "errors", "jobs"], "what the draft reads: all (default), status incidents only, request_log errors only, job failures only"),
  severity: litQ(["all", "warn", "bad"], "incidents of this peak severity only: warn = degraded service, bad = outage; default all"),
  since: Instant("window start (overrides hours)"),
  until: Instant("window end, after since (default now); the span is at most 720 hours"),
  index: intQuery({ minimum: 0, maximum: L.index.max, defaultValue: 0, description: "which listed incident the draft is about, 0 = the newest start" }),
  context: litQ(["none", "brief", "full"], "timeline around the incident: none, brief (its span ±15 min; default), full (the whole window)"),
  template: litQ(["v1", "minimal"], "v1 (every section; default) or minimal (summary, impact, timeline, what we are doing)"),
  preflight_day_offset: limited(
    L.preflightDayOffset,
    "day of the preflight results to compare (the section says not available until the preflight guards land)",
  ),
  top_errors_hours: limited(L.topErrorsHours, "hours of request_log before the incident's end"),
  top_errors_limit: limited(L.topErrorsLimit, "request_log rows read at most (the newest)"),
  top_errors_top_n: limited(L.topErrorsTopN, "error codes and routes listed"),
  include_meta: t.Optional(t.String()),
});

const Range = t.Object({ since: t.String(), until: t.String() });
const ErrorRow = t.Object({ at: t.String(), method: t.String(), route: t.String(), status: t.Integer(), error_code: N(t.String()), request_id: t.String() });
const TopErrors = named(
  "IncidentTopErrors",
  t.Object({
    window: t.Object({ since: t.String(), until: t.String(), hours: t.Number() }),
    rows_read: t.Integer(),
    rows_limit: t.Integer(),
    truncated: t.Boolean({ description: "the range held more rows than rows_limit; only the newest were read" }),
    error_requests: t.Integer({ description: "requests answered 4xx or 5xx among the rows read" }),
    server_errors: t.Integer(),
    codes: t.Array(t.Object({ error_code: t.String(), status: t.Integer(), count: t.Integer(), share: t.Number({ description: "of error_requests, 0–1" }) })),
    routes: t.Array(t.Object({ method: t.String(), route: t.String(), count: t.Integer(), server_errors: t.Integer(), share: t.Number() })),
    first_error: N(ErrorRow),
    last_error: N(ErrorRow),
  }),
);
const JobFailure = named(
  "IncidentJobFailure",
  t.Object({ job: t.String(), run_id: t.Integer(), started_at: t.String(), finished_at: N(t.String()), error: N(t.String()), trigger: t.String() }),
);
const TimelineEntry = named("IncidentTimelineEntry", TimelineEntrySchema);
const IncidentBrief = t.Object({
  id: t.Integer(),
  source: t.Union([t.Literal("automatic"), t.Literal("operator")]),
  title: t.String(),
  severity: Severity,
  status: t.Union([t.Literal("open"), t.Literal("resolved")]),
  started_at: t.String(),
  ended_at: N(t.String()),
});
const SectionId = lit(["summary", "impact", "timeline", "incidents", "top_errors", "job_failures", "preflight", "next_steps"], "a section of the draft");

export const draft = Envelope({
  template: t.Union([t.Literal("v1"), t.Literal("minimal")]),
  generated_at: t.String(),
  query: t.Object({
    hours: t.Integer(),
    limit: t.Integer(),
    source: t.String(),
    severity: t.String(),
    since: N(t.String()),
    until: N(t.String()),
    index: t.Integer(),
    context: t.String(),
    template: t.String(),
    preflight_day_offset: t.Integer(),
    top_errors_hours: t.Integer(),
    top_errors_limit: t.Integer(),
    top_errors_top_n: t.Integer(),
  }),
  window: t.Object({ since: t.String(), until: t.String(), hours: t.Number(), basis: t.Union([t.Literal("hours"), t.Literal("since_until")]) }),
  incidents_total: t.Integer({ description: "status incidents matching in the window (incidents lists at most limit)" }),
  incidents: t.Array(IncidentBrief),
  incident: N(Incident),
  title: t.String(),
  summary: t.String(),
  impact: t.Object({
    severity: N(Severity),
    severity_label: t.String(),
    status: N(t.String()),
    state: N(t.String()),
    components: t.Array(t.String()),
    checks: t.Array(t.String()),
    started_at: N(t.String()),
    ended_at: N(t.String()),
    duration_minutes: N(t.Number()),
  }),
  timeline: t.Array(TimelineEntry),
  timeline_truncated: t.Boolean(),
  top_errors: N(TopErrors),
  job_failures: N(t.Array(JobFailure)),
  preflight: N(
    t.Object({
      available: t.Boolean({ description: "false when no preflight snapshot exists for compare_day" }),
      day_offset: t.Integer(),
      compare_day: t.String({ description: "the UTC day whose snapshot today's guards are compared with" }),
      counts: t.Object({ added: t.Integer(), removed: t.Integer(), changed: t.Integer(), unchanged: t.Integer() }),
      changes: t.Array(
        t.Object({
          section: t.String(),
          field: t.String(),
          change: t.Union([t.Literal("added"), t.Literal("removed"), t.Literal("changed")]),
          before: N(t.String()),
          after: N(t.String()),
        }),
        { description: "the first 20 differing guard fields (secrets only as set/unset); all of them: GET /admin/ops/preflight-guards/delta.json" },
      ),
      changes_truncated: t.Boolean(),
      note: t.String(),
    }),
  ),
  next_steps: t.Object({ placeholder: t.Literal(true), text: t.String({ description: "for the operator to replace before publishing" }) }),
  sections: t.Array(SectionId, { description: "the sections the Markdown and text forms print, in order" }),
  omitted: t.Record(t.String(), t.String(), { description: "sections left out, each with why" }),
});

const listFilters = {
  status: litQ(["open", "resolved"], "open or resolved incidents only"),
  severity: litQ(["warn", "bad"], "peak severity: warn = degraded service, bad = outage"),
  since: Instant("incidents still open at or after this instant"),
  include_meta: t.Optional(t.String()),
};
const offset = intQuery({ minimum: 0, maximum: MAX_OFFSET_PARSED, defaultValue: 0, description: "rows to skip" });
const echoed = { status: N(t.String()), severity: N(t.String()), since: N(t.String()) };

export const listQuery = t.Object({
  limit: intQuery({ minimum: 1, maximum: LIST_LIMITS.limit.max, defaultValue: LIST_LIMITS.limit.fallback, description: "incidents per page" }),
  offset,
  ...listFilters,
});
export const list = Envelope(
  OffsetListAnswer("incidents", t.Array(Incident, { description: "newest start first, each with its updates" }), echoed, { total: t.Integer() }),
);

export const exportQuery = t.Object({
  limit: intQuery({ minimum: 1, maximum: LIST_LIMITS.exportLimit.max, defaultValue: LIST_LIMITS.exportLimit.fallback, description: "rows exported" }),
  offset,
  ...listFilters,
});
const Cell = t.Union([t.String(), t.Number(), t.Null()]);
export const exportJson = Envelope(
  OffsetListAnswer("rows", t.Array(t.Record(t.String(), Cell), { description: "one per incident, the CSV's rows typed (null = empty cell)" }), echoed, {
    total: t.Integer(),
    columns: t.Array(t.String(), { description: `the CSV header: ${EXPORT_COLUMNS.join(", ")}` }),
  }),
);

export const detailQuery = t.Object({
  id: intQuery({ minimum: 1, maximum: Number.MAX_SAFE_INTEGER, description: "incident id" }),
  index: intQuery({ minimum: 0, maximum: LIST_LIMITS.index.max, defaultValue: 0, description: "or: 0 = the newest incident, 1 the one before …" }),
  include_meta: t.Optional(t.String()),
});
export const detail = Envelope({
  incident: Incident,
  window: Range,
  timeline: t.Array(TimelineEntry),
  related: t.Object({ errors: TopErrors, job_failures: t.Array(JobFailure) }),
});
