import { t } from "elysia";
import { Envelope } from "../http/envelope";
import { Level, Percentiles, Severity, StatusModel, UptimeTotals } from "../status/model";
import { named } from "../http/openapi/names";
import { nullable as N } from "../http/routes/declare";

const Proof = named(
  "TransparencyProof",
  t.Object({
    check: t.String(),
    label: t.String(),
    json_url: t.String(),
    csv_url: t.String(),
    status: Level,
    freshness_status: N(t.String()),
    age_hours: N(t.Number()),
    stale_after_hours: N(t.Number()),
  }),
);

export const TransparencyModel = {
  metaQuery: StatusModel.metaQuery,
  trust: named(
    "TrustSummary",
    Envelope({
      generated_at_utc: t.String(),
      service: t.Object({ name: t.String(), version: t.String(), base_url: t.String() }),
      overall: Level,
      controls: t.Array(t.Object({ id: t.String(), title: t.String(), evidence: t.Array(t.String()) })),
      proofs: t.Array(Proof),
      mint_authority: t.Object({
        status: Level,
        review_status: N(t.String()),
        expected_review_status: N(t.String()),
        expectation_configured: t.Boolean(),
        mismatch: N(t.Boolean()),
        proof_url: t.String(),
      }),
      data_protection: t.Object({
        database: t.Object({
          engine: t.Union([t.Literal("sqlite"), t.Literal("postgres")]),
          journal_mode: t.String({ description: "SQLite's journal mode; on PostgreSQL always wal (its write-ahead log is not optional)" }),
          synchronous: t.String({ description: "SQLite's synchronous level; on PostgreSQL its synchronous_commit setting" }),
        }),
        replication: t.Object({
          tool: t.Union([t.Literal("litestream"), t.Literal("postgresql")]),
          mode: t.String(),
          observed_by_service: t.Boolean(),
          note: t.String(),
          docs: t.String(),
        }),
        backup: t.Object({ restore_drill: t.String(), on_demand_endpoint: N(t.String()), note: t.String(), secrets_at_rest: t.String() }),
      }),
      signing: t.Object({
        partner_requests: t.Object({
          scheme: t.Literal("HMAC-SHA256"),
          canonical: t.String(),
          headers: t.Array(t.String()),
          timestamp_skew_seconds: t.Integer(),
          nonce_single_use_seconds: t.Integer(),
          docs: t.String(),
        }),
        webhooks: t.Object({ scheme: t.Literal("HMAC-SHA256"), signed_string: t.String(), headers: t.Array(t.String()), docs: t.String() }),
      }),
      links: t.Record(t.String(), t.String()),
    }),
  ),
  dashboard: named(
    "TrustDashboard",
    Envelope({
      generated_at_utc: t.String(),
      overall: Level,
      checks: t.Record(t.String(), t.Object({ status: Level, summary: t.String() })),
      uptime: t.Object({
        exclude_maintenance: t.Boolean(),
        windows: t.Object({ "24h": UptimeTotals, "7d": UptimeTotals, "30d": UptimeTotals, "90d": UptimeTotals }),
      }),
      incidents: t.Object({
        open: t.Integer(),
        last_30_days: t.Integer(),
        bad_last_30_days: t.Integer(),
        latest: t.Array(t.Object({ id: t.Integer(), started_at: t.String(), ended_at: N(t.String()), severity: Severity })),
      }),
      proofs: t.Array(Proof),
      latency_ms_24h: Percentiles,
      audit_anomalies: t.Object({
        available: t.Boolean({ description: "true once a complete audit run exists" }),
        configured: t.Boolean({ description: "false without TOKEN_MINT: nothing to audit" }),
        note: t.String(),
        latest_run: N(
          t.Object({
            run: t.Integer(),
            label: t.String(),
            overall: Level,
            rows_total: t.Integer(),
            signatures_with_anomalies: t.Integer(),
            severity_counts: t.Record(t.String(), t.Integer()),
            max_abs_delta: t.String({ description: "decimal token amount" }),
            finished_at: N(t.String()),
          }),
        ),
        runs_total: t.Integer(),
        incomplete_runs: t.Integer(),
        links: t.Record(t.String(), t.String()),
      }),
      links: t.Record(t.String(), t.String()),
    }),
  ),
};
