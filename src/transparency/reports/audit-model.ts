import { t, type TSchema } from "elysia";
import { MetaSchema, Envelope } from "../../http/envelope";
import { named } from "../../http/openapi/names";
import { LatestListAnswer, ListAnswer, OffsetListAnswer } from "../../http/pagination";
import { ANOMALY_TYPES, SEVERITIES, WALLET_ROLES } from "../audit/glossary";
import { THRESHOLD_NAMES } from "../operator-inputs/thresholds";
import { TRIAGE_STATUSES } from "../tables";
import { nullable as N } from "../../http/routes/declare";

// Request and response schemas of the audit-anomaly routes. The response schemas are also the schema
// registry (schema-registry.json): one source for validation, the OpenAPI document and the published schemas.

const lit = <const V extends readonly [string, ...string[]]>(values: V, description?: string) => t.UnionEnum(values, description ? { description } : {});
const Level = lit(["ok", "warn", "bad"]);
const Decimal = (description: string) => t.String({ pattern: "^-?\\d+(\\.\\d+)?$", description });

export const AnomalyTypeSchema = lit(ANOMALY_TYPES);
export const SeveritySchema = lit(SEVERITIES);
export const TriageStatusSchema = lit(TRIAGE_STATUSES);

const Counts = (keys: readonly string[]) => t.Object(Object.fromEntries(keys.map((k) => [k, t.Integer({ minimum: 0 })])));
const ThresholdsSchema = named("AuditThresholds", t.Object(Object.fromEntries(THRESHOLD_NAMES.map((n) => [n, t.String()]))));
const isPct = (n: string) => n.endsWith("_pct");
/** A run's own thresholds (thresholdsView): percentages as numbers, amounts as decimal strings. */
const RunThresholdsSchema = named(
  "AuditRunThresholds",
  t.Object(
    Object.fromEntries(THRESHOLD_NAMES.map((n) => [n, isPct(n) ? t.Number({ description: "percent" }) : t.String({ description: "decimal token amount" })])),
    { description: "the thresholds in force when the run started; alerts.json judges the run under these" },
  ),
);

export const AuditRunSchema = named(
  "AuditRun",
  t.Object({
    run: t.Integer({ minimum: 1 }),
    label: t.String({ description: "UTC date-time the run started, to the second" }),
    is_complete: t.Boolean(),
    is_selected: t.Boolean(),
    overall: N(Level),
    rows_total: t.Integer({ minimum: 0 }),
    signatures_with_anomalies: t.Integer({ minimum: 0 }),
    max_abs_delta: Decimal("largest |delta| of the run's anomalies, decimal token amount"),
    severity_counts: t.Record(t.String(), t.Integer({ minimum: 0 })),
    type_counts: t.Record(t.String(), t.Integer({ minimum: 0 })),
    thresholds: RunThresholdsSchema,
    job_run_id: N(t.Integer()),
    started_at: t.String(),
    finished_at: N(t.String()),
    error: N(t.String()),
  }),
);

const Selected = { selector: t.String(), selected_run: N(t.Integer()), selected_label: N(t.String()) };

export const TopAnomalySchema = named(
  "AuditTopAnomaly",
  t.Object({
    severity: SeveritySchema,
    signature: t.String(),
    kind: t.String(),
    anomaly_types: t.Array(AnomalyTypeSchema),
    max_abs_delta: Decimal("|delta|, decimal token amount"),
    delta: Decimal("signed change of the tracked wallets (or unexplained difference), decimal token amount"),
    triage_status: N(TriageStatusSchema),
  }),
);

const FiltersEcho = t.Object({
  severity: N(t.Array(SeveritySchema)),
  types: N(t.Array(AnomalyTypeSchema)),
  signature: N(t.String()),
  min_abs_delta: N(t.String()),
});
const CompareRow = t.Object({ type: t.String(), selected: t.Integer(), latest: t.Integer(), delta: t.Integer() });
/** current and baseline of alerts.json: a run's aggregates and their change since the complete run before it. */
export const AlertSide = t.Object({
  run_id: t.Integer(),
  label: t.String(),
  overall: N(Level),
  signatures_with_anomalies: t.Integer(),
  rows_total: t.Integer(),
  sig_delta: N(t.Integer()),
  sig_delta_pct: N(t.Number()),
  rows_delta: N(t.Integer()),
  rows_delta_pct: N(t.Number()),
});

