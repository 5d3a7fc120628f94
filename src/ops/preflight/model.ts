import { t } from "elysia";
import { includeMetaQuery, MetaSchema } from "../../http/envelope";
import { named } from "../../http/openapi/names";
import { intQuery } from "../../http/params";
import { GuardSchema, PREFLIGHT_PRESETS, PREFLIGHT_SECTIONS, type PreflightPreset } from "./guards";

const PRESETS = Object.keys(PREFLIGHT_PRESETS) as PreflightPreset[];

const flag = t.Optional(t.Union([t.Literal("0"), t.Literal("1")]));
const nullableString = t.Union([t.String(), t.Null()]);
const filters = {
  section: t.Optional(
    t.Union(
      (["all", ...PREFLIGHT_SECTIONS] as const).map((s) => t.Literal(s)),
      { description: "all (default), responder, synthetic, digest, token or artifact" },
    ),
  ),
  fields: t.Optional(t.String({ maxLength: 2000, description: "comma list of guard field names; unknown names are 400 invalid_query" })),
  fields_preset: t.Optional(
    t.Union(
      PRESETS.map((p) => t.Literal(p)),
      { description: "a named field list, united with fields" },
    ),
  ),
  ...includeMetaQuery,
};
const dayOffset = intQuery({ minimum: 1, maximum: 30, defaultValue: 1, description: "compare against the snapshot of this many days ago" });

const Guard = named("PreflightGuard", GuardSchema);
const DeltaChange = named(
  "PreflightDeltaChange",
  t.Object({
    section: t.String(),
    field: t.String(),
    change: t.Union([t.Literal("added"), t.Literal("removed"), t.Literal("changed")]),
    before: nullableString,
    after: nullableString,
    before_fingerprint: nullableString,
    after_fingerprint: nullableString,
  }),
);
const counts = t.Object({ added: t.Integer(), removed: t.Integer(), changed: t.Integer(), unchanged: t.Integer() });
const deltaBase = {
  current_day: t.String(),
  compare_day: t.String(),
  day_offset: t.Integer(),
  compare_available: t.Boolean(),
  section: t.String(),
  fields: t.Union([t.Array(t.String()), t.Null()]),
  counts,
};
export const clampEcho = t.Object({ requested: nullableString, value: t.Integer(), clamped: t.Boolean() });
const Evaluation = named(
  "PreflightAnomaly",
  t.Object({
    day: t.String(),
    series: t.String(),
    count: t.Integer(),
    baseline_points: t.Integer(),
    baseline_mean: t.Union([t.Number(), t.Null()]),
    baseline_sd: t.Union([t.Number(), t.Null()]),
    z: t.Union([t.Number(), t.Null()]),
    status: t.String(),
  }),
);

export const PreflightModel = {
  guardsQuery: t.Object({ include_env_rows: flag, ...includeMetaQuery }),
  deltaQuery: t.Object({ day_offset: dayOffset, ...filters }),
  summaryQuery: t.Object({
    day_offset: dayOffset,
    ...filters,
    include_compare_timestamps: flag,
    include_fields: flag,
    // The integers the handler uses: the route's transform (normalizeSummaryQuery) clamps what was sent before validation.
    include_fields_max: intQuery({
      minimum: 10,
      maximum: 500,
      defaultValue: 200,
      description: "changes listed at most; an integer outside is clamped (clamped=true), a non-integer falls back to 200 (clamped=false)",
    }),
    include_fields_bytes_limit: intQuery({
      minimum: 0,
      maximum: 250000,
      defaultValue: 0,
      description: "byte bound of the changes list's JSON; 0 = none; a larger integer is clamped to 250000",
    }),
  }),
  historyQuery: t.Object({ days: intQuery({ minimum: 1, maximum: 90, defaultValue: 30, description: "UTC days, today included" }), ...filters }),
  anomaliesQuery: t.Object({
    days: intQuery({ minimum: 1, maximum: 90, defaultValue: 30, description: "evaluated UTC days, today included" }),
    baseline_days: intQuery({ minimum: 1, maximum: 30, defaultValue: 7, description: "days before each evaluated day that form its baseline" }),
    min_baseline_points: intQuery({ minimum: 1, maximum: 30, defaultValue: 3, description: "baseline points needed to evaluate a day" }),
    zscore_threshold: t.Optional(t.Number({ minimum: 0, maximum: 100, description: "number 0–100, default 2.0" })),
    min_change_count: intQuery({ minimum: 1, maximum: 1000, defaultValue: 2, description: "fewest changes an anomalous day has" }),
    ...filters,
  }),
  guards: named(
    "PreflightGuards",
    t.Object({ success: t.Literal(true), generated_at: t.String(), day: t.String(), count: t.Integer(), guards: t.Array(Guard), meta: t.Optional(MetaSchema) }),
  ),
  delta: named(
    "PreflightDelta",
    t.Object({
      success: t.Literal(true),
      ...deltaBase,
      compare_taken_at: nullableString,
      current_at: t.String(),
      changes: t.Array(DeltaChange),
      meta: t.Optional(MetaSchema),
    }),
  ),
  summary: named(
    "PreflightDeltaSummary",
    t.Object({
      success: t.Literal(true),
      ...deltaBase,
      timestamps: t.Optional(t.Object({ compare_taken_at: nullableString, current_at: t.String() })),
      include_fields_max: clampEcho,
      include_fields_bytes_limit: clampEcho,
      // The same entries as PreflightDelta's changes; spread, as this schema is documentation only (never compiled).
      changes: t.Optional(t.Array(t.Object({ ...DeltaChange.properties }))),
      changes_total: t.Optional(t.Integer()),
      changes_returned: t.Optional(t.Integer()),
      changes_truncated: t.Optional(t.Boolean()),
      truncated_by: t.Optional(t.Union([t.Literal("max"), t.Literal("bytes"), t.Null()])),
      meta: t.Optional(MetaSchema),
    }),
  ),
  history: named(
    "PreflightHistory",
    t.Object({
      success: t.Literal(true),
      from: t.String(),
      to: t.String(),
      days: t.Integer(),
      count: t.Integer(),
      rows: t.Array(
        t.Object({
          day: t.String(),
          section: t.String(),
          field: t.String(),
          value: t.String(),
          fingerprint: t.String(),
          changed: t.Union([t.Boolean(), t.Null()]),
        }),
      ),
      meta: t.Optional(MetaSchema),
    }),
  ),
  anomalies: named(
    "PreflightAnomalies",
    t.Object({
      success: t.Literal(true),
      from: t.String(),
      to: t.String(),
      params: t.Object({
        days: t.Integer(),
        baseline_days: t.Integer(),
        min_baseline_points: t.Integer(),
        zscore_threshold: t.Number(),
        min_change_count: t.Integer(),
      }),
      series: t.Array(t.String()),
      evaluated: t.Integer(),
      count: t.Integer(),
      anomalies: t.Array(Evaluation),
      meta: t.Optional(MetaSchema),
    }),
  ),
};
