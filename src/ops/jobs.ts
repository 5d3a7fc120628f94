import type { AppContext } from "../context";
import { registerAlertsMonitorJob } from "./alerts/monitor";
import { registerLinkInboxJob } from "./link-inbox/outbox";
import { registerOpsMetrics } from "./ops-metrics";
import { pruneProbeRuns, runSyntheticProbes } from "./readiness/probes";
import { preflightSnapshotJob } from "./preflight/alerts";

export const SYNTHETIC_PROBES_JOB = "synthetic-probes";

/**
 * The synthetic-probes job calls Herald's own public endpoints on the address `serve` listens on. A process that is
 * not serving (a CLI command, a test without listen) has no address of its own: the run records nothing and says so.
 */
export function registerOpsJobs(ctx: AppContext): void {
  ctx.jobs.register(preflightSnapshotJob(ctx));
  registerLinkInboxJob(ctx);
  registerAlertsMonitorJob(ctx);
  registerOpsMetrics(ctx);
  ctx.jobs.register({
    name: SYNTHETIC_PROBES_JOB,
    pattern: ctx.config.readiness.probeCron,
    description: `Calls Herald's own public status, public-stats, a freshness proof and a share-link validate over HTTP; records status, latency and whether each had data (SYNTHETIC_PROBE_CRON); prunes results older than ${ctx.config.readiness.probeRetentionDays} days`,
    run: async () => {
      // Bounded in time: rows the bound left (done: false) go at the next run, five minutes on.
      const { deleted: pruned, done: pruneDone } = await pruneProbeRuns(ctx);
      if (!ctx.listenUrl) {
        ctx.log.info("synthetic probes skipped: this process is not serving HTTP", { pruned, prune_done: pruneDone });
        return;
      }
      const run = await runSyntheticProbes(ctx, ctx.listenUrl);
      const failed = run.results.filter((r) => !r.ok).map((r) => r.probe);
      const empty = run.results.filter((r) => r.ok && !r.had_data).map((r) => r.probe);
      const fields = { run_id: run.run_id, base_url: run.base_url, failed, empty, pruned, prune_done: pruneDone };
      if (failed.length) ctx.log.warn("synthetic probes failed", fields);
      else ctx.log.info("synthetic probes ran", fields);
    },
  });
}
