import type { AppContext } from "../context";
import { formatUnits } from "../chain/service";
import { alerts } from "./reports/alerts";
import { parseCounts, selectRun } from "./reports/runs";
import { latestDecimals } from "./store/chain-inputs";
import { completeRunBefore, completeRunIdsAfter, getRun, runCounts } from "./store/runs";
import type { Severity } from "./audit/glossary";

// What other domains read of the audit (the status check, the trust dashboard, the ops alert monitor): the latest
// complete run, in a shape that does not depend on the routes. This file imports nothing from status/, so status
// can import it.

export async function latestAuditVerdict(ctx: AppContext) {
  const run = await completeRunBefore(ctx.store, null);
  const counts = await runCounts(ctx.store);
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
    runs_total: counts.total,
    incomplete_runs: counts.incomplete,
  };
}

/**
 * The decimals an operator's token amounts are read with: the mint's, from the latest token snapshot or
 * audit run; 9 before either exists (amounts with more fractional digits than the mint has are refused later).
 */
export async function decimalsForInput(ctx: AppContext): Promise<number> {
  const mint = ctx.config.chain.tokenMint;
  return (mint ? await latestDecimals(ctx.store, mint) : null) ?? (await completeRunBefore(ctx.store, null))?.decimals ?? 9;
}

/**
 * The alerts.json evaluation of the latest complete run under its own stored thresholds, without recommendations:
 * what /transparency/audit-anomalies/alerts.json answers by default (the ops alerts monitor records it).
 */
export async function latestAuditAlert(ctx: AppContext) {
  return alerts(ctx, await selectRun(ctx, undefined, "run"), { sigs: undefined, rows: undefined }, false);
}

/**
 * The alerts.json evaluation of every complete run after `afterRunId`, oldest first (at most `limit`): what the
 * ops alerts monitor records, so that a bad run followed seconds later by a clean one is still seen. Nothing
 * newer (or no run evaluated yet: null) → the latest complete run's evaluation alone, as latestAuditAlert. Paging
 * by run id is safe here, also with several instances: complete runs commit in id order (store/runs.ts).
 */
export async function auditAlertsAfter(ctx: AppContext, afterRunId: number | null, limit = 100) {
  if (afterRunId === null) return [await latestAuditAlert(ctx)];
  const ids = await completeRunIdsAfter(ctx.store, afterRunId, limit);
  if (ids.length === 0) return [await latestAuditAlert(ctx)];
  const out = [];
  for (const id of ids) out.push(await alerts(ctx, { selector: String(id), run: await getRun(ctx.store, id) }, { sigs: undefined, rows: undefined }, false));
  return out;
}
