import { SQL } from "bun";
import { within } from "../clock";
import { StoreHealth } from "./health";
import { type ApartTask, type Param, type Queryable, type RunResult, type Store, StoreUnavailable, type TxOptions } from "./port";

// The PostgreSQL engine of the storage port, over Bun's built-in SQL client (the fastest PostgreSQL client
// measured here: docs/postgres.md). The SQL callers write once with `?` placeholders is translated to `$1…$n` once per
// statement text (placeholders inside quotes, identifiers and comments are left alone); int8 values come back as
// JavaScript numbers, and one past 2^53 is refused instead of rounded; SQLSTATEs become the port's typed errors.
// Pool size DATABASE_POOL_MAX (default 10); every session runs with statement_timeout and
// idle_in_transaction_session_timeout, so a stuck query or a forgotten transaction cannot hold a connection.
// Those fire on the server, which cannot help when the server itself stops answering (a frozen host, a network
// partition, a failover in progress): so every interaction also has a deadline on Herald's side — connecting,
// waiting for a pooled connection, each statement, each transaction as a whole — and one that expires is a
// StoreUnavailable (503 db_unavailable with Retry-After), never a hang. docs/postgres.md "Deadlines".
// Transactions run in src/db/postgres-batches.ts: their statements pipelined, and short request transactions with
// a group key sharing a COMMIT (group commit). docs/postgres.md "Speed".

export interface PostgresOptions {
  url: string;
  poolMax?: number;
  /** Grouped transactions' batches at once (DATABASE_BATCH_SLOTS, default 3); at most poolMax − 1, at least 1. */
  batchSlots?: number;
  statementTimeoutMs?: number;
  idleInTransactionTimeoutMs?: number;
  /** pg_stat_activity's application_name for this pool's sessions (which instance a connection belongs to). */
  applicationName?: string;
  /** Opening a connection (TCP, TLS, authentication), rounded up to whole seconds. Default 3000. */
  connectTimeoutMs?: number;
  /** A transaction's wait for a free pooled connection. Default 2000. */
  acquireTimeoutMs?: number;
  /** One statement outside a transaction, its wait for a connection included. Default 5000. */
  queryTimeoutMs?: number;
  /** One transaction from its call to its commit, its wait for a connection included. Default 5000. */
  transactionTimeoutMs?: number;
}

import { BatchRunner, type Member } from "./postgres-batches";
import {
  CANCEL_ANSWER_MS,
  type Cancellable,
  deadlineError,
  handleOf,
  mapped,
  notWritable,
  outcomeOf,
  toDollarPlaceholders,
  WRITABLE_CHECK,
} from "./postgres-wire";

/** While the server is unreachable, the background probe tries it again this long after a failed try. */
const PROBE_PAUSE_MS = 250;
/** How long the database's size is answered from the last read (sizeBytes). */
const SIZE_FRESH_MS = 30_000;

export class PostgresStore implements Store {
  readonly dialect = "postgres" as const;
  readonly health = new StoreHealth();
  private sql: SQL;
  private readonly translated = new Map<string, string>();
  private readonly pool: Queryable;
  private readonly queryTimeoutMs: number;
  private readonly transactionTimeoutMs: number;
  private readonly acquireTimeoutMs: number;
  private readonly makeSql: () => SQL;
  /** Date.now() since when the server has not been reached (see admit); null while it answers. */
  private unreachableSince: number | null = null;
  /** What closed the gate: the failure that began the outage, then the probe's latest (a read-only server says so). */
  private unreachableReason = "";
  /** The background probe while the server is unreachable (see probe). */
  private prober: Promise<void> | null = null;
  private closed = false;
  private readonly batches: BatchRunner;
  private readonly makeProbeSql: () => SQL;
  /** The database's size as last read, and whether a read is under way (sizeBytes). */
  private size: { bytes: number; at: number; reading: boolean } | null = null;

