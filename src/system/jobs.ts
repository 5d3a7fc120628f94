import type { AppContext } from "../context";
import { DAILY_PRUNE_MAX_MS } from "../db/batched-delete";
import { pruneRuns } from "../jobs/store";

const DAY_MS = 86_400_000;
/** job_runs are kept longer than the request log: the reliability check reads up to 90 days of them. */
const JOB_RUNS_RETENTION_DAYS = 90;
/**
 * The request log's hourly summaries per key and route (src/http/request-log/summary.ts) are kept this long, or
 * REQUEST_LOG_RETENTION_DAYS when that is longer: usage analytics and the latency figures read up to 720 hours.
 */
export const SUMMARY_RETENTION_DAYS = 31;

export function registerSystemJobs(ctx: AppContext): void {
  const summaryDays = Math.max(ctx.config.requestLogRetentionDays, SUMMARY_RETENTION_DAYS);
  ctx.jobs.register({
    name: "request-log-prune",
    pattern: "0 17 * * * *",
    description: `Deletes request_log rows older than REQUEST_LOG_RETENTION_DAYS (${ctx.config.requestLogRetentionDays}), and hourly request summaries older than ${summaryDays} days`,
    run: async () => {
      const cutoff = new Date(ctx.clock.now().getTime() - ctx.config.requestLogRetentionDays * DAY_MS).toISOString();
      // Bounded in time (src/db/batched-delete.ts): a backlog (a first prune after the retention was shortened) goes
      // over several hourly ticks, each logged with done: false until the last.
      const { deleted, done } = await ctx.requestLog.prune(cutoff);
      ctx.log.info("request log pruned", { deleted, done, cutoff });
      const summaryCutoff = new Date(ctx.clock.now().getTime() - summaryDays * DAY_MS).toISOString().slice(0, 13);
      const summaries = await ctx.requestLog.pruneSummaries(summaryCutoff);
      ctx.log.info("request summaries pruned", { deleted: summaries.deleted, done: summaries.done, cutoff_hour: summaryCutoff });
    },
  });
  ctx.jobs.register({
    name: "job-runs-prune",
    pattern: "0 23 3 * * *",
    description: `Deletes job_runs older than ${JOB_RUNS_RETENTION_DAYS} days`,
    run: async () => {
      const cutoff = new Date(ctx.clock.now().getTime() - JOB_RUNS_RETENTION_DAYS * DAY_MS).toISOString();
      const { deleted, done } = await pruneRuns(ctx.store, cutoff, { maxMs: DAILY_PRUNE_MAX_MS });
      ctx.log.info("job runs pruned", { deleted, done, cutoff });
    },
  });
}
