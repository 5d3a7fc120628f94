import type { Database, Statement } from "bun:sqlite";
import { statSync } from "node:fs";
import { StoreHealth } from "./health";
import { ApartReader, type CheckpointResult } from "./apart";
import { WorkerCheckpoints } from "./sqlite-checkpoints";
import { Handle, mapped, Statements } from "./sqlite-statements";
import { type ApartTask, type Param, type Queryable, type RunResult, type Store, StoreUnavailable, type TxOptions } from "./port";

// The SQLite engine of the storage port, over bun:sqlite (never Bun's SQL SQLite adapter: a query issued while
// another request's transaction is open runs inside it). One writer connection; async transactions are queued on
// it so that they never interleave (BEGIN IMMEDIATE … COMMIT, one at a time), and a write outside a transaction
// takes its turn in the same queue, and transactions arriving together share one commit (group commit, below).
// Reads outside a transaction run on the same connection at once (between batches it is never inside one; see the
// constructor). Statements are prepared once per SQL text (src/db/sqlite-statements.ts).

interface Pending {
  fn: (t: Queryable) => Promise<unknown>;
  resolve: (v: unknown) => void;
  reject: (e: unknown) => void;
}

/** A transaction body held the writer across a turn of the event loop (it awaited something other than the store). */
export class BodyAwaitedOutsideStore extends Error {
  constructor() {
    super(
      "a storage-port transaction body awaited something other than the store (network, a timer, a lock): on SQLite that would let other code write inside it, so the batch was rolled back",
    );
    this.name = "BodyAwaitedOutsideStore";
  }
}

export class SqliteStore implements Store {
  readonly dialect = "sqlite" as const;
  /** SQLite is in this process: its outages are a full disk or a locked file, reported like PostgreSQL's. */
  readonly health = new StoreHealth();
  private readonly writer: Queryable;
  private readonly statements: Statements;
  /** Work waiting for the writer: transactions and lone writes, taken in batches, each batch in a turn of its own. */
  private pending: Pending[] = [];
  private readonly readOnly = new Map<string, boolean>();
  /** The batch's own statements, prepared once: exec() would parse each of them again for every transaction. */
  private readonly control: Record<"begin" | "savepoint" | "release" | "rollbackTo" | "commit" | "rollback", Statement>;
  /**
   * `PRAGMA temp_store` around a grouped batch (MEMORY, then the connection's own setting back), or null when the
   * connection keeps temporary storage in memory already. See runBatch.
   */
  private readonly journalInMemory: { on: string; off: string } | null;
  private scheduled = false;
  private running: Promise<void> | null = null;
  /** Batches committed (one BEGIN IMMEDIATE … COMMIT each) and transactions in them, for tests and benchmarks. */
  commits = 0;
  transactions = 0;
  /** The read worker, once a read went apart (src/db/apart.ts). */
  reader: ApartReader | null = null;

  /**
   * `db`: the one connection (a SQLite start also reads it synchronously before the store exists). Reads outside
   * a transaction run on it at once, not queued: a batch runs from BEGIN to COMMIT within one turn of the event
   * loop (see queued()), so whenever other code runs the connection is between transactions and a read sees
   * committed data only. A second, reader connection was measured slower (the signed-credit loop: about 5 % fewer
   * credits/s, bench/README.md "Storage port"): it must re-read the WAL index after every commit of the writer.
   */
  constructor(
    private readonly db: Database,
    /** The file (for sizeBytes; ":memory:" has none) and what closes the connection once the queue is empty. */
    private file: { path: string; close(): void } | null = null,
  ) {
    this.statements = new Statements(db);
    this.writer = new Handle(this.statements);
    this.control = {
      begin: db.prepare("BEGIN IMMEDIATE"),
      savepoint: db.prepare("SAVEPOINT herald_tx"),
      release: db.prepare("RELEASE herald_tx"),
      rollbackTo: db.prepare("ROLLBACK TO herald_tx"),
      commit: db.prepare("COMMIT"),
      rollback: db.prepare("ROLLBACK"),
    };
    const tempStore = (db.query("PRAGMA temp_store").get() as { temp_store: number }).temp_store;
    // Run with exec, never as prepared statements: SQLite applies this PRAGMA when it compiles it, so a prepared
    // one takes effect once, when prepared, not each time it runs. exec compiles it each time (~0.3 µs).
    this.journalInMemory = tempStore === 2 ? null : { on: "PRAGMA temp_store = MEMORY", off: `PRAGMA temp_store = ${tempStore}` };
  }

