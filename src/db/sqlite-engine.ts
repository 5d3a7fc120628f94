import { type Database, SQLiteError, type Statement } from "bun:sqlite";
import { type Param, type Queryable, type RunResult, SerializationFailure, type Store, StoreUnavailable, UniqueViolation } from "./port";

// The SQLite engine of the storage port, over bun:sqlite (never Bun's SQL SQLite adapter: a query issued while
// another request's transaction is open runs inside it). One writer connection; async transactions are queued on
// it so that they never interleave (BEGIN IMMEDIATE … COMMIT, one at a time), and a write outside a transaction
// takes its turn in the same queue. Reads outside a transaction go to a separate reader connection when the
// database is a file (WAL: they see committed data only, never a transaction in progress); for :memory: they
// queue like writes. Statements are prepared once per connection and SQL text.
//
// Not yet here (issue 27, next step): group commit — transactions arriving together sharing one BEGIN IMMEDIATE
// with a SAVEPOINT each, as the idempotency store does today.

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

export class SqliteStore implements Store {
  readonly dialect = "sqlite" as const;
  private readonly writer: Queryable;
  private readonly reader: Queryable | null;
  /** The end of the writer's queue: each transaction (or lone write) starts when the one before it settled. */
  private tail: Promise<unknown> = Promise.resolve();

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

  private queued<T>(work: () => Promise<T>): Promise<T> {
    const result = this.tail.then(work, work);
    this.tail = result.catch(() => undefined);
    return result;
  }

  all<T = Record<string, unknown>>(sql: string, params?: readonly Param[]): Promise<T[]> {
    return this.reader ? this.reader.all<T>(sql, params) : this.queued(() => this.writer.all<T>(sql, params));
  }

  get<T = Record<string, unknown>>(sql: string, params?: readonly Param[]): Promise<T | null> {
    return this.reader ? this.reader.get<T>(sql, params) : this.queued(() => this.writer.get<T>(sql, params));
  }

  run(sql: string, params?: readonly Param[]): Promise<RunResult> {
    return this.queued(() => this.writer.run(sql, params));
  }

  tx<T>(fn: (t: Queryable) => Promise<T>): Promise<T> {
    return this.queued(async () => {
      try {
        this.db.exec("BEGIN IMMEDIATE");
      } catch (err) {
        throw mapped(err);
      }
      try {
        const out = await fn(this.writer);
        this.db.exec("COMMIT");
        return out;
      } catch (err) {
        if (this.db.inTransaction) this.db.exec("ROLLBACK");
        throw mapped(err);
      }
    });
  }

  async ping(): Promise<void> {
    try {
      this.db.query("SELECT 1").get();
    } catch (err) {
      throw new StoreUnavailable(`SQLite does not answer: ${(err as Error).message}`, { cause: err });
    }
  }

  async close(): Promise<void> {
    await this.tail;
    this.readerDb?.close();
  }
}
