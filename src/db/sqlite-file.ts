import { Database, type SQLQueryBindings } from "bun:sqlite";
import type { Param, RunResult } from "./port";

// The SQLite file operations that are not the service's own storage (docs/design.md §8a: SQLite-only mechanisms live in
// src/db behind small named functions): copying the live file (on-demand backups), checking and reading a copy
// (restore, migrate-to-postgres), and taking the file for ourselves before a restore swaps it. Each opens the file
// on a connection of its own, never the service's. PostgreSQL meaning: none — there is no file; backups there are
// the database's own (pg_dump, pg_basebackup; docs/postgres.md).

/**
 * Synchronous statements on an SQLite file: for the checks that run before a context exists (the master key at a
 * SQLite start, on the service's connection) and for reading a file that is not the service's database.
 */
export interface SyncQueryable {
  get<T = Record<string, unknown>>(sql: string, params?: readonly Param[]): T | null;
  all<T = Record<string, unknown>>(sql: string, params?: readonly Param[]): T[];
  run(sql: string, params?: readonly Param[]): RunResult;
}

export function syncQueryable(db: Database): SyncQueryable {
  const bind = (params: readonly Param[] = []) => params as SQLQueryBindings[];
  return {
    get: <T>(sql: string, params?: readonly Param[]) => (db.query(sql).get(...bind(params)) as T | null) ?? null,
    all: <T>(sql: string, params?: readonly Param[]) => db.query(sql).all(...bind(params)) as T[],
    run: (sql: string, params?: readonly Param[]) => ({ changes: db.query(sql).run(...bind(params)).changes }),
  };
}

/** An SQLite file opened for reading (a backup, a copy), with its statements. */
export type SqliteFile = SyncQueryable & { close(): void };

export function openSqliteFile(path: string): SqliteFile {
  const db = new Database(path, { readonly: true, strict: true });
  return { ...syncQueryable(db), close: () => db.close() };
}

/** `use` over `path` on a connection of its own, closed after whatever happens. */
function onFile<T>(path: string, options: ({ readonly: true } | { readwrite: true; create: false }) & { strict?: true }, use: (db: Database) => T): T {
  const db = new Database(path, options);
  try {
    return use(db);
  } finally {
    db.close();
  }
}

/**
 * `use` over the statements of the existing file at `path` (never created), read-write though a caller may only read:
 * a read-only connection to a WAL file leaves its -wal and -shm files behind, while the last connection that can write
 * removes them when it closes. It waits for other processes opening or closing the file (a WAL being recovered or
 * removed) as the service's own connection does, instead of failing with SQLITE_BUSY. For the CLI's checks.
 */
export function onSqliteFile<T>(path: string, use: (q: SyncQueryable) => T): T {
  return onFile(path, { readwrite: true, create: false, strict: true }, (db) => {
    db.exec("PRAGMA busy_timeout = 5000");
    return use(syncQueryable(db));
  });
}

/**
 * A transactionally consistent copy of the live database at `dbPath` into `file` (VACUUM INTO), on a connection of
 * its own: in WAL mode it is a read transaction, so the server's writers carry on while it runs.
 */
export function sqliteSnapshotInto(dbPath: string, file: string): void {
  onFile(dbPath, { readonly: true }, (db) => db.query("VACUUM INTO ?").run(file));
}

/**
 * About how many bytes a `VACUUM INTO` of `dbPath` writes: the pages in use (page_count − freelist_count) times the
 * page size. SQLite reports no progress for VACUUM INTO, so a backup estimates it from the growing copy's size
 * against this; the copy's indexes are rebuilt, so its real size differs a little either way.
 */
export function sqliteSnapshotBytesEstimate(dbPath: string): number {
  return onFile(dbPath, { readonly: true }, (db) => {
    const read = (pragma: "page_count" | "freelist_count" | "page_size") =>
      Number((db.query(`PRAGMA ${pragma}`).get() as Record<string, number> | null)?.[pragma] ?? 0);
    return Math.max(0, read("page_count") - read("freelist_count")) * read("page_size");
  });
}

/**
 * A PASSIVE WAL checkpoint of `dbPath` on a connection of its own: it copies what it can back into the file without
 * waiting for readers or writers (it takes neither the write lock nor a busy wait), so it is safe beside a serving
 * herald. After a long read (a VACUUM INTO) the WAL has grown for the read's whole duration, since no checkpoint
 * could pass the read's start; this lets the next writer restart the WAL from its beginning. Null if it could not run.
 */
export function sqliteCheckpointPassive(dbPath: string): { busy: number; log: number; checkpointed: number } | null {
  try {
    return onFile(
      dbPath,
      { readwrite: true, create: false },
      (db) => db.query("PRAGMA wal_checkpoint(PASSIVE)").get() as { busy: number; log: number; checkpointed: number } | null,
    );
  } catch {
    return null;
  }
}

/**
 * Takes the write lock of the live database at `dbPath` on a connection of its own and gives it back at once (BEGIN
 * IMMEDIATE, ROLLBACK), waiting at most `timeoutMs` for another process that holds it; throws SQLite's "database is
 * locked" past that. For the readiness probe (src/system/service.ts): the service's own connection would wait its
 * busy_timeout (5 s) for that lock, synchronously, holding the probe — and every request — for all of it.
 */
export function sqliteTakesWriteLock(dbPath: string, timeoutMs: number): void {
  onFile(dbPath, { readwrite: true, create: false }, (db) => {
    db.exec(`PRAGMA busy_timeout = ${Math.max(0, Math.floor(timeoutMs))}`);
    db.exec("BEGIN IMMEDIATE");
    db.exec("ROLLBACK");
  });
}

/** PRAGMA integrity_check on a copy, read-only; "ok" or the first problems SQLite reports. */
export function integrityOf(path: string): string {
  const rows = onFile(path, { readonly: true }, (db) => db.query("PRAGMA integrity_check(5)").all() as Array<{ integrity_check: string }>);
  return rows.map((r) => r.integrity_check).join("; ");
}

/** The file held exclusively: nobody else can open it until `release`. */
export interface ExclusiveFile {
  /** Folds the WAL into the file (one self-contained file); true when it did. */
  foldWal(): boolean;
  release(): void;
}

/**
 * Takes an SQLite file for ourselves, or throws (the message says whether it is in use). In WAL mode every open
 * connection (a serving herald, Litestream, a CLI command) keeps a shared lock on the file for as long as it is
 * open, so an exclusive lock (locking_mode=EXCLUSIVE, then a read inside BEGIN EXCLUSIVE) is granted only when
 * nothing else has it open — and, once granted, is held until release, so no server can start on it meanwhile.
 */
export function holdExclusively(path: string): ExclusiveFile {
  const db = new Database(path, { readwrite: true, create: false });
  try {
    db.exec("PRAGMA busy_timeout = 1000");
    db.exec("PRAGMA locking_mode = EXCLUSIVE");
    db.exec("BEGIN EXCLUSIVE");
    db.query("SELECT count(*) FROM sqlite_master").get();
    db.exec("COMMIT");
  } catch (err) {
    db.close();
    throw err;
  }
  return {
    foldWal() {
      try {
        const r = db.query("PRAGMA wal_checkpoint(TRUNCATE)").get() as { busy: number } | null;
        return r?.busy === 0;
      } catch {
        return false;
      }
    },
    release: () => db.close(),
  };
}
