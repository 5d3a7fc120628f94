import { Cron } from "croner";
import type { Clock } from "../clock";
import type { StoreHealth } from "../db/health";
import { type Store, StoreUnavailable } from "../db/port";
import { errorFields, type Logger } from "../log";
import { JobLeases } from "./leases";
import * as runs from "./store";

export interface JobDefinition {
  name: string;
  /** Croner pattern; seconds allowed (6 fields). */
  pattern: string;
  description: string;
  /**
   * A frequent job (e.g. the once-a-second webhook dispatcher) returns `{ idle: true }` when it found nothing to
   * do; with quietWhenIdle such runs leave no job_runs row, so the table records work and failures, not ticks.
   */
  quietWhenIdle?: boolean;
  /**
   * Runs on every instance at each tick instead of on the lease holder only (see JobRegistry): for the jobs that
   * drain a queue whose rows they claim one by one (outbox dispatchers), where more instances means more hands.
   */
  everyInstance?: boolean;
  /** `runId` is this run's job_runs row (null for a quiet run, whose row is written only if it did work). */
  // biome-ignore lint/suspicious/noConfusingVoidType: a job body returns nothing, or reports whether it found work
  run(info: { runId: number | null; trigger: runs.Trigger }): Promise<void | { idle: boolean }> | void | { idle: boolean };
}

export interface JobSummary {
  name: string;
  pattern: string;
  description: string;
  enabled: boolean;
  scheduled: boolean;
  next_run_at: string | null;
  /** The run's job_runs fields but the name, `ok` a boolean (null while the run is in progress). */
  last_run: (Omit<runs.LastRun, "name" | "ok"> & { ok: boolean | null }) | null;
}

export interface JobRunResult {
  name: string;
  ok: boolean;
  error: string | null;
  duration_ms: number;
  run_id: number;
}

interface Deps {
  store: Store;
  /** The database's availability: while it is down, scheduled ticks back off and say so once a minute. */
  health?: StoreHealth;
  clock: Clock;
  log: Logger;
  /** Names this process in job_runs.instance_id and job_leases.holder. */
  instanceId: string;
  disabled: readonly string[];
  /** JOB_SCHEDULES: another pattern for a named job. */
  schedules?: Readonly<Record<string, string>>;
  onRun?: (name: string, ok: boolean) => void;
}

const withoutName = ({ name: _name, ...rest }: runs.LastRun) => rest;

/** A run's start, and its end as job_runs records it: finished_at is the start plus the measured duration. */
function startRun(clock: Clock, instanceId: string, name: string, trigger: runs.Trigger) {
  const started = clock.now();
  const t0 = performance.now();
  return {
    start: { name, startedAt: started.toISOString(), trigger, instanceId } satisfies runs.RunStart,
    end(error: string | null): runs.RunEnd {
      const durationMs = Math.round(performance.now() - t0);
      return { finishedAt: new Date(started.getTime() + durationMs).toISOString(), ok: error === null, error, durationMs };
    },
  };
}

/** A lease outlives two periods (a renewal may be late by one tick), and never less than this. */
const MIN_LEASE_MS = 30_000;

/** The longest gap between a pattern's next few runs: its period (a monthly pattern's gaps differ). */
function periodMs(pattern: string, from: Date): number | null {
  const cron = new Cron(pattern, { paused: true });
  try {
    const next = cron.nextRuns(4, from);
    let longest = 0;
    for (let i = 1; i < next.length; i++) longest = Math.max(longest, next[i]!.getTime() - next[i - 1]!.getTime());
    return longest > 0 ? longest : null;
  } finally {
    cron.stop();
  }
}

/** Each schedule's next run as last asked, kept until it has passed (nextRunOf). */
const nextRuns = new WeakMap<Cron, Date | null>();