const CompareSide = t.Object({ selector: t.String(), resolved_run: N(t.Integer()), label: N(t.String()), is_complete: N(t.Boolean()) });

export const ExportRowSchema = named(
  "AuditExportRow",
  t.Object({
    run_id: t.Integer(),
    signature: t.String(),
    kind: lit(["transaction", "token_snapshot", "mint_authority_snapshot", "sync_run"]),
    slot: N(t.Integer()),
    block_time: N(t.String()),
    delta: Decimal("signed, decimal token amount"),
    max_abs_delta: Decimal("|delta|, decimal token amount"),
    anomaly_types: t.Array(AnomalyTypeSchema),
    severity: N(SeveritySchema),
    declaration_id: N(t.Integer()),
    triage_status: N(TriageStatusSchema),
    detail: N(t.Record(t.String(), t.Any())),
  }),
);

export const DeclarationSchema = named(
  "DeclaredMovement",
  t.Object({
    id: t.Integer(),
    direction: lit(["outflow", "inflow"]),
    amount: Decimal("decimal token amount"),
    amount_raw: t.String(),
    counterparty: N(t.String()),
    signature: N(t.String()),
    window_start_utc: t.String(),
    window_end_utc: t.String(),
    max_transactions: t.Integer(),
    matched_transactions: t.Integer(),
    reason: t.String(),
    created_at: t.String(),
    created_by: t.String(),
    status: lit(["active", "retracted"]),
    retracted_at: N(t.String()),
    retracted_by: N(t.String()),
    retract_reason: N(t.String()),
  }),
);

export const TriageRowSchema = named(
  "AuditTriage",
  t.Object({
    signature: t.String(),
    status: TriageStatusSchema,
    owner: t.String(),
    eta_utc: N(t.String()),
    note: N(t.String()),
    updated_at: t.String(),
    updated_by: t.String(),
  }),
);

const Links = t.Record(t.String(), t.String());
/** Every JSON answer but export.json: the envelope, generated_at_utc first. */
const Answer = <P extends Record<string, TSchema>>(fields: P) => Envelope({ generated_at_utc: t.String(), ...fields });