  /**
   * Group commit: the transactions that arrive while a batch runs share the next BEGIN IMMEDIATE, each inside its
   * own SAVEPOINT — one that throws is rolled back to its savepoint alone — and all are answered after the one
   * COMMIT, so none is reported done before it is durable. One fsync for many transactions is what keeps the
   * credit path fast.
   *
   * Why a batch starts in a turn of its own (setImmediate): the writer connection is shared with code that still
   * writes synchronously (ctx.db.sqlite), and a transaction stays open across its body's awaits. A batch that
   * starts with an empty microtask queue, whose bodies await only this store (every call here resolves at once),
   * runs from BEGIN to COMMIT with nothing else in the queue — no other request's code can run, and so none can
   * write inside it or have its write rolled back with it. A body that awaits anything else (the network, a timer)
   * breaks that; the batch notices the turn it lost and is rolled back (BodyAwaitedOutsideStore).
   */
  private queued<T>(fn: (t: Queryable) => Promise<T>): Promise<T> {
    return new Promise<T>((resolve, reject) => {
      this.pending.push({ fn, resolve: resolve as (v: unknown) => void, reject });
      this.schedule();
    });
  }

  private schedule(): void {
    if (this.scheduled || this.running) return;
    this.scheduled = true;
    setImmediate(() => {
      this.scheduled = false;
      const batch = this.pending;
      this.pending = [];
      this.running = this.runBatch(batch).finally(() => {
        this.running = null;
        if (this.pending.length) this.schedule();
      });
    });
  }

  /**
   * One batch: BEGIN IMMEDIATE, each transaction in a SAVEPOINT of its own, one COMMIT. A batch of one needs no
   * savepoint: the transaction is the batch, and a body that throws rolls it back whole.
   *
   * A savepoint keeps the pages its transaction changes in a sub-journal, to undo them if the body throws. SQLite
   * keeps a sub-journal in memory only up to 64 KiB unless temporary storage is in memory; a credit changes about
   * fifteen pages (60 KiB and more), so under load the journal went to a temporary file and every grouped credit
   * paid ~30 extra pwrite calls: the credit's statements as a grouped loop took 75–78 µs against 64–66 µs with the
   * journal in memory (bench/README.md, "Sub-journal in memory"). So a grouped batch runs with temp_store=MEMORY,
   * restored after the batch: reads outside a transaction (big sorts of the exports) keep their temporary files,
   * and a sub-journal in memory is emptied at each RELEASE, so it holds one transaction's pages at most.
   */
  private async runBatch(batch: Pending[]): Promise<void> {
    const grouped = batch.length > 1;
    const inMemory = grouped && this.journalInMemory !== null && this.setTempStore(this.journalInMemory.on);
    try {
      await this.runInTransaction(batch, grouped);
    } finally {
      if (inMemory) this.setTempStore(this.journalInMemory!.off);
    }
  }

  /**
   * Whether the setting took. It is a matter of speed only, so a connection that refuses it (closed, with prepared
   * statements still running on it, as close() leaves it) runs the batch as it is.
   */
  private setTempStore(pragma: string): boolean {
    try {
      this.db.exec(pragma);
      return true;
    } catch {
      return false;
    }
  }

  /** Ends the open transaction without its changes; SQLite may have ended it already (an I/O error, a full disk). */
  private rollback(): void {
    try {
      this.control.rollback.run();
    } catch {
      // no transaction left to roll back
    }
  }

  private async runInTransaction(batch: Pending[], grouped: boolean): Promise<void> {
    try {
      this.control.begin.run();
    } catch (err) {
      for (const p of batch) p.reject(mapped(err));
      return;
    }
    // Set when the event loop turns while the batch is open: some body awaited outside the store.
    let turned = false;
    const watch = setImmediate(() => {
      turned = true;
    });
    const outcomes: Array<{ ok: true; value: unknown } | { ok: false; error: unknown }> = [];
    for (const p of batch) {
      if (grouped) this.control.savepoint.run();
      try {
        outcomes.push({ ok: true, value: await p.fn(this.writer) });
        if (grouped) this.control.release.run();
      } catch (err) {
        if (grouped) {
          this.control.rollbackTo.run();
          this.control.release.run();
        }
        outcomes.push({ ok: false, error: mapped(err) });
      }
    }
    clearImmediate(watch);
    if (turned) {
      this.rollback();
      const err = new BodyAwaitedOutsideStore();
      for (const p of batch) p.reject(err);
      return;
    }
    if (!grouped && !outcomes[0]!.ok) {
      this.rollback();
      batch[0]!.reject((outcomes[0] as { error: unknown }).error);
      return;
    }
    try {
      this.control.commit.run();
    } catch (err) {
      this.rollback();
      for (const p of batch) p.reject(mapped(err));
      return;
    }
    this.commits += 1;
    this.transactions += batch.length;
    this.health.counts.commits++;
    this.health.counts.transactions += batch.length;
    batch.forEach((p, i) => {
      const o = outcomes[i]!;
      if (o.ok) p.resolve(o.value);
      else p.reject(o.error);
    });
  }