/**
 * A schedule's next run. Asking Croner walks the pattern (~0.1–0.2 ms a job): /metrics and every status read list
 * the jobs, and 23 schedules asked on each cost 3–4 ms of a scrape. The answer holds until that time has passed.
 */
function nextRunOf(cron: Cron): Date | null {
  const kept = nextRuns.get(cron);
  if (kept === null || (kept !== undefined && kept.getTime() > Date.now())) return kept;
  const next = cron.nextRun();
  nextRuns.set(cron, next);
  return next;
}

/**
 * The Croner registry. Every run — scheduled or on demand — is recorded in job_runs (with the instance that ran
 * it) so the status engine can compute streaks and MTTR. `protect: true` stops a slow run overlapping the next tick.
 *
 * Leadership, the rule for several instances on one database (docs/design.md §8a): a job is a singleton unless its
 * definition says `everyInstance`. At each scheduled tick a singleton's instance takes or renews the job's lease
 * (job_leases, src/jobs/leases.ts: compare-and-swap with expiry) for max(2 × the job's period, 30 s), and runs the
 * job only if it holds the lease; otherwise the tick is skipped and leaves no job_runs row. The holder renews at
 * every tick and every third of the lease while a long run is in progress, so the lease moves only when its holder
 * stops ticking: on stop() it is released (another instance takes it at its next tick), after a crash it expires.
 * `everyInstance` jobs (queue drainers that claim their rows with leases of their own) run everywhere. A manual run
 * (runNow: `herald jobs run`, POST /admin/jobs/{name}/run) runs regardless of the lease: an operator asked for it.
 * On SQLite there is one instance, which always holds every lease.
 */
export class JobRegistry {
  private readonly defs = new Map<string, JobDefinition>();
  private readonly crons = new Map<string, Cron>();
  private readonly running = new Set<Promise<unknown>>();
  private readonly leases: JobLeases;
  private readonly leaseMs = new Map<string, number>();
  /** The leases this instance took and has not given up, released on stop(). */
  private readonly held = new Set<string>();
  /** Successful runs seen by this process, idle ticks of quiet jobs included (those leave no job_runs row). */
  private readonly lastOkAt = new Map<string, string>();

  constructor(private readonly deps: Deps) {
    this.leases = new JobLeases(deps.store);
  }

  register(given: JobDefinition): void {
    if (this.defs.has(given.name)) throw new Error(`job ${given.name} registered twice`);
    const def = { ...given, pattern: this.deps.schedules?.[given.name] ?? given.pattern };
    new Cron(def.pattern, { paused: true }).stop(); // validates the pattern at registration, not at first tick
    this.defs.set(def.name, def);
    const period = periodMs(def.pattern, this.deps.clock.now());
    this.leaseMs.set(def.name, Math.max(2 * (period ?? 0), MIN_LEASE_MS));
  }

  /** JOB_SCHEDULES may name only jobs that exist: a typo would silently leave the job on its own schedule. */
  assertSchedulesKnown(): void {
    const unknown = Object.keys(this.deps.schedules ?? {}).filter((n) => !this.defs.has(n));
    if (unknown.length) throw new Error(`JOB_SCHEDULES names jobs Herald does not have: ${unknown.join(", ")} (herald jobs list shows them)`);
  }

  has(name: string): boolean {
    return this.defs.has(name);
  }

  isEnabled(name: string): boolean {
    return !this.deps.disabled.includes(name);
  }

  /** A quiet job's idle ticks leave no job_runs row, so "no recent row" does not mean "not running". */
  isQuietWhenIdle(name: string): boolean {
    return this.defs.get(name)?.quietWhenIdle === true;
  }

