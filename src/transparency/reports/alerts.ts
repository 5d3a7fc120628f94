import type { AppContext } from "../../context";
import { parseCounts, type RunRow, type Selected } from "./runs";
import { completeRunBefore, countCompleteUpTo } from "../store/runs";
import { currentThresholds, pctHundredths, storedThresholds, type Thresholds } from "../operator-inputs/thresholds";
import type { AnomalyType } from "../audit/glossary";
import { pctOf } from "./reports";
import { dataTime } from "../state";
import { AlertSide } from "./audit-model";
import { schemaView } from "../../http/schema-view";

// alerts.json / alerts.csv: the selected run against its baseline (the complete run before it), read from the
// runs' aggregates. Threshold comparison is exact, in hundredths of a percent and integers:
//   tripped(current, base, t) = current > base and (base = 0 or (current − base) × 10000 ≥ t × base)
// where t is the threshold in hundredths (50 % → 5000). A rise from zero trips any threshold.
//   alert_level = bad  when a threshold tripped and the run's overall is bad;
//                 warn when a threshold tripped, or the run's overall is bad;
//                 ok   otherwise.     should_alert = alert_level ≠ ok.

export interface AlertThresholds {
  /** Hundredths of a percent. */
  sigs: number;
  rows: number;
  source: { sigs: "query" | "stored"; rows: "query" | "stored" };
}

export function alertThresholds(stored: Thresholds, sigsQuery: number | undefined, rowsQuery: number | undefined): AlertThresholds {
  return {
    sigs: sigsQuery ?? pctHundredths(stored.sigs_increase_threshold_pct) ?? 5000,
    rows: rowsQuery ?? pctHundredths(stored.rows_increase_threshold_pct) ?? 10_000,
    source: { sigs: sigsQuery === undefined ? "stored" : "query", rows: rowsQuery === undefined ? "stored" : "query" },
  };
}

/** Thresholds a request names (hundredths of a percent, from the query); undefined = the run's own. */
export interface ThresholdOverrides {
  sigs: number | undefined;
  rows: number | undefined;
}

export function tripped(current: number, base: number, hundredths: number): boolean {
  if (current <= base) return false;
  return base === 0 || (current - base) * 10_000 >= hundredths * base;
}

const pctNumber = (hundredths: number) => hundredths / 100;

function recommendations(run: RunRow, baseline: RunRow | null, level: string): string[] {
  if (level === "ok") return [];
  const types = parseCounts<AnomalyType>(run.type_counts);
  const out = [`Review the run's anomalies, most severe first: /transparency/audit-anomalies/summary.json?run=${run.id}&top_limit=50`];
  if (baseline) out.push(`Compare with the baseline run type by type: /transparency/audit-anomalies/diff/compare.json?run_a=${baseline.id}&run_b=${run.id}`);
  if ((types.untracked_outflow ?? 0) + (types.untracked_inflow ?? 0) > 0)
    out.push(
      "Untracked movements: check each against the declared movements (/transparency/audit-anomalies/declared-movements.json); operators declare expected ones or triage the rest.",
    );
  if ((types.balance_mismatch ?? 0) > 0)
    out.push(
      "Balance mismatch: compare the token snapshots with the synced transactions (/api/public/public-stats-cache-freshness.json, /api/public/transaction-sync-freshness.json).",
    );
  if ((types.authority_change ?? 0) > 0) out.push("Authority change: check the mint-authority proof (/api/public/token-mint-authorities.json).");
  if ((types.sync_gap ?? 0) > 0)
    out.push(
      "Sync gap: some transactions were never stored; raise CHAIN_TX_MAX_PER_RUN or run the transaction sync more often (/api/public/transaction-sync-freshness.json).",
    );
  if ((types.duplicate_signature ?? 0) > 0)
    out.push("Duplicate signatures: check both signatures on an explorer; triage genuine twin transfers as false_positive.");
  if ((types.snapshot_slot_regression ?? 0) > 0)
    out.push(
      "Snapshot slot regression: a token snapshot came from an RPC node behind the others; check SOLANA_RPC_URLS and compare the next snapshot (/api/public/public-stats-cache-freshness.json).",
    );
  out.push("Track the triage of each anomaly: /transparency/audit-anomalies/triage.json");
  return out;
}