  constructor(options: PostgresOptions) {
    const statementTimeout = options.statementTimeoutMs ?? 30_000;
    const idleInTx = options.idleInTransactionTimeoutMs ?? 60_000;
    this.queryTimeoutMs = options.queryTimeoutMs ?? 5_000;
    this.transactionTimeoutMs = options.transactionTimeoutMs ?? 5_000;
    this.acquireTimeoutMs = options.acquireTimeoutMs ?? 2_000;
    // Bun's connection deadline is in whole seconds.
    const connectSeconds = Math.max(1, Math.ceil((options.connectTimeoutMs ?? 3_000) / 1000));
    this.makeSql = () =>
      new SQL({
        url: options.url,
        max: options.poolMax ?? 10,
        bigint: true,
        connectionTimeout: connectSeconds,
        connection: {
          statement_timeout: String(statementTimeout),
          idle_in_transaction_session_timeout: String(idleInTx),
          ...(options.applicationName ? { application_name: options.applicationName } : {}),
        },
      } as ConstructorParameters<typeof SQL>[0]);
    this.makeProbeSql = () =>
      new SQL({
        url: options.url,
        max: 1,
        connectionTimeout: connectSeconds,
        connection: { statement_timeout: String(this.queryTimeoutMs) },
      } as ConstructorParameters<typeof SQL>[0]);
    this.sql = this.makeSql();
    this.health.pool = { max: options.poolMax ?? 10, busy: 0 };
    this.batches = new BatchRunner(
      {
        health: this.health,
        acquireTimeoutMs: this.acquireTimeoutMs,
        sql: () => this.sql,
        translate: (text) => this.translate(text),
        cancel: (q) => this.cancel(q),
        watchCancelled: (q, wedgedMs, wedged) => this.watchCancelled(q, wedgedMs, wedged),
        reached: (outcome, reason) => this.reached(outcome, reason),
        closed: () => this.closed,
      },
      options.poolMax ?? 10,
      options.batchSlots ?? 3,
    );
    this.pool = handleOf((text, params) => this.statement(text, params, this.queryTimeoutMs));
    // While the gate is closed its probe is at work (it ends the outage itself); else a statement of our own, whose
    // answer (statement → reached) ends the outage once the quiet interval has passed.
    this.health.recoveryCheck = async () => {
      if (this.unreachableSince === null && !this.closed) await this.statement("SELECT 1", [], this.queryTimeoutMs);
    };
  }

  private translate(text: string): string {
    let t = this.translated.get(text);
    if (t === undefined) {
      t = toDollarPlaceholders(text);
      if (this.translated.size >= 2000) this.translated.clear();
      this.translated.set(text, t);
    }
    return t;
  }

  /**
   * One statement on the pool, answered within `ms` (waiting for a connection included) or refused with
   * StoreUnavailable. At the deadline Bun cancels it: one not yet sent never runs; one running is cancelled on the
   * server (a CancelRequest on a second connection). A server that answers neither within another `ms` holds that
   * connection for good (a frozen host, a partition), so the pool is replaced then: see `abandonPool`.
   */
  private async statement(text: string, params: readonly Param[], ms: number): Promise<unknown> {
    this.admit();
    this.health.counts.statements++;
    this.health.counts.roundTrips++;
    const sql = this.sql;
    const q = sql.unsafe(this.translate(text), params as Param[]) as unknown as Cancellable;
    const pool = this.health.pool!;
    pool.busy++;
    let timer: ReturnType<typeof setTimeout> | undefined;
    const expired = new Promise<never>((_, reject) => {
      timer = setTimeout(() => {
        this.health.counts.deadlines++;
        reject(deadlineError("a statement", ms, "DATABASE_QUERY_TIMEOUT_MS"));
        this.cancel(q);
        this.watchCancelled(q, ms, () => this.abandonPool(sql, `a statement cancelled after ${ms} ms had no answer ${ms} ms later`));
      }, ms);
    });
    try {
      const result = await Promise.race([q, expired]);
      this.reached("answered");
      return result;
    } catch (err) {
      const e = mapped(err);
      this.reached(outcomeOf(e), (e as Error).message);
      throw e;
    } finally {
      clearTimeout(timer);
      // Counted until Herald stops waiting: a statement cancelled at its deadline leaves the count then, even if the
      // server takes a moment longer to let its connection go (the gauge may briefly read low, never stay high).
      pool.busy--;
    }
  }

