import type { AppContext } from "../../context";
import type { Level } from "./types";
import type { StatusPolicy } from "./policy";
import { latestCompleteAuditRun } from "../store/read-models";

// audit_anomalies: the latest complete audit run (docs/transparency.md). warn when that run is warn or bad,
// never bad: anomalies in published data are for people to look at, and the engine counts this warn in the
// overall only when the policy says audit_anomalies_warn_degrades (src/status/checks/engine.ts overallOf).

export async function auditAnomaliesCheck(ctx: AppContext, policy: StatusPolicy) {
  const configured = ctx.chain.configured;
  // The newest complete run, read as a read model of transparency's audit_runs (store/read-models.ts says why).
  const run = await latestCompleteAuditRun(ctx.store);
  const overall = run ? (run.overall ?? "ok") : null;
  const base = {
    configured,
    latest_run: run?.id ?? null,
    run_label: run?.label ?? null,
    run_overall: overall,
    signatures_with_anomalies: run?.signatures_with_anomalies ?? null,
    rows_total: run?.rows_total ?? null,
    warn_degrades: policy.audit_anomalies_warn_degrades,
    proof_url: run ? `/transparency/audit-anomalies/summary.json?run=${run.id}` : "/transparency/audit-anomalies/summary.json",
  };
  if (!configured)
    return {
      status: policy.checks.freshness.not_configured,
      summary: "not configured: TOKEN_MINT is not set, nothing to audit",
      note: "not_configured",
      ...base,
    };
  if (!run) return { status: "ok" as const, summary: "no complete audit run yet", note: null, ...base };
  const status: Level = overall === "ok" ? "ok" : "warn";
  const summary = `audit run ${run.id} (${run.label}): ${run.signatures_with_anomalies} of ${run.rows_total} rows anomalous, overall ${overall}`;
  return { status, summary, note: null, ...base };
}