  all<T = Record<string, unknown>>(sql: string, params?: readonly Param[]): Promise<T[]> {
    return this.readsOnly(sql) ? this.writer.all<T>(sql, params) : this.queued((w) => w.all<T>(sql, params));
  }

  get<T = Record<string, unknown>>(sql: string, params?: readonly Param[]): Promise<T | null> {
    return this.readsOnly(sql) ? this.writer.get<T>(sql, params) : this.queued((w) => w.get<T>(sql, params));
  }

  /**
   * Whether a statement only reads (it may run at once, outside the queue): a SELECT, or a WITH whose statement does
   * not write. An `INSERT … RETURNING` asked for with get() is a write and takes its turn on the writer.
   */
  private readsOnly(sql: string): boolean {
    let r = this.readOnly.get(sql);
    if (r === undefined) {
      const head = /^\s*(\w+)/.exec(sql)?.[1]?.toUpperCase();
      r = head === "SELECT" || (head === "WITH" && !/\b(INSERT|UPDATE|DELETE|REPLACE)\b/i.test(sql));
      if (this.readOnly.size >= 2000) this.readOnly.clear();
      this.readOnly.set(sql, r);
    }
    return r;
  }

  run(sql: string, params?: readonly Param[]): Promise<RunResult> {
    return this.queued((w) => w.run(sql, params));
  }

  tx<T>(fn: (t: Queryable) => Promise<T>, _options?: TxOptions): Promise<T> {
    return this.queued(fn);
  }

  async ping(_options?: { timeoutMs?: number }): Promise<void> {
    try {
      this.db.query("SELECT 1").get();
    } catch (err) {
      throw new StoreUnavailable(`SQLite does not answer: ${(err as Error).message}`, { cause: err });
    }
  }

  async version(): Promise<string> {
    return `SQLite ${(this.db.query("SELECT sqlite_version() AS v").get() as { v: string }).v}`;
  }

  /** A read over a growing table, in the file's read worker (src/db/apart.ts); in place for a database in memory. */
  apart<A, R>(task: ApartTask<A, R>, args: A): Promise<R> {
    const path = this.file?.path;
    if (!path || path === ":memory:") return task.run(this, args);
    this.reader ??= new ApartReader(path);
    return this.reader.run(task, args);
  }

  /**
   * Moves the WAL's checkpoints off this thread (`herald serve`; src/db/sqlite-checkpoints.ts): SQLite's automatic
   * checkpoint is turned off here and the read worker runs a PASSIVE one every `intervalMs` after writes.
   */
  checkpointApart(intervalMs = 1_000, onFailure: (err: unknown) => void = () => {}): void {
    const path = this.file?.path;
    if (!path || path === ":memory:" || this.checkpoints) return;
    this.reader ??= new ApartReader(path);
    this.checkpoints = new WorkerCheckpoints(
      this.reader,
      () => (this.file ? this.commits : null),
      (on) => this.db.exec(`PRAGMA wal_autocheckpoint = ${on ? 1000 : 0}`),
      onFailure,
    );
    this.checkpoints.start(intervalMs);
  }

  /** The worker's latest checkpoint (frames in the WAL, written back), for tests and benchmarks. */
  get lastCheckpoint(): CheckpointResult | null {
    return this.checkpoints?.last ?? null;
  }

  private checkpoints: WorkerCheckpoints | null = null;

  async sizeBytes(): Promise<number> {
    if (!this.file || this.file.path === ":memory:") return 0;
    let total = 0;
    for (const suffix of ["", "-wal"]) {
      try {
        total += statSync(this.file.path + suffix).size;
      } catch {
        // the WAL may not exist between checkpoints
      }
    }
    return total;
  }

  /** Waits for queued transactions, then closes the connection (a WAL checkpoint first, src/db/client.ts). */
  async close(): Promise<void> {
    while (this.running || this.scheduled || this.pending.length) await (this.running ?? new Promise((r) => setImmediate(r)));
    this.checkpoints?.stop();
    this.checkpoints = null;
    const file = this.file;
    this.file = null;
    await this.reader?.close();
    if (file) {
      this.statements.finalizeAll();
      for (const s of Object.values(this.control)) s.finalize();
    }
    file?.close();
  }
}
