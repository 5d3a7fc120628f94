import type { AppContext } from "../../context";
import type { Level } from "./types";
import type { StatusPolicy } from "./policy";
import { latestCompleteAuditRun } from "../store/read-models";

// audit_anomalies: the latest complete audit run (docs/transparency.md). warn when that run is warn or bad,
// never bad: anomalies in published data are for people to look at, and the engine counts this warn in the
// overall only when the policy says audit_anomalies_warn_degrades (src/status/checks/engine.ts overallOf).

/**
 * The newest complete audit run: a read model over the transparency domain's audit_runs (the same row as its
 * latestAuditVerdict), read here rather than imported, because the transparency reports publish this
 * domain's uptime — importing transparency would tie the two domains in a cycle (src/status/store/read-models.ts).
 */
async function latestCompleteRun(ctx: AppContext) {
  const row = await latestCompleteAuditRun(ctx.store);
  return row
    ? { run: row.id, label: row.label, overall: row.overall ?? "ok", rows_total: row.rows_total, signatures_with_anomalies: row.signatures_with_anomalies }
    : null;
}

export async function auditAnomaliesCheck(ctx: AppContext, policy: StatusPolicy) {
  const configured = ctx.chain.configured;
  const run = await latestCompleteRun(ctx);
  const base = {
    configured,
    latest_run: run?.run ?? null,
    run_label: run?.label ?? null,
    run_overall: run?.overall ?? null,
    signatures_with_anomalies: run?.signatures_with_anomalies ?? null,
    rows_total: run?.rows_total ?? null,
    warn_degrades: policy.audit_anomalies_warn_degrades,
    proof_url: run ? `/transparency/audit-anomalies/summary.json?run=${run.run}` : "/transparency/audit-anomalies/summary.json",
  };
  if (!configured)
    return {
      status: policy.checks.freshness.not_configured,
      summary: "not configured: TOKEN_MINT is not set, nothing to audit",
      note: "not_configured",
      ...base,
    };
  if (!run) return { status: "ok" as const, summary: "no complete audit run yet", note: null, ...base };
  const status: Level = run.overall === "ok" ? "ok" : "warn";
  const summary = `audit run ${run.run} (${run.label}): ${run.signatures_with_anomalies} of ${run.rows_total} rows anomalous, overall ${run.overall}`;
  return { status, summary, note: null, ...base };
}
