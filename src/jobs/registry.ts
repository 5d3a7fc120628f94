import { Cron } from "croner";
import type { Database, Statement } from "bun:sqlite";
import type { Clock } from "../clock";
import type { Logger } from "../log";
import { errorFields } from "../log";

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
  /** `runId` is this run's job_runs row (null for a quiet run, whose row is written only if it did work). */
  // biome-ignore lint/suspicious/noConfusingVoidType: a job body returns nothing, or reports whether it found work
  run(info: { runId: number | null; trigger: "schedule" | "manual" }): Promise<void | { idle: boolean }> | void | { idle: boolean };
}

export interface JobSummary {
  name: string;
  pattern: string;
  description: string;
  enabled: boolean;
  scheduled: boolean;
  next_run_at: string | null;
  last_run: { started_at: string; finished_at: string | null; ok: boolean | null; error: string | null; duration_ms: number | null } | null;
}

export interface JobRunResult {
  name: string;
  ok: boolean;
  error: string | null;
  duration_ms: number;
  run_id: number;
}

interface Deps {
  sqlite: Database;
  clock: Clock;
  log: Logger;
  disabled: readonly string[];
  onRun?: (name: string, ok: boolean) => void;
}

/**
 * The Croner registry. Every run — scheduled or on demand — is recorded in job_runs so the status engine can
 * compute streaks and MTTR. `protect: true` stops a slow run overlapping the next tick.
 */
export class JobRegistry {
  private readonly defs = new Map<string, JobDefinition>();
  private readonly crons = new Map<string, Cron>();
  private readonly running = new Set<Promise<unknown>>();
  private readonly insertRun: Statement;
  private readonly finishRun: Statement;
  private readonly lastRun: Statement;
  private readonly lastOkRun: Statement;
  /** Successful runs seen by this process, idle ticks of quiet jobs included (those leave no job_runs row). */
  private readonly lastOkAt = new Map<string, string>();

  constructor(private readonly deps: Deps) {
    this.insertRun = deps.sqlite.prepare("INSERT INTO job_runs (name, started_at, trigger) VALUES (?, ?, ?) RETURNING id");
    this.finishRun = deps.sqlite.prepare("UPDATE job_runs SET finished_at = ?, ok = ?, error = ?, duration_ms = ? WHERE id = ?");
    this.lastRun = deps.sqlite.prepare(
      "SELECT started_at, finished_at, ok, error, duration_ms FROM job_runs WHERE name = ? ORDER BY started_at DESC, id DESC LIMIT 1",
    );
    // job_runs_name_started_idx, walked backwards to the newest successful run.
    this.lastOkRun = deps.sqlite.prepare("SELECT finished_at FROM job_runs WHERE name = ? AND ok = 1 ORDER BY started_at DESC, id DESC LIMIT 1");
  }

  /** Retention: deletes the runs started before `before` (ISO time); the number deleted. */
  pruneRuns(before: string): number {
    return this.deps.sqlite.query("DELETE FROM job_runs WHERE started_at < ?").run(before).changes;
  }

