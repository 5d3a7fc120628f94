import { t } from "elysia";
import { intQuery } from "../../http/params";
import { OffsetPageQuery, PageQuery } from "../../http/pagination";
import { ANOMALY_TYPES, SEVERITIES } from "../audit/glossary";
import { TRIAGE_STATUSES } from "../operator-inputs/triage";

// Query schemas of the audit-anomaly routes (the responses are in audit-model.ts).

/**
 * An enum of query values as a union of literals: Elysia fills an absent query parameter typed
 * t.UnionEnum with its first value, which would turn "not asked for" into "asked for".
 */
const litQ = <const V extends readonly [string, ...string[]]>(values: V, description?: string) =>
  t.Union(
    values.map((v) => t.Literal(v)),
    description ? { description } : {},
  ) as unknown as ReturnType<typeof t.UnionEnum<V>>;

const Flag = (description: string) => t.Optional(litQ(["1", "true", "0", "false"], description));

const selector = (description: string) =>
  t.Optional(
    t.String({
      minLength: 1,
      maxLength: 32,
      description: `${description}: a run id, latest, previous, or a UTC date YYYY-MM-DD (the last complete run of that day)`,
    }),
  );

const rowFilters = {
  severity: t.Optional(
    t.Array(t.String({ maxLength: 64 }), { maxItems: 20, description: `severities, repeated or comma-separated (any of): ${SEVERITIES.join(", ")}` }),
  ),
  types: t.Optional(
    t.Array(t.String({ maxLength: 256 }), { maxItems: 20, description: `anomaly types, repeated or comma-separated (any of): ${ANOMALY_TYPES.join(", ")}` }),
  ),
  // No control characters: the export routes stream their rows, so a value the database would refuse (U+0000) must
  // be refused here, before the answer's headers go out.
  signature: t.Optional(
    t.String({
      minLength: 1,
      maxLength: 128,
      pattern: "^[^\\x00-\\x1f\\x7f]+$",
      description: "exact signature (or snapshot reference such as token-snapshot:12)",
    }),
  ),
  min_abs_delta: t.Optional(
    t.String({ maxLength: 48, description: "rows whose |delta| is at least this decimal token amount, e.g. 1000 or 0.5 (not negative)" }),
  ),
};

const pct = (name: string) =>
  t.Optional(t.Number({ minimum: 0, maximum: 10_000, description: `${name}: percent, 0 to 10000, at most two decimal places; default the stored threshold` }));

/** alerts.json and alerts.csv: the run and the thresholds it is judged by. */
const alertQuery = {
  run: selector("the run to evaluate, default latest"),
  sigs_increase_threshold_pct: pct("rise in signatures with anomalies that alerts"),
  rows_increase_threshold_pct: pct("rise in rows examined that alerts"),
};

export const AuditQuery = {
  summary: t.Object({
    run: selector("the run to summarise, default latest"),
    include_top_anomalies: Flag("include the top anomalies (default 1)"),
    top_limit: intQuery({ minimum: 1, maximum: 100, defaultValue: 10, description: "top anomalies to include" }),
    include_meta: t.Optional(t.String()),
  }),
  runs: t.Object({ run: selector("the run to mark is_selected, default latest"), ...PageQuery }),
  trend: t.Object({
    run: selector("the last point's run, default latest"),
    metric: t.Optional(litQ(["rows", "sigs"], "rows: rows examined; sigs: signatures with anomalies (default)")),
    include_status_counts: Flag("status_counts over the points (default 1; 0 leaves it null)"),
    ...rowFilters,
    limit: intQuery({ minimum: 1, maximum: 1000, defaultValue: 30, description: "points (runs)" }),
    include_meta: t.Optional(t.String()),
  }),
  alerts: t.Object({ ...alertQuery, include_recommendations: Flag("add recommendations (default 0)"), include_meta: t.Optional(t.String()) }),
  alertsCsv: t.Object({ ...alertQuery, include_meta: t.Optional(t.String({ description: "accepted as on every route; a CSV has no meta" })) }),
  compare: t.Object({
    run_a: selector("the earlier run, default previous"),
    run_b: selector("the later run, default latest"),
    include_rows: Flag("include the per-type rows (default 1)"),
    row_limit: intQuery({ minimum: 1, maximum: 200, defaultValue: 50, description: "rows to include" }),
    include_meta: t.Optional(t.String()),
  }),
  diffExport: t.Object({
    run: selector("the run to diff against the complete run before it, default latest"),
    include_rows: Flag("include the per-type rows (default 1)"),
    row_limit: intQuery({ minimum: 1, maximum: 200, defaultValue: 50, description: "rows to include" }),
    include_meta: t.Optional(t.String()),
  }),
  export: t.Object({
    run: selector("the run to export, default latest; not with from/to"),
    from: t.Optional(t.String({ maxLength: 32, description: "with to: every complete run whose label is at or after this UTC date or date-time" })),
    to: t.Optional(t.String({ maxLength: 32, description: "every complete run whose label is at or before this UTC date (whole day) or date-time" })),
    ...rowFilters,
    include_meta: t.Optional(t.String({ description: "export.json: 1 or true adds meta {request_id, generated_at_utc}; the CSV ignores it" })),
  }),
  thresholdHistory: t.Object({
    limit: intQuery({ minimum: 1, maximum: 500, defaultValue: 100, description: "history rows, newest first" }),
    include_meta: t.Optional(t.String()),
  }),
  // Paged by offset only (no cursor is issued): its offset is not bounded as a cursor list's is.
  triage: t.Object({ status: t.Optional(litQ(TRIAGE_STATUSES, "only this triage status")), ...OffsetPageQuery }),
  plain: t.Object({ include_meta: t.Optional(t.String()) }),
};
