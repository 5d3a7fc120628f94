import type { AppContext } from "../context";
import { runAudit } from "./audit/audit-run";

/** Every 15 minutes, 45 s past the quarter: after the transaction sync's minute (:30 every 2 min) has settled. */
export const AUDIT_CRON = "45 */15 * * * *";
export const AUDIT_JOB = "audit-anomalies";

/**
 * The audit-anomalies job (also `herald jobs run audit-anomalies`). Each run is recorded in job_runs by the
 * registry and names that job run on its audit_runs row. Without TOKEN_MINT there is nothing to audit: listed,
 * idle, and its scheduled ticks leave no job_runs rows (as the chain jobs).
 */
export function registerTransparencyJobs(ctx: AppContext): void {
  const configured = ctx.chain.configured;
  ctx.jobs.register({
    name: AUDIT_JOB,
    pattern: AUDIT_CRON,
    description: `Audits synced treasury/reserve transactions and chain snapshots for anomalies (runs.json, summary.json)${configured ? "" : " (idle: TOKEN_MINT is not set)"}`,
    quietWhenIdle: !configured,
    run: async ({ runId }) => {
      if (!configured) return { idle: true };
      const r = await runAudit(ctx, runId);
      ctx.log.info("audit run complete", { job_run_id: runId, ...r });
      return { idle: false };
    },
  });
}