  register(def: JobDefinition): void {
    if (this.defs.has(def.name)) throw new Error(`job ${def.name} registered twice`);
    new Cron(def.pattern, { paused: true }).stop(); // validates the pattern at registration, not at first tick
    this.defs.set(def.name, def);
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

  /** Schedules every enabled job. Tests never call this unless they ask for live scheduling. */
  start(): void {
    for (const def of this.defs.values()) {
      if (!this.isEnabled(def.name) || this.crons.has(def.name)) continue;
      const cron = new Cron(def.pattern, { name: `herald:${def.name}`, protect: true, catch: false }, async () => {
        await this.execute(def, "schedule");
      });
      this.crons.set(def.name, cron);
    }
  }

  get started(): boolean {
    return this.crons.size > 0;
  }

  /** Stops scheduling and waits for runs in progress (croner's stop() does not cancel them). */
  async stop(): Promise<void> {
    for (const cron of this.crons.values()) cron.stop();
    this.crons.clear();
    await Promise.allSettled([...this.running]);
  }

  async runNow(name: string): Promise<JobRunResult> {
    const def = this.defs.get(name);
    if (!def) throw new Error(`unknown job ${name}; known: ${[...this.defs.keys()].join(", ")}`);
    return this.execute(def, "manual");
  }

  list(): JobSummary[] {
    return [...this.defs.values()].map((def) => {
      const cron = this.crons.get(def.name);
      const last = this.lastRun.get(def.name) as {
        started_at: string;
        finished_at: string | null;
        ok: number | null;
        error: string | null;
        duration_ms: number | null;
      } | null;
      const next = cron?.nextRun() ?? null;
      return {
        name: def.name,
        pattern: def.pattern,
        description: def.description,
        enabled: this.isEnabled(def.name),
        scheduled: Boolean(cron),
        next_run_at: next ? next.toISOString() : null,
        last_run: last ? { ...last, ok: last.ok === null ? null : last.ok === 1 } : null,
      };
    });
  }

  /**
   * When each registered job last finished successfully (ISO time, null if never): the newer of job_runs (any
   * process) and this process's own runs, so a quiet job's idle ticks count as the successes they are.
   */
  lastSuccesses(): Array<{ name: string; at: string | null }> {
    return [...this.defs.keys()].map((name) => {
      const stored = (this.lastOkRun.get(name) as { finished_at: string | null } | null)?.finished_at ?? null;
      const seen = this.lastOkAt.get(name) ?? null;
      return { name, at: stored === null ? seen : seen === null || stored > seen ? stored : seen };
    });
  }

  /** How each of these job runs was started (the console's audit runs show it); ids without a row (pruned) are absent. */
  triggersOf(ids: readonly number[]): Map<number, "schedule" | "manual"> {
    if (ids.length === 0) return new Map();
    const rows = this.deps.sqlite.query(`SELECT id, trigger FROM job_runs WHERE id IN (${ids.map(() => "?").join(", ")})`).all(...ids) as Array<{
      id: number;
      trigger: "schedule" | "manual";
    }>;
    return new Map(rows.map((r) => [r.id, r.trigger]));
  }

  /** Failed runs per job that started at or after `since` (ISO time); jobs without failures are absent. */
  failuresSince(since: string): Map<string, number> {
    // job_runs_started_idx serves the range; the few failed rows are grouped in memory.
    const rows = this.deps.sqlite.query("SELECT name, COUNT(*) AS n FROM job_runs WHERE started_at >= ? AND ok = 0 GROUP BY name").all(since) as Array<{
      name: string;
      n: number;
    }>;
    return new Map(rows.map((r) => [r.name, r.n]));
  }

  private async execute(def: JobDefinition, trigger: "schedule" | "manual"): Promise<JobRunResult> {
    const started = this.deps.clock.now();
    const t0 = performance.now();
    const deferInsert = def.quietWhenIdle === true && trigger === "schedule";
    let id = deferInsert ? 0 : (this.insertRun.get(def.name, started.toISOString(), trigger) as { id: number }).id;
    let error: string | null = null;
    let idle = false;
    const work = (async () => {
      try {
        const out = await def.run({ runId: deferInsert ? null : id, trigger });
        idle = Boolean(out && typeof out === "object" && out.idle);
      } catch (err) {
        error = err instanceof Error ? err.message : String(err);
        this.deps.log.error("job failed", { job: def.name, run_id: id, ...errorFields(err) });
      }
    })();
    this.running.add(work);
    try {
      await work;
    } finally {
      this.running.delete(work);
    }
    const durationMs = Math.round(performance.now() - t0);
    const finished = new Date(started.getTime() + durationMs);
    if (error === null) this.lastOkAt.set(def.name, finished.toISOString());
    if (deferInsert) {
      if (idle && error === null) return { name: def.name, ok: true, error: null, duration_ms: durationMs, run_id: 0 };
      id = (this.insertRun.get(def.name, started.toISOString(), trigger) as { id: number }).id;
    }
    this.finishRun.run(finished.toISOString(), error === null ? 1 : 0, error, durationMs, id);
    this.deps.onRun?.(def.name, error === null);
    return { name: def.name, ok: error === null, error, duration_ms: durationMs, run_id: id };
  }
}