/** The 200 bodies of the JSON routes, keyed by their file name under /transparency/audit-anomalies/. */
export const AuditResponses = {
  "summary.json": named(
    "AuditSummary",
    Answer({
      ...Selected,
      summary_available: t.Boolean(),
      include_top_anomalies: t.Boolean(),
      top_limit: t.Integer(),
      run: N(AuditRunSchema),
      top_anomalies: t.Array(TopAnomalySchema),
      links: Links,
    }),
  ),
  "runs.json": named(
    "AuditRuns",
    Answer({
      ...Selected,
      total_runs: t.Integer(),
      ...ListAnswer("runs", t.Array(AuditRunSchema)),
    }),
  ),
  "trend.json": named(
    "AuditTrend",
    Answer({
      ...Selected,
      selected_metric: lit(["rows", "sigs"]),
      limit: t.Integer(),
      include_status_counts: t.Boolean(),
      filters: FiltersEcho,
      ...LatestListAnswer(
        "points",
        t.Array(
          t.Object({
            run_id: t.Integer(),
            label: t.String(),
            overall: N(Level),
            rows_total: t.Integer(),
            metric: lit(["rows", "sigs"]),
            metric_value: t.Integer(),
            metric_delta: N(t.Integer()),
            metric_delta_pct: N(t.Number()),
          }),
        ),
        { metric: lit(["rows", "sigs"]), include_status_counts: t.Boolean() },
        { status_counts: N(Counts(["ok", "warn", "bad", "other"])) },
      ),
    }),
  ),
  "alerts.json": named(
    "AuditAlerts",
    Answer({
      selector: t.String(),
      selected_run: N(t.Integer()),
      evaluated_at: N(t.String()),
      snapshot: t.Object({
        alert_level: Level,
        should_alert: t.Boolean(),
        reasons: t.Array(t.String()),
        thresholds: t.Object({ sigs_increase_threshold_pct: t.Number(), rows_increase_threshold_pct: t.Number() }),
        thresholds_source: t.Object({ sigs_increase_threshold_pct: lit(["query", "stored"]), rows_increase_threshold_pct: lit(["query", "stored"]) }),
        points_available: t.Integer(),
        current: N(AlertSide),
        baseline: N(AlertSide),
      }),
      include_recommendations: t.Boolean(),
      recommendations: t.Array(t.String()),
    }),
  ),
  "diff/compare.json": named(
    "AuditCompare",
    Answer({
      run_a: CompareSide,
      run_b: CompareSide,
      total_delta: t.Integer(),
      include_rows: t.Boolean(),
      row_limit: t.Integer(),
      rows_available: t.Integer(),
      rows: t.Array(CompareRow),
    }),
  ),
  "diff/export.json": named(
    "AuditDiffExport",
    Answer({
      selector: t.String(),
      run: CompareSide,
      baseline_run: CompareSide,
      run_a: t.Object(CompareSide.properties, { description: "baseline_run, named as compare.json names its earlier run" }),
      run_b: t.Object(CompareSide.properties, { description: "run, named as compare.json names its later run" }),
      total_delta: t.Integer(),
      total_pct_delta: N(t.Number()),
      include_rows: t.Boolean(),
      row_limit: t.Integer(),
      rows_available: t.Integer(),
      rows: t.Array(t.Object({ type: t.String(), selected: t.Integer(), latest: t.Integer(), delta: t.Integer(), pct_delta: N(t.Number()) })),
    }),
  ),
  "export.json": named(
    "AuditExport",
    t.Object({
      success: t.Literal(true),
      generated_at_utc: t.String(),
      query: t.Object({ run: N(t.String()), from: N(t.String()), to: N(t.String()), ...FiltersEcho.properties }),
      runs: t.Array(t.Integer()),
      rows: t.Array(ExportRowSchema),
      count: t.Integer(),
      meta: t.Optional(MetaSchema),
    }),
  ),
  "schema-registry.json": named(
    "TransparencySchemaRegistry",
    Answer({
      registry_version: t.String({ description: "changes when a schema does" }),
      dialect: t.String({ description: "the JSON Schema dialect of every schema: draft 2020-12" }),
      count: t.Integer(),
      schemas: t.Array(
        t.Object({
          path: t.String({ description: "the answer's path (or a description such as every error answer)" }),
          media_type: t.String(),
          columns: t.Union([t.Array(t.String()), t.Null()], { description: "a CSV answer's header, in order; null for JSON" }),
          schema: t.Record(t.String(), t.Unknown(), { description: "the JSON Schema the answer validates against" }),
          sha256: t.String({ description: "of the schema as JSON" }),
        }),
      ),
      row_schema: t.Record(t.String(), t.Unknown(), { description: "one audit row as the exports carry it" }),
    }),
  ),
  "glossary.json": named(
    "AuditGlossary",
    Answer({
      count: t.Integer(),
      glossary: t.Array(
        t.Object({
          type: AnomalyTypeSchema,
          description: t.String(),
          rule: t.String(),
          base_severity: SeveritySchema,
          delta: t.String(),
          applies_to: t.Array(t.Union(WALLET_ROLES.map((r) => t.Literal(r)))),
        }),
      ),
      transaction_delta_rule: t.String(),
      severities: t.Array(SeveritySchema),
      severity_rule: t.String(),
      overall_rule: t.String(),
      tracked_wallets: t.Object({ treasury: t.Array(t.String()), reserve: t.Array(t.String()), lp: t.Array(t.String()), mint: N(t.String()) }),
    }),
  ),
  "threshold-history.json": named(
    "AuditThresholdHistory",
    Answer({
      limit: t.Integer(),
      total: t.Integer(),
      ...LatestListAnswer(
        "rows",
        t.Array(
          t.Object({ changed_at: t.String(), parameter: t.String(), previous_value: t.String(), new_value: t.String(), owner: t.String(), reason: t.String() }),
        ),
        {},
        { current: ThresholdsSchema },
      ),
    }),
  ),
  "triage.json": named(
    "AuditTriageList",
    Answer({
      status: N(TriageStatusSchema),
      counts: Counts(TRIAGE_STATUSES),
      ...OffsetListAnswer("rows", t.Array(TriageRowSchema), {
        cursor: t.Null({ description: "always null: triage pages by offset" }),
        status: N(TriageStatusSchema),
      }),
    }),
  ),
  "declared-movements.json": named(
    "DeclaredMovements",
    Answer({
      count: t.Integer(),
      movements: t.Array(DeclarationSchema),
    }),
  ),
};
