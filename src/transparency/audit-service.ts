import type { AppContext } from "../context";
import { formatUnits } from "../chain/service";
import { alerts } from "./alerts";
import { completeRunBefore, getRun, parseCounts, selectRun } from "./runs";
import { latestDecimals } from "./chain-inputs";
import type { Severity } from "./glossary";

// What other domains read of the audit (the status check, the trust dashboard): the latest complete run, in a
// shape that does not depend on the routes. This file imports nothing from status/, so status can import it.

export interface AuditVerdict {
  configured: boolean;
  latest: null | {
    run: number;
    label: string;
    overall: "ok" | "warn" | "bad";
    rows_total: number;
    signatures_with_anomalies: number;
    severity_counts: Record<Severity, number>;
    max_abs_delta: string;
    finished_at: string | null;
  };
  runs_total: number;
  incomplete_runs: number;
}

export function latestAuditVerdict(ctx: AppContext): AuditVerdict {
  const run = completeRunBefore(ctx, null);
  const counts = ctx.db.sqlite.query("SELECT count(*) AS n, coalesce(sum(is_complete = 0), 0) AS incomplete FROM audit_runs").get() as {
    n: number;
    incomplete: number;
  };
  return {
    configured: ctx.chain.configured,
    latest: run
      ? {
          run: run.id,
          label: run.label,
          overall: run.overall ?? "ok",
          rows_total: run.rows_total,
          signatures_with_anomalies: run.signatures_with_anomalies,
          severity_counts: parseCounts<Severity>(run.severity_counts) as Record<Severity, number>,
          max_abs_delta: formatUnits(BigInt(run.max_abs_delta_raw), run.decimals),
          finished_at: run.finished_at,
        }
      : null,
    runs_total: counts.n,
    incomplete_runs: counts.incomplete,
  };
}

/**
 * The decimals an operator's token amounts are read with: the mint's, from the latest token snapshot or
 * audit run; 9 before either exists (amounts with more fractional digits than the mint has are refused later).
 */
export function decimalsForInput(ctx: AppContext): number {
  const mint = ctx.config.chain.tokenMint;
  return (mint ? latestDecimals(ctx, mint) : null) ?? completeRunBefore(ctx, null)?.decimals ?? 9;
}

/**
 * The alerts.json evaluation of the latest complete run under its own stored thresholds, without recommendations:
 * what /transparency/audit-anomalies/alerts.json answers by default (the ops alerts monitor records it).
 */
export function latestAuditAlert(ctx: AppContext) {
  return alerts(ctx, selectRun(ctx, undefined, "run"), { sigs: undefined, rows: undefined }, false);
}

/**
 * The alerts.json evaluation of every complete run after `afterRunId`, oldest first (at most `limit`): what the
 * ops alerts monitor records, so that a bad run followed seconds later by a clean one is still seen. Nothing
 * newer (or no run evaluated yet: null) → the latest complete run's evaluation alone, as latestAuditAlert.
 */
export function auditAlertsAfter(ctx: AppContext, afterRunId: number | null, limit = 100) {
  if (afterRunId === null) return [latestAuditAlert(ctx)];
  const ids = ctx.db.sqlite.query("SELECT id FROM audit_runs WHERE is_complete = 1 AND id > ? ORDER BY id LIMIT ?").all(afterRunId, limit) as Array<{
    id: number;
  }>;
  if (ids.length === 0) return [latestAuditAlert(ctx)];
  return ids.map(({ id }) => alerts(ctx, { selector: String(id), run: getRun(ctx, id) }, { sigs: undefined, rows: undefined }, false));
}