  /**
   * After a deadline cancelled `q`: a server that has not settled it within CANCEL_ANSWER_MS is unreachable (the
   * gate closes, the outage begins); one that has not settled it within `wedgedMs` holds its connection for good,
   * and `wedged` runs.
   */
  private watchCancelled(q: Promise<unknown>, wedgedMs: number, wedged: () => void): void {
    let settled = false;
    q.then(
      () => (settled = true),
      () => (settled = true),
    );
    setTimeout(() => {
      if (!settled) this.unreachable(`PostgreSQL answered neither a statement nor its cancellation within ${CANCEL_ANSWER_MS} ms`);
    }, CANCEL_ANSWER_MS).unref?.();
    setTimeout(() => {
      if (!settled) wedged();
    }, wedgedMs).unref?.();
  }

  /**
   * The gate in front of the server once it stopped answering: every interaction is refused at once (503) while a
   * background probe tries the server, and all go through again as soon as it answers. So requests fail in
   * microseconds instead of each waiting out its deadline, and a server coming back (a thawed host, a healed
   * partition) does not first have to work through a backlog of connection attempts its clients gave up on long
   * ago: Bun's pool opens all of its DATABASE_POOL_MAX connections for a single statement, so each try through the
   * pool left ten dead attempts in the server's queue (~40 ms each to work through on this 2-core VM), and in the
   * test of a 15 s freeze requests kept failing for 1.4–2.2 s after the server was back.
   */
  private admit(): void {
    if (this.unreachableSince === null) return;
    this.health.counts.shed++;
    throw new StoreUnavailable(
      `PostgreSQL has not been usable since ${new Date(this.unreachableSince).toISOString()} (${this.unreachableReason}); Herald tries it in the background and serves again as soon as it answers and takes writes`,
    );
  }

  /**
   * The outcome of an interaction: the server answered (even with an error of its own), was not reached (a lost or
   * refused connection), or a deadline ended the wait — then its cancellation tells (watchCancelled).
   */
  private reached(outcome: "answered" | "unreached" | "deadline", reason = ""): void {
    if (outcome === "answered") {
      this.unreachableSince = null;
      this.health.succeeded();
    } else if (outcome === "unreached") {
      this.unreachable(reason);
    }
  }

  /**
   * Tries the server while it is unreachable, one `SELECT 1` at a time, each on a connection of its own (a pool of
   * one, closed after the try), with the statement deadline; the first answer opens the gate.
   */
  private async probe(): Promise<void> {
    try {
      while (this.unreachableSince !== null && !this.closed) {
        const sql = this.makeProbeSql();
        // Not only an answer: a server that answers but takes no writes (read-only, a standby) keeps the gate closed.
        const q = sql.unsafe(WRITABLE_CHECK) as unknown as Promise<Array<{ recovering?: unknown; read_only?: unknown }>>;
        try {
          const rows = await within(q, this.queryTimeoutMs, () => deadlineError("a probe", this.queryTimeoutMs, "DATABASE_QUERY_TIMEOUT_MS"));
          const why = notWritable(rows[0]);
          if (why) throw new StoreUnavailable(why);
          this.unreachableSince = null;
          this.health.succeeded();
        } catch (err) {
          this.unreachableReason = (mapped(err) as Error).message;
          this.health.failed(this.unreachableReason);
          await Bun.sleep(PROBE_PAUSE_MS);
        } finally {
          sql.close({ timeout: 0 }).catch(() => {});
        }
      }
    } finally {
      this.prober = null;
    }
  }

  /**
   * Asks the server to stop `q` (a CancelRequest on a connection of its own), unless the server is known to be
   * unreachable: then the request could not arrive before the server is back, and every one sent meanwhile is a
   * connection the server must accept and fork a process for before it serves anyone again (measured here: ~40 ms
   * each on a busy 2-core VM, 20 of them delayed the first connection after a freeze by 0.9 s). The connection of
   * `q` is closed instead (abandonPool), and the server's own statement_timeout ends what runs on.
   */
  private cancel(q: Cancellable): void {
    if (this.unreachableSince === null) q.cancel();
  }

