import { t, type TSchema } from "elysia";
import { Envelope, ignoredMetaQuery } from "../http/envelope";
import { LatestListAnswer } from "../http/pagination";
import { FRESHNESS_CHECK_NAMES } from "./checks/chain";
import { PolicyChecksSchema } from "./checks/policy";
import { intPath, intQuery } from "../http/params";
import { named } from "../http/openapi/names";
import { nullable as N } from "../http/routes/declare";

export const Level = t.Union([t.Literal("ok"), t.Literal("warn"), t.Literal("bad")]);
export const Severity = t.Union([t.Literal("warn"), t.Literal("bad")]);
const base = {
  status: Level,
  summary: t.String(),
  configured: t.Boolean({
    description:
      "false: nothing to judge in this deployment (no TOKEN_MINT); shown as not configured and left out of overall unless the policy raised status above ok",
  }),
};
export const Failed = named(
  "FailedCheck",
  t.Object({ ...base, evaluation_error: t.String() }, { description: "A check that could not be evaluated (shown as warn)" }),
);
const check = <P extends Record<string, TSchema>>(fields: P, description: string) => t.Union([t.Object({ ...base, ...fields }, { description }), Failed]);

const JobEntry = t.Object({
  name: t.String(),
  enabled: t.Boolean(),
  quiet_when_idle: t.Boolean(),
  interval_seconds: N(t.Integer()),
  last_run: N(t.Object({ started_at: t.String(), finished_at: N(t.String()), ok: N(t.Boolean()), error: N(t.String()) })),
  ok: N(t.Boolean()),
  stale: t.Boolean(),
});
const RpcHost = t.Object({
  host: t.String(),
  breaker: t.String(),
  calls: t.Integer(),
  failures: t.Integer(),
  error_rate_pct: N(t.Number()),
  last_outcome: N(t.String()),
  last_success_at: N(t.String()),
  level: Level,
});
const FreshnessStatus = t.Union([t.Literal("fresh"), t.Literal("stale"), t.Literal("missing"), t.Literal("not_configured")]);
/**
 * Every check's own fields and what it judges, in display order: each a schema named after it (chain_rpc:
 * ChainRpcCheck); `freshness` is the schema of every freshness proof's check.
 */
const CHECK_SCHEMAS = {
  database: check(
    { writable: t.Boolean(), migrations_applied: t.Integer(), migrations_total: t.Integer(), migrations_current: t.Boolean(), error: N(t.String()) },
    "The database answers and takes the write lock; migrations are current",
  ),
  reliability: check(
    {
      window_days: t.Integer(),
      job_count: t.Integer(),
      runs_considered: t.Integer(),
      avg_success_streak: t.Number(),
      avg_mttr_minutes: N(t.Number()),
      jobs_with_mttr_samples: t.Integer(),
      unresolved_failure_jobs: t.Integer(),
      unresolved_jobs: t.Array(t.String()),
    },
    "Jobs reliability from job_runs over window_days (docs/status.md defines each number)",
  ),
  jobs: check(
    { scheduler_expected: t.Boolean(), failing_count: t.Integer(), stale_count: t.Integer(), jobs: t.Array(JobEntry) },
    "Every scheduled job: its last run, whether it failed, whether it is overdue",
  ),
  chain_rpc: check(
    {
      configured: t.Boolean(),
      note: N(t.String()),
      window_minutes: t.Integer(),
      total_hosts: t.Integer(),
      usable_hosts: t.Integer(),
      degraded_hosts: t.Integer(),
      hosts: t.Array(RpcHost),
    },
    "Solana RPC URLs: breaker state and failure rate over window_minutes",
  ),
  freshness: check(
    {
      proof: t.String(),
      freshness_status: FreshnessStatus,
      age_hours: N(t.Number()),
      stale_after_hours: t.Number(),
      snapshot_at_utc: N(t.String()),
      reason: N(t.String()),
      note: N(t.String()),
      proof_url: t.String(),
      csv_url: t.String(),
    },
    "One public freshness proof; not_configured is ok with note=not_configured and configured=false by default",
  ),
  mint_authority: check(
    {
      configured: t.Boolean(),
      note: N(t.String()),
      review_status: N(t.String()),
      expected_review_status: N(t.String()),
      expectation_configured: t.Boolean(),
      mismatch: N(t.Boolean()),
      mismatch_fields: t.Array(t.String()),
      snapshot_at_utc: N(t.String()),
      proof_url: t.String(),
    },
    "Mint and freeze authority against the configured expectation",
  ),
  audit_anomalies: check(
    {
      configured: t.Boolean(),
      note: N(t.String()),
      latest_run: N(t.Integer()),
      run_label: N(t.String()),
      run_overall: N(Level),
      signatures_with_anomalies: N(t.Integer()),
      rows_total: N(t.Integer()),
      warn_degrades: t.Boolean(),
      proof_url: t.String(),
    },
    "The latest complete audit-anomalies run: warn when it is warn or bad; counts in the overall only with audit_anomalies_warn_degrades",
  ),
  webhooks: check(
    { dead_letter_events: t.Integer(), failed_events: t.Integer(), pending_events: t.Integer(), delivered_events: t.Integer() },
    "Webhook delivery backlog and dead letters over every partner",
  ),
  request_errors: check(
    {
      window_minutes: t.Integer(),
      total_requests: t.Integer(),
      server_errors: t.Integer(),
      client_errors: t.Integer(),
      error_rate_pct: N(t.Number()),
      judged: t.Boolean(),
    },
    "Share of requests answered 5xx over window_minutes",
  ),
};

