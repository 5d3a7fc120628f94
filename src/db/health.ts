// What an operator sees of the database's availability: one warning when it stops answering, one info line when
// it is back (how long it was gone and how many requests were answered 503 meanwhile), and the counters /metrics
// publishes (deadlines hit, transactions retried, connections discarded). The engines report into it; the HTTP
// core counts its 503s; jobs ask it whether to skip a tick. Nothing here touches the database itself.

import type { Logger } from "../log";

/** While the database is unavailable, a job tick is tried again after this long at first, doubling up to the cap. */
const JOB_PROBE_FIRST_MS = 1_000;
const JOB_PROBE_MAX_MS = 30_000;
/**
 * An outage ends at the first success that comes this long after the last failure: while connections fail one by
 * one (a pool half dead, a server stopping process by process) a lucky statement does not end it, to begin again
 * a moment later with a second warning.
 */
const RECOVERY_QUIET_MS = 1_000;
/** Jobs' "skipped" line is written at most this often. */
const SKIP_LOG_EVERY_MS = 60_000;
/** While an outage is on, the engine's own check (StoreHealth.recoveryCheck) runs this often. */
const RECOVERY_CHECK_MS = 500;

export class StoreHealth {
  /** Set once the context's logger exists. */
  log: Pick<Logger, "warn" | "info"> | null = null;
  /** Date.now() when the current outage began; null while the database answers. */
  private downSince: number | null = null;
  private lastFailure = 0;
  private reason = "";
  private refusedRequests = 0;
  private skippedTicks = 0;
  /** Kept across outages: a job that met a deadline just before the engine declared the outage has logged already. */
  private lastSkipLog = 0;
  private nextJobProbe = 0;
  private probeGap = JOB_PROBE_FIRST_MS;
  /** Counters for /metrics (monotonic over the process's life). */
  readonly counts = {
    outages: 0,
    deadlines: 0,
    retries: 0,
    discarded: 0,
    refused: 0,
    shed: 0,
    exhausted: 0,
    /** PostgreSQL: statements sent, BEGIN/SAVEPOINT/COMMIT included. */
    statements: 0,
    /**
     * PostgreSQL: waits for the server. A statement sent while another of the same transaction is still unanswered
     * rides in that one's round trip (Bun's client pipelines them); every statement outside a transaction is one.
     */
    roundTrips: 0,
    /** Commits (PostgreSQL COMMITs, SQLite batches), and the transactions they carried (more than one: a group). */
    commits: 0,
    transactions: 0,
    /** PostgreSQL: batches whose bodies ran together (TxOptions.together), redone or not. */
    together: 0,
    /** PostgreSQL: batches run together (TxOptions.together), or one key's in a row, that one failed body sent back to run one at a time. */
    redone: 0,
  };
  /**
   * The PostgreSQL pool as /metrics shows it (null on SQLite, which has no pool): its size and the statements and
   * transactions holding or waiting for one of its connections now. Kept by the engine, read at scrape time.
   */
  pool: { max: number; busy: number } | null = null;
  /**
   * Set by an engine that can ask its server itself (PostgreSQL: a `SELECT 1` through the pool, which reports its
   * own outcome here). Run every RECOVERY_CHECK_MS while an outage is on, one at a time, so that the outage ends
   * within a second or so of the server answering again even on a quiet instance: otherwise only the next request or
   * job tick would notice, and jobs are held back by the outage itself (a lost session left a quiet instance "down"
   * with its jobs skipped for as long as nothing else came).
   */
  recoveryCheck: (() => Promise<unknown>) | null = null;
  private checking: ReturnType<typeof setInterval> | null = null;

  constructor(private readonly now: () => number = Date.now) {}

  get down(): boolean {
    return this.downSince !== null;
  }

  /** A statement or transaction could not reach the database (lost connection, deadline, refused). */
  failed(reason: string): void {
    this.lastFailure = this.now();
    if (this.downSince !== null) return;
    this.downSince = this.lastFailure;
    this.reason = reason;
    this.refusedRequests = 0;
    this.skippedTicks = 0;
    this.probeGap = JOB_PROBE_FIRST_MS;
    this.nextJobProbe = this.downSince + this.probeGap;
    this.counts.outages++;
    this.log?.warn("database unavailable", { reason });
    this.checkUntilBack();
  }

  /** Runs recoveryCheck while the outage lasts (never two at once); stops by itself when it has ended. */
  private checkUntilBack(): void {
    if (!this.recoveryCheck || this.checking) return;
    let inFlight = false;
    this.checking = setInterval(() => {
      const check = this.recoveryCheck;
      if (this.downSince === null || !check) {
        clearInterval(this.checking!);
        this.checking = null;
        return;
      }
      if (inFlight) return;
      inFlight = true;
      // Its outcome reaches failed/succeeded through the engine; only the turn is kept here.
      void check()
        .catch(() => {})
        .finally(() => (inFlight = false));
    }, RECOVERY_CHECK_MS);
    this.checking.unref?.();
  }

  /** A statement or transaction completed: ends an outage, if one was on. Cheap enough for every statement. */
  succeeded(): void {
    if (this.downSince === null) return;
    const t = this.now();
    if (t - this.lastFailure < RECOVERY_QUIET_MS) return;
    const downMs = t - this.downSince;
    this.downSince = null;
    this.log?.info("database available again", {
      down_ms: downMs,
      requests_refused: this.refusedRequests,
      job_ticks_skipped: this.skippedTicks,
      reason: this.reason,
    });
  }

  /** The HTTP core answered a request 503 db_unavailable. */
  refusedRequest(): void {
    this.counts.refused++;
    if (this.downSince !== null) this.refusedRequests++;
  }

  /**
   * Whether a scheduled job tick should run now. While the database is unavailable, ticks are skipped except one
   * now and then (after 1 s, 2 s, 4 s … up to 30 s), whose outcome ends the outage or extends the wait; the skip is
   * logged at most once a minute.
   */
  jobMayRun(job: string): boolean {
    if (this.downSince === null) return true;
    const t = this.now();
    if (t >= this.nextJobProbe) {
      this.probeGap = Math.min(this.probeGap * 2, JOB_PROBE_MAX_MS);
      this.nextJobProbe = t + this.probeGap;
      return true;
    }
    this.skipped(job, this.reason);
    return false;
  }

  /**
   * A job failed because the database did not answer: one line a minute at most, not a stack per run. Whether an
   * outage began is the engine's to say (failed/succeeded): a job's deadline on a live server is not one, and on
   * SQLite nothing would ever end it.
   */
  jobFailedUnavailable(job: string, reason: string): void {
    this.skipped(job, reason);
  }

  /** A job tick skipped, or failed for the outage: counted, and logged at most once a minute. */
  private skipped(job: string, reason: string): void {
    this.skippedTicks++;
    const t = this.now();
    if (t - this.lastSkipLog < SKIP_LOG_EVERY_MS) return;
    this.lastSkipLog = t;
    this.log?.info("job skipped: database unavailable", { job, down_ms: this.downSince === null ? 0 : t - this.downSince, reason });
  }
}
