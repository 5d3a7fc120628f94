import type { AppContext } from "../context";
import { FRESHNESS_PROOFS, latencyPercentiles, listIncidents, systemStatus, uptimeSummary, type Level, type UptimeCache } from "../status/service";
import pkg from "../../package.json";
import { latestAuditVerdict } from "./audit-service";
import { databaseSettingsPostgres, databaseSettingsSqlite } from "./store/database";

// Trust controls and evidence pointers. Every claim here points at something a reader can fetch and check
// (a proof, a policy, a spec); what the process cannot observe itself (its Litestream parent) is said so,
// never asserted.

type LooseCheck = { status: Level; summary: string } & Record<string, unknown>;

const proofsOf = (checks: Record<string, LooseCheck>) =>
  (Object.keys(FRESHNESS_PROOFS) as Array<keyof typeof FRESHNESS_PROOFS>).map((name) => {
    const c = checks[name]!;
    return {
      check: name,
      label: FRESHNESS_PROOFS[name].label,
      json_url: `${FRESHNESS_PROOFS[name].path}.json`,
      csv_url: `${FRESHNESS_PROOFS[name].path}.csv`,
      status: c.status,
      freshness_status: (c.freshness_status as string | undefined) ?? null,
      age_hours: (c.age_hours as number | null | undefined) ?? null,
      stale_after_hours: (c.stale_after_hours as number | undefined) ?? null,
    };
  });

const SECRETS_AT_REST = "AES-256-GCM under HERALD_MASTER_KEY, kept apart from the backups";

/** Where the data lives and how it is protected: Litestream on SQLite, the database's own replication on PostgreSQL. */
async function dataProtection(ctx: AppContext) {
  if (ctx.store.dialect === "postgres") {
    return {
      database: await databaseSettingsPostgres(ctx.store),
      replication: {
        tool: "postgresql" as const,
        mode: "the database's own streaming replication and WAL archiving, run by its operator",
        observed_by_service: false,
        note: "Herald runs on a PostgreSQL database it does not operate; its replicas and archive are the database operator's, so no replication lag is claimed here.",
        docs: "docs/postgres.md",
      },
      backup: {
        restore_drill: "the database operator's point-in-time recovery (pg_basebackup and the WAL archive, or the provider's)",
        on_demand_endpoint: null,
        note: "Backups are the database's own (point-in-time recovery); Herald's SQLite snapshot endpoint does not apply on PostgreSQL.",
        secrets_at_rest: SECRETS_AT_REST,
      },
    };
  }
  return {
    database: await databaseSettingsSqlite(ctx.store),
    replication: {
      tool: "litestream" as const,
      mode: "continuous WAL streaming to an object store or directory (sync-interval 1 s)",
      observed_by_service: false,
      note: 'Litestream runs as the parent process (litestream replicate -exec "herald serve"); the service cannot observe it, so no replication lag is claimed here.',
      docs: "docs/operations.md#deployment-and-backups",
    },
    backup: {
      restore_drill: "test/ops/litestream.test.ts replicates, restores and compares a database in CI",
      on_demand_endpoint: "/admin/backup/run" as string | null,
      note: "Litestream's continuous replica is the backup; operators can also take a consistent VACUUM INTO snapshot (path, size and sha256 reported) with POST /admin/backup/run.",
      secrets_at_rest: SECRETS_AT_REST,
    },
  };
}

function signing(ctx: AppContext) {
  return {
    partner_requests: {
      scheme: "HMAC-SHA256" as const,
      canonical: "METHOD\\nPATH_AND_QUERY\\nTIMESTAMP\\nNONCE\\nhex(sha256(RAW_BODY))",
      headers: ["X-Partner-Key", "X-Partner-Timestamp", "X-Partner-Nonce", "X-Partner-Signature"],
      timestamp_skew_seconds: ctx.config.signatureSkewSeconds,
      nonce_single_use_seconds: ctx.config.signatureSkewSeconds * 2 + 1, // NonceStore.use: 2 × skew and a second
      docs: "docs/partner-auth.md",
    },
    webhooks: {
      scheme: "HMAC-SHA256" as const,
      signed_string: 'TIMESTAMP + "." + RAW_BODY',
      headers: ["X-Webhook-Id", "X-Webhook-Event", "X-Webhook-Timestamp", "X-Webhook-Signature"],
      docs: "docs/webhooks.md",
    },
  };
}