/** The two sides of the alert and their fields (the AlertSide schema's, in order): alerts.csv's current.<field> and baseline.<field> columns. */
export const ALERT_SIDES = ["current", "baseline"] as const;
export const ALERT_SIDE_KEYS = Object.keys(AlertSide.properties) as Array<keyof typeof AlertSide.properties>;

/** One side of the alert: a run's aggregates and their change since the complete run before it (null without one). */
function alertSide(run: RunRow, before: RunRow | null) {
  const sigDelta = before ? run.signatures_with_anomalies - before.signatures_with_anomalies : null;
  const rowsDelta = before ? run.rows_total - before.rows_total : null;
  return schemaView(AlertSide, run, {
    run_id: run.id,
    sig_delta: sigDelta,
    sig_delta_pct: sigDelta === null ? null : pctOf(sigDelta, before!.signatures_with_anomalies),
    rows_delta: rowsDelta,
    rows_delta_pct: rowsDelta === null ? null : pctOf(rowsDelta, before!.rows_total),
  });
}

export async function alerts(ctx: AppContext, sel: Selected, overrides: ThresholdOverrides, includeRecommendations: boolean) {
  const run = sel.run && sel.run.is_complete === 1 ? sel.run : sel.run ? await completeRunBefore(ctx.store, sel.run.id) : null;
  const baseline = run ? await completeRunBefore(ctx.store, run.id) : null;
  // A run is judged under the thresholds it ran with (audit_runs.thresholds, as runs.json shows them), so a past
  // run's answer does not change when an operator changes the thresholds today; a query value overrides. With no
  // run there is nothing to judge, and the thresholds in force are shown.
  const t = alertThresholds(run ? storedThresholds(run.thresholds) : await currentThresholds(ctx.store), overrides.sigs, overrides.rows);
  const sigTrip = !!(run && baseline && tripped(run.signatures_with_anomalies, baseline.signatures_with_anomalies, t.sigs));
  const rowsTrip = !!(run && baseline && tripped(run.rows_total, baseline.rows_total, t.rows));
  const bad = run?.overall === "bad";
  const level = (sigTrip || rowsTrip) && bad ? "bad" : sigTrip || rowsTrip || bad ? "warn" : "ok";
  const reasons: string[] = [];
  if (sigTrip)
    reasons.push(
      `signatures with anomalies rose from ${baseline!.signatures_with_anomalies} to ${run!.signatures_with_anomalies} (threshold ${pctNumber(t.sigs)} %)`,
    );
  if (rowsTrip) reasons.push(`rows examined rose from ${baseline!.rows_total} to ${run!.rows_total} (threshold ${pctNumber(t.rows)} %)`);
  if (bad) reasons.push("the run's overall is bad (a high or critical anomaly)");
  return {
    generated_at_utc: await dataTime(ctx),
    selector: sel.selector,
    selected_run: run?.id ?? null,
    // The alert is a function of the run's stored aggregates: it was evaluated when the run finished.
    evaluated_at: run?.finished_at ?? null,
    snapshot: {
      alert_level: level as "ok" | "warn" | "bad",
      should_alert: level !== "ok",
      reasons,
      thresholds: { sigs_increase_threshold_pct: pctNumber(t.sigs), rows_increase_threshold_pct: pctNumber(t.rows) },
      thresholds_source: { sigs_increase_threshold_pct: t.source.sigs, rows_increase_threshold_pct: t.source.rows },
      points_available: run ? await countCompleteUpTo(ctx.store, run.id) : 0,
      current: run ? alertSide(run, baseline) : null,
      // The baseline in the same shape, its deltas against the complete run before it.
      baseline: baseline ? alertSide(baseline, await completeRunBefore(ctx.store, baseline.id)) : null,
    },
    include_recommendations: includeRecommendations,
    recommendations: includeRecommendations && run ? recommendations(run, baseline, level) : [],
  };
}

export type AlertsAnswer = Awaited<ReturnType<typeof alerts>>;
