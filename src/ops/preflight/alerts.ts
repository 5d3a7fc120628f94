import type { AppContext } from "../../context";
import type { JobDefinition } from "../../jobs/registry";
import type { Queryable } from "../../db/port";
import { insertRuns } from "../alerts/store";
import { currentGuards } from "./guards";
import { ALWAYS_DUE, addDays, dayOf, snapshotDue, snapshotDueBefore, takePreflightSnapshotIn } from "./service";
import { ANOMALY_DEFAULTS, changeSeries, evaluate, type Evaluation } from "./anomalies";

export const PREFLIGHT_SNAPSHOT_JOB = "preflight-snapshot";

/**
 * Records one evaluation of the anomaly detector (the spec's defaults, every field) per series for `day` in
 * ops_alert_runs, on `t`: the snapshot's own transaction, so the day's snapshot and its evaluation commit together.
 */
export async function recordPreflightEvaluation(t: Queryable, ctx: AppContext, day: string, runId: string): Promise<Evaluation[]> {
  const p = ANOMALY_DEFAULTS;
  const series = await changeSeries(ctx, addDays(day, -p.baseline_days), day, { section: "all", fields: null }, t);
  const evaluations = [...series].map(([name, points]) => evaluate(points, day, name, p));
  const at = ctx.clock.now().toISOString();
  await insertRuns(
    t,
    evaluations.map((e) => ({
      run_id: runId,
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
  );
  return evaluations;
}

/**
 * Snapshot (when due, or always on a manual run), then one detector evaluation of today's changes, in one
 * transaction that first claims the day: of several instances (or a manual run beside the scheduled one), one takes it.
 */
export async function runPreflightSnapshot(ctx: AppContext, force: boolean): Promise<{ skipped: boolean; day: string; evaluations: Evaluation[] }> {
  const day = dayOf(ctx.clock.now());
  if (!force && !(await snapshotDue(ctx))) return { skipped: true, day, evaluations: [] };
  // Everything the transaction writes is gathered first: its body awaits only the store.
  const guards = await currentGuards(ctx);
  const runId = `preflight-${day}-${Buffer.from(ctx.rng.bytes(6)).toString("hex")}`;
  const dueBefore = force ? ALWAYS_DUE : snapshotDueBefore(ctx);
  const evaluations = await ctx.store.tx(async (t) => {
    if (!(await takePreflightSnapshotIn(t, ctx, guards, dueBefore))) return null;
    return recordPreflightEvaluation(t, ctx, day, runId);
  });
  return evaluations ? { skipped: false, day, evaluations } : { skipped: true, day, evaluations: [] };
}

/** Every 10 minutes: a snapshot when today has none or the process started after it (else an idle tick); a manual run always. */
export function preflightSnapshotJob(ctx: AppContext): JobDefinition {
  return {
    name: PREFLIGHT_SNAPSHOT_JOB,
    pattern: "*/10 * * * *",
    quietWhenIdle: true,
    description: "Snapshots every preflight guard field for the UTC day (idempotent: replaces the day's rows) and records the anomaly detector's evaluation",
    run: async ({ trigger }) => {
      const r = await runPreflightSnapshot(ctx, trigger === "manual");
      if (r.skipped) return { idle: true };
      ctx.log.info("preflight snapshot taken", { day: r.day, anomalies: r.evaluations.filter((e) => e.status === "anomaly").map((e) => e.series) });
      return { idle: false };
    },
  };
}
