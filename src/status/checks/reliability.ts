import type { AppContext } from "../../context";
import { levelAtLeast, round2, worst } from "./types";
import type { StatusPolicy } from "./policy";
import { apartTask } from "../../db/apart";
import { finishedRunsSince, jobRunsMark } from "../store/read-models";

// Jobs reliability from job_runs. Only finished runs (ok is not null) that started inside the window count;
// a run still in progress (the status-snapshot run evaluating this very check) is not judged yet.
//
// - current success streak of a job: its successful runs since its latest failure in the window (all of its
//   runs when none failed); avg_success_streak is the mean over the jobs (each job weighs the same).
// - a failure episode: a maximal sequence of consecutive failed runs of one job. It is recovered when a
//   success follows; its repair time runs from the first failure's finished_at (when the failure was
//   known) to the next success's finished_at (when the job worked again). avg_mttr_minutes is the mean
//   over every recovered episode of every job; jobs_with_mttr_samples counts the jobs that had one.
// - unresolved_failure_jobs: jobs whose latest run in the window failed.

export interface RunRow {
  name: string;
  finished_at: string;
  ok: boolean;
}

interface JobTally {
  streak: number;
  failingSince: string | null;
  repairsMinutes: number[];
}

/** Runs must be ordered by job, then by start time (the order they happened in). */
export function reliabilityOf(runs: readonly RunRow[], windowDays: number) {
  const jobs = new Map<string, JobTally>();
  for (const r of runs) {
    let j = jobs.get(r.name);
    if (!j) jobs.set(r.name, (j = { streak: 0, failingSince: null, repairsMinutes: [] }));
    if (r.ok) {
      j.streak++;
      if (j.failingSince !== null) {
        j.repairsMinutes.push((Date.parse(r.finished_at) - Date.parse(j.failingSince)) / 60_000);
        j.failingSince = null;
      }
    } else {
      j.streak = 0;
      j.failingSince ??= r.finished_at;
    }
  }
  const tallies = [...jobs.values()];
  const repairs = tallies.flatMap((j) => j.repairsMinutes);
  const unresolved = [...jobs.entries()]
    .filter(([, j]) => j.failingSince !== null)
    .map(([name]) => name)
    .sort();
  return {
    window_days: windowDays,
    job_count: jobs.size,
    runs_considered: runs.length,
    avg_success_streak: tallies.length ? round2(tallies.reduce((s, j) => s + j.streak, 0) / tallies.length) : 0,
    avg_mttr_minutes: repairs.length ? round2(repairs.reduce((s, m) => s + m, 0) / repairs.length) : null,
    jobs_with_mttr_samples: tallies.filter((j) => j.repairsMinutes.length > 0).length,
    unresolved_failure_jobs: unresolved.length,
    unresolved_jobs: unresolved,
  };
}

/**
 * The reliability figures of the runs that started since `sinceIso`, read and tallied in the read worker
 * (src/db/apart.ts): the window's runs grow with the jobs and the window (a run a minute of status-snapshot alone is
 * 10,000 a week, 130,000 over the policy's longest window of 90 days), and the tally parses two times a run.
 */
export const reliabilityTask = apartTask("status-reliability", async (q, a: { sinceIso: string; windowDays: number }) => {
  // job_runs_started_idx serves the range; the sort is in memory over the window's runs.
  const rows = await finishedRunsSince(q, a.sinceIso);
  const runs = rows.map((r) => ({ name: r.name, finished_at: r.finished_at ?? a.sinceIso, ok: r.ok === 1 }));
  return reliabilityOf(runs, a.windowDays);
});

/** How long kept figures may be served while no run starts or finishes: the window slides by this much at most. */
export const RELIABILITY_REFRESH_MS = 60_000;

type Figures = ReturnType<typeof reliabilityOf>;
const kept = new WeakMap<AppContext, { windowDays: number; mark: string; at: number; figures: Figures }>();

/**
 * The window's figures, tallied again only when a run started or finished since (jobRunsMark) or a minute went by:
 * the window holds every run of 90 days (130,000 of status-snapshot alone), read and tallied in ~6 ms per 43,200
 * runs on PostgreSQL, on every /status, /status.json and system-status read before this. Per process; a run of
 * another instance changes the mark too.
 */
async function reliabilityFigures(ctx: AppContext, windowDays: number): Promise<Figures> {
  const now = ctx.clock.now().getTime();
  const mark = await jobRunsMark(ctx.store);
  const k = kept.get(ctx);
  if (k && k.windowDays === windowDays && k.mark === mark && now >= k.at && now - k.at < RELIABILITY_REFRESH_MS) return k.figures;
  const since = new Date(now - windowDays * 86_400_000).toISOString();
  const figures = await ctx.store.apart(reliabilityTask, { sinceIso: since, windowDays });
  kept.set(ctx, { windowDays, mark, at: now, figures });
  return figures;
}

export async function reliabilityCheck(ctx: AppContext, policy: StatusPolicy) {
  const p = policy.checks.reliability;
  const n = await reliabilityFigures(ctx, p.window_days);
  const failing = levelAtLeast(n.unresolved_failure_jobs, p.unresolved_failure_jobs_warn, p.unresolved_failure_jobs_bad);
  const slow = p.avg_mttr_minutes_warn > 0 && n.avg_mttr_minutes !== null && n.avg_mttr_minutes > p.avg_mttr_minutes_warn ? "warn" : "ok";
  const status = worst([failing, slow]);
  const parts = [
    `${n.job_count} jobs, ${n.runs_considered} runs in ${p.window_days} d`,
    n.unresolved_failure_jobs ? `latest run failed: ${n.unresolved_jobs.join(", ")}` : "no job's latest run failed",
    n.avg_mttr_minutes === null ? "no recoveries to time" : `mean time to recovery ${n.avg_mttr_minutes} min`,
  ];
  return { status, summary: parts.join("; "), ...n };
}