  /** Schedules every enabled job (tests drive tick() instead, unless they ask for live scheduling). */
  start(): void {
    for (const def of this.defs.values()) {
      if (!this.isEnabled(def.name) || this.crons.has(def.name)) continue;
      const cron = new Cron(def.pattern, { name: `herald:${def.name}`, protect: true, catch: false }, async () => {
        if (this.deps.health && !this.deps.health.jobMayRun(def.name)) return;
        try {
          await this.tick(def.name);
        } catch (err) {
          // The run's own failure is recorded in job_runs; this is the store failing around it.
          this.reportFailure(def.name, err, "error", "job tick failed");
        }
      });
      this.crons.set(def.name, cron);
    }
  }

  get started(): boolean {
    return this.crons.size > 0;
  }

  /** Stops scheduling, waits for runs in progress (croner's stop() does not cancel them), releases held leases. */
  async stop(): Promise<void> {
    for (const cron of this.crons.values()) cron.stop();
    this.crons.clear();
    await Promise.allSettled([...this.running]);
    for (const name of [...this.held]) {
      this.held.delete(name);
      try {
        await this.leases.release(name, this.deps.instanceId);
      } catch (err) {
        // It expires by itself: another instance waits out the rest of its lease.
        this.deps.log.warn("job lease not released", { job: name, ...errorFields(err) });
      }
    }
  }

  /** A job_runs row (trigger `manual`) for work that is no scheduled job (a backup): its id, and what finishes it. */
  async beginRun(name: string): Promise<{ id: number; finish(error: string | null): Promise<void> }> {
    const run = startRun(this.deps.clock, this.deps.instanceId, name, "manual");
    const id = await this.deps.store.tx((t) => runs.insertRun(t, run.start));
    return { id, finish: (error) => runs.finishRun(this.deps.store, id, run.end(error)) };
  }

  async runNow(name: string): Promise<JobRunResult> {
    return this.track(this.execute(this.defOrThrow(name), "manual"));
  }

  /**
   * One scheduled tick, as croner calls it (leadership: see the class); null when another instance holds the lease.
   * Public so that tests drive ticks by hand, with a fake clock, instead of waiting for the wall clock.
   */
  async tick(name: string): Promise<JobRunResult | null> {
    const def = this.defOrThrow(name);
    if (def.everyInstance) return this.track(this.execute(def, "schedule"));
    const ttlMs = this.leaseMs.get(name)!;
    if (!(await this.holdLease(name, ttlMs))) return null;
    // A run longer than a third of the lease keeps it: renewed on a timer until the run ends.
    const renew = setInterval(() => void this.holdLease(name, ttlMs), Math.max(1_000, Math.floor(ttlMs / 3)));
    renew.unref?.();
    try {
      return await this.track(this.execute(def, "schedule"));
    } finally {
      clearInterval(renew);
    }
  }

  /** Takes or renews the lease of `name` for this instance; false (the tick is skipped) when not held. */
  private async holdLease(name: string, ttlMs: number): Promise<boolean> {
    let held: boolean;
    try {
      held = await this.leases.acquire(name, this.deps.instanceId, this.deps.clock.now().getTime(), ttlMs);
    } catch (err) {
      // Without the store nobody can tell who leads: skip rather than risk two runs.
      this.reportFailure(name, err, "warn", "job lease not taken; tick skipped");
      return false;
    }
    if (held && !this.held.has(name)) {
      this.held.add(name);
      await this.closeAbandoned(name);
    } else if (!held && this.held.delete(name)) this.deps.log.warn("job lease lost to another instance", { job: name });
    return held;
  }

  /** On taking a job's lease: the scheduled runs a stopped instance left unfinished end as interrupted (store.ts). */
  private async closeAbandoned(name: string): Promise<void> {
    try {
      const closed = await runs.closeAbandonedRuns(this.deps.store, name, this.deps.instanceId, this.deps.clock.now().toISOString());
      if (closed > 0) this.deps.log.warn("job runs of a stopped instance closed as interrupted", { job: name, runs: closed });
    } catch (err) {
      // Only the record suffers: the job still runs. The runs stay open until an instance takes the lease over again.
      this.deps.log.warn("job runs of a stopped instance not closed", { job: name, ...errorFields(err) });
    }
  }

