import { type Database, SQLiteError, type Statement } from "bun:sqlite";
import { type Param, type Queryable, type RunResult, SerializationFailure, type Store, StoreUnavailable, UniqueViolation } from "./port";

// The SQLite engine of the storage port, over bun:sqlite (never Bun's SQL SQLite adapter: a query issued while
// another request's transaction is open runs inside it). One writer connection; async transactions are queued on
// it so that they never interleave (BEGIN IMMEDIATE … COMMIT, one at a time), and a write outside a transaction
// takes its turn in the same queue, and transactions arriving together share one commit (group commit, below).
// Reads outside a transaction go to a separate reader connection when the database is a file (WAL: they see
// committed data only, never a transaction in progress); for :memory: they queue like writes. Statements are
// prepared once per connection and SQL text.

type Binding = string | number | boolean | null | Uint8Array;

class Statements {
  private readonly cache = new Map<string, Statement>();
  constructor(private readonly db: Database) {}
  of(sql: string): Statement {
    let s = this.cache.get(sql);
    if (!s) {
      s = this.db.prepare(sql);
      if (this.cache.size >= 1000) this.cache.clear();
      this.cache.set(sql, s);
    }
    return s;
  }
}

/** bun:sqlite's errors as the port's typed errors; anything else unchanged. */
function mapped(err: unknown): unknown {
  if (!(err instanceof SQLiteError)) return err;
  const code = String((err as { code?: unknown }).code ?? "");
  if (code === "SQLITE_CONSTRAINT_UNIQUE" || code === "SQLITE_CONSTRAINT_PRIMARYKEY") {
    // "UNIQUE constraint failed: table.a, table.b"
    return new UniqueViolation(err.message.replace(/^.*constraint failed: /, ""), { cause: err });
  }
  if (code.startsWith("SQLITE_BUSY") || code.startsWith("SQLITE_LOCKED")) return new SerializationFailure(err.message, { cause: err });
  if (code.startsWith("SQLITE_IOERR") || code.startsWith("SQLITE_CANTOPEN") || code === "SQLITE_FULL") return new StoreUnavailable(err.message, { cause: err });
  return err;
}

function handleOf(statements: Statements): Queryable {
  const call = <T>(f: () => T): Promise<T> => {
    try {
      return Promise.resolve(f());
    } catch (err) {
      return Promise.reject(mapped(err));
    }
  };
  return {
    all: <T>(sql: string, params: readonly Param[] = []) => call(() => statements.of(sql).all(...(params as Binding[])) as T[]),
    get: <T>(sql: string, params: readonly Param[] = []) => call(() => (statements.of(sql).get(...(params as Binding[])) as T | null) ?? null),
    run: (sql: string, params: readonly Param[] = []) => call((): RunResult => ({ changes: statements.of(sql).run(...(params as Binding[])).changes })),
  };
}

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
  private readonly writer: Queryable;
  private readonly reader: Queryable | null;
  /** Work waiting for the writer: transactions and lone writes, taken in batches, each batch in a turn of its own. */
  private pending: Pending[] = [];
  private readonly readOnly = new Map<string, boolean>();
  private scheduled = false;
  private running: Promise<void> | null = null;
  /** Batches committed (one BEGIN IMMEDIATE … COMMIT each) and transactions in them, for tests and benchmarks. */
  commits = 0;
  transactions = 0;

  /**
   * `db`: the writer connection (today's ctx.db.sqlite). `readerDb`: a second connection on the same file for
   * reads outside transactions; null for :memory: (reads then queue behind the writer).
   */
  constructor(
    private readonly db: Database,
    private readonly readerDb: Database | null = null,
  ) {
    this.writer = handleOf(new Statements(db));
    this.reader = readerDb ? handleOf(new Statements(readerDb)) : null;
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

  private async runBatch(batch: Pending[]): Promise<void> {
    try {
      this.db.exec("BEGIN IMMEDIATE");
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
      this.db.exec("SAVEPOINT herald_tx");
      try {
        outcomes.push({ ok: true, value: await p.fn(this.writer) });
        this.db.exec("RELEASE herald_tx");
      } catch (err) {
        this.db.exec("ROLLBACK TO herald_tx");
        this.db.exec("RELEASE herald_tx");
        outcomes.push({ ok: false, error: mapped(err) });
      }
    }
    clearImmediate(watch);
    if (turned) {
      if (this.db.inTransaction) this.db.exec("ROLLBACK");
      const err = new BodyAwaitedOutsideStore();
      for (const p of batch) p.reject(err);
      return;
    }
    try {
      this.db.exec("COMMIT");
    } catch (err) {
      if (this.db.inTransaction) this.db.exec("ROLLBACK");
      for (const p of batch) p.reject(mapped(err));
      return;
    }
    this.commits += 1;
    this.transactions += batch.length;
    batch.forEach((p, i) => {
      const o = outcomes[i]!;
      if (o.ok) p.resolve(o.value);
      else p.reject(o.error);
    });
  }

  all<T = Record<string, unknown>>(sql: string, params?: readonly Param[]): Promise<T[]> {
    return this.reader && this.readsOnly(sql) ? this.reader.all<T>(sql, params) : this.queued((w) => w.all<T>(sql, params));
  }

  get<T = Record<string, unknown>>(sql: string, params?: readonly Param[]): Promise<T | null> {
    return this.reader && this.readsOnly(sql) ? this.reader.get<T>(sql, params) : this.queued((w) => w.get<T>(sql, params));
  }

  /**
   * Whether a statement only reads (it may go to the reader connection): a SELECT, or a WITH whose statement does
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

  tx<T>(fn: (t: Queryable) => Promise<T>): Promise<T> {
    return this.queued(fn);
  }

  async ping(): Promise<void> {
    try {
      this.db.query("SELECT 1").get();
    } catch (err) {
      throw new StoreUnavailable(`SQLite does not answer: ${(err as Error).message}`, { cause: err });
    }
  }

  async version(): Promise<string> {
    return `SQLite ${(this.db.query("SELECT sqlite_version() AS v").get() as { v: string }).v}`;
  }

  async close(): Promise<void> {
    while (this.running || this.scheduled || this.pending.length) await (this.running ?? new Promise((r) => setImmediate(r)));
    this.readerDb?.close();
  }
}
