import { Database, SQLiteError } from "bun:sqlite";
import type { Param, Queryable, RunResult } from "./port";
import { Statements } from "./sqlite-statements";

// The read worker's connections to the SQLite file (src/db/apart.ts; the worker's entry, which composes the domains'
// read tasks, is src/workers/read-worker.ts): a read-only one for the tasks, its statements each prepared once, and a
// read-write one used only to checkpoint the WAL. Opened on the first use, in the worker's own thread.

type Binding = string | number | boolean | null | Uint8Array;

export class SqliteWorkerConnections {
  private statements: Statements | null = null;
  private db: Database | null = null;
  private queryable: Queryable | null = null;
  /** The checkpointer's connection (read-write, used for nothing else): see checkpoint(). */
  private writer: Database | null = null;

  /**
   * A PASSIVE checkpoint: copies what the WAL holds into the database file as far as no reader needs the older pages,
   * waiting for no lock and holding no writer up. Run here instead of by SQLite's automatic checkpoint on the serving
   * thread, where each one (a thousand pages written back, then an fsync) held every request: 16–20 ms at 1 GB,
   * ~270 ms at 6.6 GB (bench scale, credits alone), and seconds after a backup's long read let the WAL grow.
   */
  checkpoint(path: string): { busy: number; log: number; checkpointed: number } {
    if (!this.writer) {
      this.writer = new Database(path, { readwrite: true, create: false, strict: true });
      this.writer.exec("PRAGMA busy_timeout = 0");
    }
    return this.writer.query("PRAGMA wal_checkpoint(PASSIVE)").get() as { busy: number; log: number; checkpointed: number };
  }

  closeAll(): void {
    // Finalized first: close() (sqlite3_close_v2) leaves a connection with live statements open until they are collected.
    this.statements?.finalizeAll();
    this.statements = null;
    this.db?.close();
    this.writer?.close();
    this.db = null;
    this.queryable = null;
    this.writer = null;
  }

  /** The read-only connection to `path` as a Queryable whose writes are refused (made on the first task). */
  reader(path: string): Queryable {
    if (this.queryable) return this.queryable;
    const db = new Database(path, { readonly: true, strict: true });
    // A reader waits for a checkpoint's brief lock rather than fail; it never holds the writer up (WAL).
    db.exec("PRAGMA busy_timeout = 5000");
    const statements = new Statements(db);
    this.db = db;
    this.statements = statements;
    this.queryable = {
      dialect: "sqlite",
      all: async <T>(sql: string, params: readonly Param[] = []) => statements.of(sql).all(...(params as Binding[])) as T[],
      get: async <T>(sql: string, params: readonly Param[] = []) => (statements.of(sql).get(...(params as Binding[])) as T | null) ?? null,
      run: (): Promise<RunResult> => Promise.reject(new Error("a read task wrote: the read worker's connection is read-only")),
    };
    return this.queryable;
  }
}

/** SQLite's error code of a failed task (SQLITE_BUSY …), sent back with it; undefined for any other error. */
export const sqliteErrorCode = (err: unknown): string | undefined => (err instanceof SQLiteError ? String((err as { code?: unknown }).code ?? "") : undefined);