const pascal = (key: string) => key.replace(/(^|_)([a-z])/g, (_, __, c: string) => c.toUpperCase());
for (const [key, schema] of Object.entries(CHECK_SCHEMAS)) named(`${pascal(key)}Check`, schema);

type Checks = Omit<typeof CHECK_SCHEMAS, "freshness"> & Record<(typeof FRESHNESS_CHECK_NAMES)[number], typeof CHECK_SCHEMAS.freshness>;
/** Every check by name: CHECK_SCHEMAS in their order, `freshness` once for each freshness proof. */
const byName = Object.entries(CHECK_SCHEMAS).flatMap(([k, s]) => (k === "freshness" ? FRESHNESS_CHECK_NAMES.map((n) => [n, s] as const) : [[k, s] as const]));
export const ChecksSchema = named("StatusChecks", t.Object(Object.fromEntries(byName) as Checks));

export const MaintenanceWindow = named(
  "MaintenanceWindow",
  t.Object({
    id: t.Integer(),
    starts_at: t.String(),
    ends_at: t.String(),
    title: t.String(),
    description: N(t.String()),
    phase: t.Union([t.Literal("scheduled"), t.Literal("active"), t.Literal("completed")]),
  }),
);

// Written out (a mapped union loses its literal types); test/status/components.test.ts checks them against
// COMPONENT_IDS and INCIDENT_STATES.
export const IncidentStateSchema = t.Union([t.Literal("investigating"), t.Literal("identified"), t.Literal("monitoring"), t.Literal("resolved")]);
export const ComponentIdSchema = t.Union([t.Literal("api"), t.Literal("webhooks"), t.Literal("chain_data"), t.Literal("jobs")]);
const ComponentStatus = t.Union([Level, t.Literal("not_configured")]);

export const Component = named(
  "StatusComponent",
  t.Object({
    id: ComponentIdSchema,
    name: t.String(),
    description: t.String(),
    status: ComponentStatus,
    checks: t.Array(t.String()),
    open_incident_ids: t.Array(t.Integer()),
    reported_severity: N(Severity),
  }),
);

export const IncidentUpdate = named(
  "IncidentUpdate",
  t.Object({
    id: t.Integer(),
    state: IncidentStateSchema,
    message: t.String(),
    severity: N(Severity),
    created_at: t.String(),
  }),
);

export const Incident = named(
  "Incident",
  t.Object({
    id: t.Integer(),
    source: t.Union([t.Literal("automatic"), t.Literal("operator")], {
      description: "automatic: opened and closed by the checks; operator: written by the operators",
    }),
    title: t.String(),
    started_at: t.String(),
    ended_at: N(t.String()),
    severity: Severity,
    current_severity: N(Severity),
    status: t.Union([t.Literal("open"), t.Literal("resolved")]),
    state: N(IncidentStateSchema),
    duration_minutes: t.Number(),
    checks: t.Record(t.String(), Level),
    summary: t.Record(t.String(), t.String()),
    components: t.Array(ComponentIdSchema),
    updates: t.Array(IncidentUpdate, { description: "operator incidents: every update, newest first; automatic ones: none" }),
    updated_at: t.String(),
  }),
);

/** Time-weighted uptime totals of one window (also published by /transparency/trust-dashboard.json). */
export const UptimeTotals = named(
  "UptimeTotals",
  t.Object({
    observed_minutes: t.Number(),
    degraded_minutes: t.Number(),
    maintenance_minutes: t.Number(),
    unobserved_minutes: t.Number(),
    degraded_pct: N(t.Number()),
    uptime_pct: N(t.Number()),
  }),
);

export const Percentiles = t.Object({ samples: t.Integer(), p50_ms: N(t.Number()), p95_ms: N(t.Number()), p99_ms: N(t.Number()) });
const Window = t.Object({ start_utc: t.String(), end_utc: t.String() });
const meta = { include_meta: t.Optional(t.String()) };
/** The query parameters' defaults: documented by their schemas, applied by the routes. */
export const QUERY_DEFAULTS = { trend: 60, uptimeHours: 24, incidentHours: 168, incidentLimit: 50, latencyHours: 24 } as const;

