import type { AppContext } from "../context";
import { statusNotifier } from "./incidents/notify";
import { loadPolicy } from "./checks/policy";
import { pruneStatusHistory, takeStatusSnapshot, type CheckSetMemo } from "./snapshots";

/**
 * The status-snapshot job (every minute by default) and the daily prune. The policy file is validated once
 * here so an operator sees a bad file in the log at start; the service runs on the default either way.
 */
export function registerStatusJobs(ctx: AppContext): void {
  const boot = loadPolicy(ctx);
  if (boot.error) ctx.log.warn("status policy file not used; the built-in default applies", { path: boot.path, error: boot.error });
  else if (boot.loaded) ctx.log.info("status policy loaded", { path: boot.path, version: boot.policy.version });
  const memo: CheckSetMemo = { names: null };
  ctx.jobs.register({
    name: "status-snapshot",
    pattern: ctx.config.status.snapshotCron,
    description: "Evaluates every status check, stores a snapshot, opens and closes incidents (STATUS_SNAPSHOT_CRON)",
    run: async ({ runId }) => {
      const s = await takeStatusSnapshot(ctx, runId, memo);
      if (s.notifications > 0) statusNotifier(ctx).nudge();
      if (s.incident.action !== "none" && s.incident.action !== "updated") {
        ctx.log.warn("status incident " + s.incident.action, { incident_id: s.incident.incident_id, overall: s.evaluation.overall });
      }
    },
  });
  ctx.jobs.register({
    name: "status-notify",
    pattern: "*/5 * * * * *",
    description: "Sends due incident events to status subscribers (also nudged right after each change); records only runs that sent something",
    quietWhenIdle: true,
    everyInstance: true, // subscriber deliveries are leased one by one: every instance drains the queue
    run: () => statusNotifier(ctx).runOnceCounted(),
  });
  ctx.jobs.register({
    name: "status-prune",
    pattern: "0 41 2 * * *",
    description: `Deletes status snapshots and closed incidents older than STATUS_SNAPSHOT_RETENTION_DAYS (${ctx.config.status.snapshotRetentionDays}), and old subscriber deliveries`,
    run: async () => {
      ctx.log.info("status history pruned", await pruneStatusHistory(ctx));
    },
  });
}
