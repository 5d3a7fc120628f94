import { type Database, SQLiteError, type Statement } from "bun:sqlite";
import { type Param, type Queryable, type RunResult, SerializationFailure, StoreUnavailable, UniqueViolation, UnstorableText } from "./port";

// The SQLite engine's statements (src/db/sqlite-engine.ts queues the transactions): each SQL text prepared once on
// the connection, run at once, its errors mapped to the port's typed errors.

type Binding = string | number | boolean | null | Uint8Array;

export class Statements {
  private readonly cache = new Map<string, Statement>();
  constructor(private readonly db: Database) {}
  of(sql: string): Statement {
    let s = this.cache.get(sql);
    if (!s) {
      // Past 1,000 texts the cache starts again, its statements finalized now rather than left to the collector.
      if (this.cache.size >= 1000) this.finalizeAll();
      s = this.db.prepare(sql);
      this.cache.set(sql, s);
    }
    return s;
  }
  /**
   * Before the connection closes: bun:sqlite's close() is sqlite3_close_v2, which leaves a connection with live
   * statements open (a "zombie") until the garbage collector finalizes them, holding the file, its locks and its
   * WAL index in this process meanwhile. A test that reopened the file (moved aside by restore) read that stale
   * WAL index: 1 run in ~20 failed with SQLITE_IOERR_SHORT_READ.
   */
  finalizeAll(): void {
    for (const s of this.cache.values()) s.finalize();
    this.cache.clear();
  }
}

/** bun:sqlite's errors as the port's typed errors; anything else unchanged. */
export function mapped(err: unknown): unknown {
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

/**
 * Text holding U+0000 (NUL) is refused as PostgreSQL refuses it (its text cannot hold one), written or read, so a
 * request gets the same answer on either engine (400, src/http/errors/error-answers.ts) and a SQLite database never holds
 * what a move to PostgreSQL could not copy. One `includes` per text parameter: 0.15–0.3 µs for the eight statements
 * of a credit (a loop), against ~130 µs for the credit.
 */
function refuseNul(params: readonly Param[]): void {
  for (let i = 0; i < params.length; i++) {
    const p = params[i];
    if (typeof p === "string" && p.includes("\u0000")) throw new UnstorableText("a text parameter contains U+0000 (NUL)");
  }
}

/** Statements run at once on the connection; each answer is an already-settled promise (no closure per call). */
export class Handle implements Queryable {
  readonly dialect = "sqlite" as const;
  constructor(private readonly statements: Statements) {}

  all<T>(sql: string, params: readonly Param[] = []): Promise<T[]> {
    try {
      refuseNul(params);
      return Promise.resolve(this.statements.of(sql).all(...(params as Binding[])) as T[]);
    } catch (err) {
      return Promise.reject(mapped(err));
    }
  }

  get<T>(sql: string, params: readonly Param[] = []): Promise<T | null> {
    try {
      refuseNul(params);
      return Promise.resolve((this.statements.of(sql).get(...(params as Binding[])) as T | null) ?? null);
    } catch (err) {
      return Promise.reject(mapped(err));
    }
  }

  run(sql: string, params: readonly Param[] = []): Promise<RunResult> {
    try {
      refuseNul(params);
      return Promise.resolve({ changes: this.statements.of(sql).run(...(params as Binding[])).changes });
    } catch (err) {
      return Promise.reject(mapped(err));
    }
  }
}