export const StatusModel = {
  metaQuery: t.Object(meta),
  trendQuery: t.Object({ limit: intQuery({ minimum: 1, maximum: 1440, defaultValue: QUERY_DEFAULTS.trend }), ...meta }),
  uptimeQuery: t.Object({
    hours: intQuery({ minimum: 1, maximum: 2160, defaultValue: QUERY_DEFAULTS.uptimeHours, description: "window in hours (90 days at most)" }),
    exclude_maintenance: t.Optional(t.String({ description: "1|true|0|false; default from the policy (exclude_maintenance_default)" })),
    ...meta,
  }),
  incidentsQuery: t.Object({
    hours: intQuery({ minimum: 1, maximum: 2160, defaultValue: QUERY_DEFAULTS.incidentHours }),
    limit: intQuery({ minimum: 1, maximum: 200, defaultValue: QUERY_DEFAULTS.incidentLimit }),
    ...meta,
  }),
  latencyQuery: t.Object({ hours: intQuery({ minimum: 1, maximum: 720, defaultValue: QUERY_DEFAULTS.latencyHours }), ...meta }),
  status: named(
    "SystemStatus",
    Envelope({
      generated_at: t.String(),
      overall: Level,
      policy_version: t.String(),
      checks: ChecksSchema,
      components: t.Array(Component),
      last_snapshot_at: N(t.String()),
      open_incident: N(Incident),
      open_incidents: t.Array(Incident),
      maintenance: t.Object({ active: t.Boolean(), windows: t.Array(MaintenanceWindow) }),
      links: t.Record(t.String(), t.String()),
    }),
  ),
  trend: named(
    "StatusTrend",
    Envelope({
      limit: t.Integer(),
      ...LatestListAnswer(
        "points",
        t.Array(t.Object({ generated_at: t.String(), overall: Level })),
        {},
        {
          counts: t.Object({ ok: t.Integer(), warn: t.Integer(), bad: t.Integer() }),
        },
      ),
    }),
  ),
  uptime: named(
    "Uptime",
    Envelope({
      selected_hours: t.Integer(),
      window: Window,
      observed_since: N(t.String({ description: "the oldest stored snapshot: when monitoring began" })),
      partial_window: t.Boolean({ description: "true when monitoring began inside the window: the figures cover only the time since observed_since" }),
      coverage_pct: t.Number({ description: "share of the window some snapshot spoke for" }),
      exclude_maintenance: t.Boolean(),
      method: t.Literal("time_weighted_snapshots"),
      max_sample_gap_seconds: t.Integer(),
      overall: UptimeTotals,
      checks: t.Record(t.String(), UptimeTotals),
      components: t.Record(t.String(), UptimeTotals),
    }),
  ),
  incidents: Envelope({
    hours: t.Integer(),
    limit: t.Integer(),
    window: Window,
    ...LatestListAnswer("incidents", t.Array(Incident), { hours: t.Integer() }),
  }),
  incidentOne: Envelope({ incident: Incident }),
  incidentParams: t.Object({ incident_id: intPath() }),
  policy: Envelope({
    policy: t.Object({
      source: t.Union([t.Literal("builtin_default"), t.Literal("file")]),
      file: N(t.String()),
      loaded: t.Boolean(),
      error: N(t.String()),
      version: t.String(),
      exclude_maintenance_default: t.Boolean(),
      audit_anomalies_warn_degrades: t.Boolean(),
      // Each check's settings by name, as the policy file's schema has them (a Record here cost the answer's check
      // ~1.5–2 µs of Object.entries a request, a seventh of the route's CPU: bench/README.md "The policy's checks typed").
      checks: named("StatusPolicyChecks", PolicyChecksSchema),
    }),
  }),
  latency: Envelope({
    window: t.Object({ hours: t.Integer(), start_utc: t.String(), end_utc: t.String() }),
    available: t.Boolean(),
    method: t.Literal("histogram", { description: "read from hourly latency histograms with 4 buckets per doubling" }),
    relative_error_pct: t.Number({ description: "the largest relative error of a percentile against the nearest-rank value of the raw samples (9.05)" }),
    overall: Percentiles,
    endpoint_breakdown: t.Array(t.Object({ path: t.String(), ...Percentiles.properties })),
  }),
  canaryBody: t.Object(
    {
      // No U+0000: no text Herald takes may hold it (docs/http-conventions.md), echoed or stored.
      message: t.String({ minLength: 1, maxLength: 1000, pattern: "^[^\\u0000]+$", description: "echoed back unchanged (1–1000 characters, no U+0000)" }),
      request_id: t.String({
        minLength: 1,
        maxLength: 128,
        pattern: "^[\\x21-\\x7e]+$",
        description: "the caller's id for this probe: 1–128 visible ASCII characters",
      }),
    },
    { additionalProperties: false },
  ),
  canary: Envelope({ message: t.String(), request_id: t.String(), server_request_id: t.String(), received_at: t.String() }),
  badgeParams: t.Object({ badge: t.String({ pattern: "^[a-z0-9_]{1,64}\\.svg$", description: "<check>.svg, or overall.svg" }) }),
  badgeQuery: t.Object({
    ...ignoredMetaQuery,
    window: t.Optional(t.Union([t.Literal("24h"), t.Literal("7d"), t.Literal("30d"), t.Literal("90d")], { description: "default 24h" })),
  }),
};
