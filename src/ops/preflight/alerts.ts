import type { AppContext } from "../../context";
import type { JobDefinition } from "../../jobs/registry";
import { addDays, dayOf, snapshotDue, takePreflightSnapshot } from "./service";
import { ANOMALY_DEFAULTS, changeSeries, evaluate, type Evaluation } from "./anomalies";
import { opsAlertRuns } from "../tables";

export const PREFLIGHT_SNAPSHOT_JOB = "preflight-snapshot";

/**
 * Records one evaluation of the anomaly detector per series for `day` in ops_alert_runs (source `preflight`,
 * name `preflight_anomaly:<series>`), which the alerts monitor reads. Defaults of the spec, every field.
 */
export function recordPreflightEvaluation(ctx: AppContext, day: string, runId: string): Evaluation[] {
  const p = ANOMALY_DEFAULTS;
  const series = changeSeries(ctx, addDays(day, -p.baselineDays), day, { section: "all", fields: null });
  const evaluations = [...series].map(([name, points]) => evaluate(points, day, name, p));
  const at = ctx.clock.now().toISOString();
  if (evaluations.length) {
    ctx.db.db
      .insert(opsAlertRuns)
      .values(
        evaluations.map((e) => ({
          runId,
          at,
          source: "preflight",
          name: `preflight_anomaly:${e.series}`,
          // The alert runs' vocabulary (ok | warn | fail): an anomaly fails, which is what the link inbox notifies;
          // the detector's own verdict stays in the details.
          status: e.status === "anomaly" ? "fail" : "ok",
          value: String(e.count),
          details: JSON.stringify({
            day: e.day,
            detector_status: e.status,
            baseline_points: e.baseline_points,
            baseline_mean: e.baseline_mean,
            baseline_sd: e.baseline_sd,
            z: e.z,
          }),
        })),
      )
      .run();
  }
  return evaluations;
}

/** Snapshot (when due, or always on a manual run), then one detector evaluation of today's changes. */
export function runPreflightSnapshot(ctx: AppContext, force: boolean): { skipped: boolean; day: string; evaluations: Evaluation[] } {
  const day = dayOf(ctx.clock.now());
  if (!force && !snapshotDue(ctx)) return { skipped: true, day, evaluations: [] };
  takePreflightSnapshot(ctx);
  const runId = `preflight-${day}-${Buffer.from(ctx.rng.bytes(6)).toString("hex")}`;
  return { skipped: false, day, evaluations: recordPreflightEvaluation(ctx, day, runId) };
}

/**
 * The preflight-snapshot job: every 10 minutes it snapshots when today has no snapshot yet or the process
 * started after it was taken (so the first start of a day, and a restart with new configuration, are captured);
 * otherwise the tick is idle and leaves no job_runs row. A manual run always replaces today's rows.
 */
export function preflightSnapshotJob(ctx: AppContext): JobDefinition {
  return {
    name: PREFLIGHT_SNAPSHOT_JOB,
    pattern: "*/10 * * * *",
    quietWhenIdle: true,
    description: "Snapshots every preflight guard field for the UTC day (idempotent: replaces the day's rows) and records the anomaly detector's evaluation",
    run: ({ trigger }) => {
      const r = runPreflightSnapshot(ctx, trigger === "manual");
      if (r.skipped) return { idle: true };
      ctx.log.info("preflight snapshot taken", { day: r.day, anomalies: r.evaluations.filter((e) => e.status === "anomaly").map((e) => e.series) });
      return { idle: false };
    },
  };
}
