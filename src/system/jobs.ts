import type { AppContext } from "../context";
import { DAILY_PRUNE_MAX_MS } from "../db/batched-delete";

const DAY_MS = 86_400_000;
/** job_runs are kept longer than the request log: the reliability check reads up to 90 days of them. */
const JOB_RUNS_RETENTION_DAYS = 90;

export function registerSystemJobs(ctx: AppContext): void {
  ctx.jobs.register({
    name: "request-log-prune",
    pattern: "0 17 * * * *",
    description: `Deletes request_log rows older than REQUEST_LOG_RETENTION_DAYS (${ctx.config.requestLogRetentionDays})`,
    run: async () => {
      const cutoff = new Date(ctx.clock.now().getTime() - ctx.config.requestLogRetentionDays * DAY_MS).toISOString();
      // Bounded in time (src/db/batched-delete.ts): a backlog (a first prune after the retention was shortened) goes
      // over several hourly ticks, each logged with done: false until the last.
      const { deleted, done } = await ctx.requestLog.prune(cutoff);
      ctx.log.info("request log pruned", { deleted, done, cutoff });
    },
  });
  ctx.jobs.register({
    name: "job-runs-prune",
    pattern: "0 23 3 * * *",
    description: `Deletes job_runs older than ${JOB_RUNS_RETENTION_DAYS} days`,
    run: async () => {
      const cutoff = new Date(ctx.clock.now().getTime() - JOB_RUNS_RETENTION_DAYS * DAY_MS).toISOString();
      const { deleted, done } = await ctx.jobs.pruneRuns(cutoff, { maxMs: DAILY_PRUNE_MAX_MS });
      ctx.log.info("job runs pruned", { deleted, done, cutoff });
    },
  });
}