  /** The server is not reached: the gate closes, the background probe starts, and the outage is logged once. */
  private unreachable(reason: string): void {
    if (this.unreachableSince === null) this.unreachableReason = reason;
    this.unreachableSince ??= Date.now();
    this.health.failed(reason);
    if (!this.closed) this.prober ??= this.probe();
  }

  /**
   * Replaces the pool: its connections are closed at once (their queries fail with StoreUnavailable) and new ones
   * are opened on demand. Only when a connection is known to be wedged — the server answered neither a statement
   * nor its cancellation — so a healthy pool is never torn down for one slow statement.
   */
  private abandonPool(sql: SQL, why: string): void {
    if (this.sql !== sql) return;
    this.sql = this.makeSql();
    this.health.counts.discarded++;
    this.health.log?.warn("database connections discarded", { reason: why });
    sql.close({ timeout: 0 }).catch(() => {});
  }

  all<T = Record<string, unknown>>(text: string, params?: readonly Param[]): Promise<T[]> {
    return this.pool.all<T>(text, params);
  }

  get<T = Record<string, unknown>>(text: string, params?: readonly Param[]): Promise<T | null> {
    return this.pool.get<T>(text, params);
  }

  run(text: string, params?: readonly Param[]): Promise<RunResult> {
    return this.pool.run(text, params);
  }

  tx<T>(fn: (t: Queryable) => Promise<T>, options?: TxOptions): Promise<T> {
    const ms = options?.timeoutMs ?? this.transactionTimeoutMs;
    try {
      this.admit();
    } catch (err) {
      return Promise.reject(err);
    }
    return new Promise<T>((resolve, reject) => {
      const member: Member = {
        fn: fn as Member["fn"],
        resolve: resolve as Member["resolve"],
        reject,
        deadline: performance.now() + ms,
        ms,
        attempt: 1,
        group: options?.group ?? null,
        together: (options?.group !== undefined && options.together) || false,
        withCommit: options?.lastAnsweredWithCommit === true,
      };
      this.batches.start(member);
    });
  }

  async ping(options?: { timeoutMs?: number }): Promise<void> {
    let row: { recovering?: unknown; read_only?: unknown } | undefined;
    try {
      const rows = (await this.statement(WRITABLE_CHECK, [], options?.timeoutMs ?? this.queryTimeoutMs)) as Array<typeof row>;
      row = rows[0];
    } catch (err) {
      throw err instanceof StoreUnavailable ? err : new StoreUnavailable(`PostgreSQL does not answer: ${(err as Error).message}`, { cause: err });
    }
    const why = notWritable(row);
    if (why) throw new StoreUnavailable(why);
  }

  /** Statements leave this thread already: a read over a growing table runs on the pool as any read (src/db/apart.ts). */
  apart<A, R>(task: ApartTask<A, R>, args: A): Promise<R> {
    return task.run(this, args);
  }

  /**
   * pg_database_size stats every file of the database (1–5 ms on an empty one, more as relations and their 1 GB
   * segments add up), and /metrics asks on every scrape: the last size is answered at once, read again in the
   * background once it is SIZE_FRESH_MS old (only the first call waits for it).
   */
  async sizeBytes(): Promise<number> {
    const now = performance.now();
    if (this.size && now - this.size.at >= SIZE_FRESH_MS && !this.size.reading) {
      const kept = this.size;
      kept.reading = true;
      this.readSize()
        .then((bytes) => void (this.size = { bytes, at: performance.now(), reading: false }))
        .catch(() => void (kept.reading = false));
    }
    if (this.size) return this.size.bytes;
    const bytes = await this.readSize();
    this.size = { bytes, at: performance.now(), reading: false };
    return bytes;
  }

  private async readSize(): Promise<number> {
    return Number((await this.pool.get<{ n: number | string }>("SELECT pg_database_size(current_database()) AS n"))?.n ?? 0);
  }

  async version(): Promise<string> {
    const row = await this.pool.get<{ v: string }>("SELECT current_setting('server_version') AS v");
    return `PostgreSQL ${row?.v.split(" ")[0] ?? "(unknown)"}`;
  }

  async close(): Promise<void> {
    this.closed = true;
    this.health.recoveryCheck = null;
    this.batches.refuseWaiting(new StoreUnavailable("the database connection is closing"));
    await this.sql.close();
  }
}
