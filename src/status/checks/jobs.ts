import { Cron } from "croner";
import type { AppContext } from "../../context";
import type { JobSummary } from "../../jobs/registry";
import { levelAtLeast } from "./types";
import type { StatusPolicy } from "./policy";

/**
 * Each pattern's last answer, kept while `from` stays before the pattern's next run (the next two runs, and so the
 * answer, cannot change until then). Parsing a pattern and walking to its next runs took ~28 % of herald's CPU on
 * GET /metrics and ~0.7 ms a scrape (a CPU profile of 400 scrapes, every job asked twice); one entry per job pattern.
 */
const intervals = new Map<string, { from: number; until: number; seconds: number | null }>();

/** Seconds between a pattern's next two runs after `from`: its typical interval (null if it never fires again). */
export function intervalSeconds(pattern: string, from: Date): number | null {
  const t = from.getTime();
  const kept = intervals.get(pattern);
  if (kept && t >= kept.from && t < kept.until) return kept.seconds;
  const cron = new Cron(pattern, { paused: true });
  try {
    const [a, b] = cron.nextRuns(2, from);
    const seconds = a && b ? Math.round((b.getTime() - a.getTime()) / 1000) : null;
    intervals.set(pattern, { from: t, until: a ? a.getTime() : Number.POSITIVE_INFINITY, seconds });
    return seconds;
  } finally {
    cron.stop();
  }
}

/**
 * How long `job` may go without a run before it is stale: stale_factor × its interval, never less than
 * min_stale_minutes; null when it is not expected to run here (JOBS_ENABLED=0, the job disabled, a quiet job), so it
 * is never stale. /metrics publishes it (herald_job_stale_after_seconds) for Prometheus rules to judge the same way.
 */
export function staleAfterMs(ctx: AppContext, policy: StatusPolicy, job: Pick<JobSummary, "name" | "pattern" | "enabled">, now: Date): number | null {
  const p = policy.checks.jobs;
  const interval = intervalSeconds(job.pattern, now);
  const expected = ctx.config.jobsEnabled && job.enabled && !ctx.jobs.isQuietWhenIdle(job.name) && interval !== null;
  return expected ? Math.max(interval * 1000 * p.stale_factor, p.min_stale_minutes * 60_000) : null;
}

/**
 * A job expected to run here (staleAfterMs) is stale when neither its latest run nor this process's start is within
 * its limit. Counting from the start means a fresh deploy is not "stale" before a job's first tick.
 */
function entryOf(ctx: AppContext, policy: StatusPolicy, job: JobSummary) {
  const now = ctx.clock.now();
  const limitMs = staleAfterMs(ctx, policy, job, now);
  const last = job.last_run;
  const since = Math.max(last ? Date.parse(last.started_at) : 0, ctx.startedAt.getTime());
  return {
    name: job.name,
    enabled: job.enabled,
    // A quiet job leaves no row when idle, so it is never judged stale.
    quiet_when_idle: ctx.jobs.isQuietWhenIdle(job.name),
    interval_seconds: intervalSeconds(job.pattern, now),
    // Public: the error's first 200 characters are enough to recognise it (chain errors are URL-redacted at source).
    last_run: last ? { started_at: last.started_at, finished_at: last.finished_at, ok: last.ok, error: last.error?.slice(0, 200) ?? null } : null,
    // The latest finished run's outcome; null = never finished a run.
    ok: last?.ok ?? null,
    stale: limitMs !== null && now.getTime() - since > limitMs,
  };
}

export async function jobsCheck(ctx: AppContext, policy: StatusPolicy) {
  const p = policy.checks.jobs;
  const jobs = (await ctx.jobs.list()).map((j) => entryOf(ctx, policy, j)).sort((a, b) => (a.name < b.name ? -1 : 1));
  const failing = jobs.filter((j) => j.ok === false);
  const stale = jobs.filter((j) => j.stale);
  const troubled = new Set([...failing, ...stale].map((j) => j.name));
  const status = levelAtLeast(troubled.size, p.warn_at, p.bad_at);
  const parts: string[] = [];
  if (failing.length) parts.push(`last run failed: ${failing.map((j) => j.name).join(", ")}`);
  if (stale.length) parts.push(`stale: ${stale.map((j) => j.name).join(", ")}`);
  if (!ctx.config.jobsEnabled) parts.push("jobs are not scheduled in this process (JOBS_ENABLED=0)");
  return {
    status,
    summary: parts.length ? parts.join("; ") : `${jobs.length} jobs, none failing or stale`,
    scheduler_expected: ctx.config.jobsEnabled,
    failing_count: failing.length,
    stale_count: stale.length,
    jobs,
  };
}