export async function trustDocument(ctx: AppContext) {
  const status = await systemStatus(ctx);
  const checks = status.checks as unknown as Record<string, LooseCheck>;
  const mint = checks.mint_authority!;
  return {
    generated_at_utc: ctx.clock.now().toISOString(),
    service: { name: "Herald", version: pkg.version, base_url: ctx.config.publicBaseUrl },
    overall: status.overall,
    controls: [
      {
        id: "public_status",
        title: "Public status, uptime and incidents",
        evidence: ["/status", "/api/public/system-status", "/api/public/system-status/uptime", "/status/feed.rss"],
      },
      { id: "status_policy", title: "Published thresholds for every status check", evidence: ["/api/public/system-status/policy"] },
      {
        id: "freshness_proofs",
        title: "Every chain number carries its age, limit and source",
        evidence: Object.values(FRESHNESS_PROOFS).map((p) => `${p.path}.json`),
      },
      {
        id: "mint_authority_review",
        title: "Mint and freeze authority compared with the published expectation",
        evidence: ["/api/public/token-mint-authorities.json"],
      },
      { id: "signed_requests", title: "Partner requests and webhook deliveries are HMAC-signed", evidence: ["/api/openapi.yaml"] },
      { id: "error_catalog", title: "One error catalog with retry guidance", evidence: ["/developers/api-errors.json"] },
      {
        id: "deprecation_policy",
        title: "At least 30 days' notice before a breaking change",
        evidence: ["/developers/deprecations.json", "/developers/deprecations-playbook.md"],
      },
    ],
    proofs: proofsOf(checks),
    mint_authority: {
      status: mint.status,
      review_status: (mint.review_status as string | null | undefined) ?? null,
      expected_review_status: (mint.expected_review_status as string | null | undefined) ?? null,
      expectation_configured: (mint.expectation_configured as boolean | undefined) ?? false,
      mismatch: (mint.mismatch as boolean | null | undefined) ?? null,
      proof_url: "/api/public/token-mint-authorities.json",
    },
    data_protection: await dataProtection(ctx),
    signing: signing(ctx),
    links: {
      status_page: "/status",
      trust_dashboard: "/transparency/trust-dashboard.json",
      openapi: "/api/openapi.yaml",
      openapi_transparency: "/api/openapi-transparency.yaml",
      deprecations: "/developers/deprecations.json",
      errors: "/developers/api-errors.json",
    },
  };
}

/**
 * GET /transparency/trust-dashboard.json: the numbers a holder looks at, on one page. Its request figures (the
 * request_errors check, latency_ms_24h) count the requests made before the current minute: counted up to now, each
 * request for the page would change the next answer's bytes (it is one more request, one more latency sample), so
 * its ETag would never match and no revalidation could be a 304. They move once a minute at most, in step with the
 * page's max-age=60; everything else on it is as of now.
 */
export async function trustDashboard(ctx: AppContext, cache?: UptimeCache) {
  const now = ctx.clock.now().getTime();
  const requestsBefore = new Date(now - (now % 60_000));
  const status = await systemStatus(ctx, { requestsBefore });
  const checks = status.checks as unknown as Record<string, LooseCheck>;
  const incidents = (await listIncidents(ctx, 24 * 30, 200)).incidents;
  const latency = await latencyPercentiles(ctx, 24, requestsBefore);
  return {
    generated_at_utc: ctx.clock.now().toISOString(),
    overall: status.overall,
    checks: Object.fromEntries(Object.entries(checks).map(([name, c]) => [name, { status: c.status, summary: c.summary }])),
    uptime: await uptimeSummary(ctx, cache),
    incidents: {
      open: incidents.filter((i) => i.status === "open").length,
      last_30_days: incidents.length,
      bad_last_30_days: incidents.filter((i) => i.severity === "bad").length,
      latest: incidents.slice(0, 5).map((i) => ({ id: i.id, started_at: i.started_at, ended_at: i.ended_at, severity: i.severity })),
    },
    proofs: proofsOf(checks),
    latency_ms_24h: latency.overall,
    audit_anomalies: await auditSection(ctx),
    links: { trust: "/trust.json", status_page: "/status", uptime: "/api/public/system-status/uptime", incidents: "/api/public/system-status/incidents" },
  };
}

/** The trust dashboard's audit block: the latest complete run and where its proof (every examined row) is. */
async function auditSection(ctx: AppContext) {
  const v = await latestAuditVerdict(ctx);
  const base = "/transparency/audit-anomalies";
  const run = v.latest;
  return {
    available: run !== null,
    configured: v.configured,
    note: !v.configured
      ? "TOKEN_MINT is not set: there is nothing to audit"
      : run
        ? `latest complete audit run ${run.run}: ${run.signatures_with_anomalies} of ${run.rows_total} rows anomalous (${run.overall})`
        : "no complete audit run yet (the audit-anomalies job runs every 15 minutes)",
    latest_run: run,
    runs_total: v.runs_total,
    incomplete_runs: v.incomplete_runs,
    links: {
      summary: run ? `${base}/summary.json?run=${run.run}` : `${base}/summary.json`,
      runs: `${base}/runs.json`,
      proof: run ? `${base}/export.json?run=${run.run}` : `${base}/export.json`,
      proof_csv: run ? `${base}/export?run=${run.run}` : `${base}/export`,
      glossary: `${base}/glossary.json`,
      alerts: `${base}/alerts.json`,
    },
  };
}
