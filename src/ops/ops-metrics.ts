import type { AppContext } from "../context";
import { jobStaleLimits } from "../status/service";
import { alertLevels } from "./alerts/views";
import { ownBackupsApply } from "./backups/engine";
import { listBackups } from "./backups/list";
import { eventLoopLag } from "./event-loop-lag";
import { linkTargetHealth } from "./link-inbox/target-health";

// What an external Prometheus needs to alert on Herald without reading its pages (deploy/prometheus/herald-rules.yml,
// docs/monitoring.md): when each job last succeeded and how long it may go without a run, which alerts fire, whether
// the link inbox can reach anyone, and how old the newest backup is. All read at scrape time from the same functions
// the pages and the readiness verdict use (nothing kept in memory here). The event-loop lag is the exception: it is
// measured in this process, by the sampler `serve` starts (src/ops/event-loop-lag.ts).

const seconds = (iso: string) => Math.floor(Date.parse(iso) / 1000);

export function registerOpsMetrics(ctx: AppContext): void {
  const m = ctx.metrics;
  // Made here so that its series are served from the first scrape, before (or without) the sampler running.
  eventLoopLag(ctx);
  m.labelledGauge(
    "herald_job_last_success_timestamp_seconds",
    "When each job last finished successfully (unix seconds); a job that never succeeded has no series.",
    ["job"],
    async () => (await ctx.jobs.lastSuccesses()).flatMap((j) => (j.at === null ? [] : [{ labels: { job: j.name }, value: seconds(j.at) }])),
  );
  m.labelledGauge(
    "herald_job_stale_after_seconds",
    "How long each job may go without a run before the status page calls it stale (the status policy's stale_factor × its interval, at least min_stale_minutes); only jobs expected to run here.",
    ["job"],
    () => jobStaleLimits(ctx).map((j) => ({ labels: { job: j.name }, value: j.seconds })),
  );
  m.labelledGauge(
    "herald_alert_firing",
    "Each known alert (key <source>:<name>) at its current level: 1 while it fires (level warn or fail), 0 at level ok.",
    ["alert", "level"],
    async () => (await alertLevels(ctx)).map((a) => ({ labels: { alert: a.key, level: a.level }, value: a.level === "ok" ? 0 : 1 })),
  );
  m.labelledGauge(
    "herald_link_inbox_target_up",
    "Each configured link-inbox target (redacted label): 1 up, 0 down (refused by the target policy, or its newest attempt failed).",
    ["target"],
    async () => (await linkTargetHealth(ctx)).map((t) => ({ labels: { target: t.target }, value: t.state === "up" ? 1 : 0 })),
  );
  // On PostgreSQL Herald makes no backups of its own (src/ops/backups/engine.ts): the series is absent there.
  if (!ownBackupsApply(ctx.store.dialect)) return;
  m.gauge("herald_backup_age_seconds", "Seconds since the newest backup in the backups folder was made; +Inf when there is none.", async () => {
    const newest = (await listBackups(ctx, { limit: 1, offset: 0 })).items[0];
    return newest ? Math.max(0, (ctx.clock.now().getTime() - Date.parse(newest.created_at)) / 1000) : Number.POSITIVE_INFINITY;
  });
}