  /** Each registered job's name, schedule and switch: what is known without reading its runs. */
  schedules(): Array<Pick<JobSummary, "name" | "pattern" | "enabled">> {
    return [...this.defs.values()].map((def) => ({ name: def.name, pattern: def.pattern, enabled: this.isEnabled(def.name) }));
  }

  async list(): Promise<JobSummary[]> {
    const last = await runs.latestRuns(this.deps.store, [...this.defs.keys()], "any");
    return [...this.defs.values()].map((def) => {
      const cron = this.crons.get(def.name);
      const r = last.get(def.name);
      const next = cron ? nextRunOf(cron) : null;
      return {
        name: def.name,
        pattern: def.pattern,
        description: def.description,
        enabled: this.isEnabled(def.name),
        scheduled: Boolean(cron),
        next_run_at: next ? next.toISOString() : null,
        last_run: r ? { ...withoutName(r), ok: r.ok === null ? null : r.ok === 1 } : null,
      };
    });
  }

  /**
   * When each registered job last finished successfully (ISO time, null if never): the newer of job_runs (any
   * instance) and this process's own runs, so a quiet job's idle ticks count as the successes they are.
   */
  async lastSuccesses(): Promise<Array<{ name: string; at: string | null }>> {
    const names = [...this.defs.keys()];
    const rows = await runs.latestRuns(this.deps.store, names, "successful");
    return names.map((name) => {
      const stored = rows.get(name)?.finished_at ?? null;
      const seen = this.lastOkAt.get(name) ?? null;
      return { name, at: stored === null ? seen : seen === null || stored > seen ? stored : seen };
    });
  }

  /** A database outage is one warning (src/db/health.ts), not a stack trace per job run or tick. */
  private reportFailure(job: string, err: unknown, level: "warn" | "error", msg: string, fields: Record<string, unknown> = {}): void {
    if (err instanceof StoreUnavailable && this.deps.health) this.deps.health.jobFailedUnavailable(job, err.message);
    else this.deps.log[level](msg, { job, ...fields, ...errorFields(err) });
  }

  private defOrThrow(name: string): JobDefinition {
    const def = this.defs.get(name);
    if (!def) throw new Error(`unknown job ${name}; known: ${[...this.defs.keys()].join(", ")}`);
    return def;
  }

  /** stop() waits for these: a run and the writes that record it. */
  private async track<T>(work: Promise<T>): Promise<T> {
    this.running.add(work);
    try {
      return await work;
    } finally {
      this.running.delete(work);
    }
  }

  private async execute(def: JobDefinition, trigger: runs.Trigger): Promise<JobRunResult> {
    const run = startRun(this.deps.clock, this.deps.instanceId, def.name, trigger);
    const deferInsert = def.quietWhenIdle === true && trigger === "schedule";
    const store = this.deps.store;
    let id = deferInsert ? 0 : await store.tx((t) => runs.insertRun(t, run.start));
    let error: string | null = null;
    let idle = false;
    try {
      const out = await def.run({ runId: deferInsert ? null : id, trigger });
      idle = Boolean(out && typeof out === "object" && out.idle);
    } catch (err) {
      error = err instanceof Error ? err.message : String(err);
      this.reportFailure(def.name, err, "error", "job failed", { run_id: id });
    }
    const end = run.end(error);
    if (end.ok) this.lastOkAt.set(def.name, end.finishedAt);
    if (deferInsert) {
      if (idle && end.ok) return { name: def.name, ok: true, error: null, duration_ms: end.durationMs, run_id: 0 };
      id = await store.tx((t) => runs.insertFinishedRun(t, run.start, end));
    } else {
      await runs.finishRun(store, id, end);
    }
    this.deps.onRun?.(def.name, end.ok);
    return { name: def.name, ok: end.ok, error, duration_ms: end.durationMs, run_id: id };
  }
}
