import { Database } from "bun:sqlite";
import { mkdirSync } from "node:fs";
import { dirname } from "node:path";
import { drizzle, type BunSQLiteDatabase } from "drizzle-orm/bun-sqlite";

export type Db = BunSQLiteDatabase<Record<string, never>> & { $client: Database };

export interface DbHandle {
  /** The raw bun:sqlite connection: prepared statements on hot paths, pragmas, checkpoints. */
  sqlite: Database;
  /** A second connection on the same file for the storage port's reads outside transactions (WAL); null for :memory:. */
  reader: Database | null;
  db: Db;
  path: string;
  close(): void;
}

/**
 * Opens the one writer connection. WAL lets readers (the CLI, Litestream) work beside a running server;
 * synchronous=NORMAL is durable across process crashes in WAL mode and only risks the last commits on power loss.
 */
export function openDatabase(path: string): DbHandle {
  if (path !== ":memory:") mkdirSync(dirname(path), { recursive: true });
  const sqlite = new Database(path, { create: true, strict: true });
  sqlite.exec("PRAGMA journal_mode = WAL");
  sqlite.exec("PRAGMA synchronous = NORMAL");
  sqlite.exec("PRAGMA busy_timeout = 5000");
  sqlite.exec("PRAGMA foreign_keys = ON");
  const db = drizzle({ client: sqlite }) as Db;
  let reader: Database | null = null;
  return {
    sqlite,
    db,
    path,
    /** Opened on first use: a CLI command that never reads through the port never opens it. */
    get reader() {
      if (reader || path === ":memory:") return reader;
      reader = new Database(path, { strict: true });
      reader.exec("PRAGMA busy_timeout = 5000");
      reader.exec("PRAGMA query_only = 1");
      return reader;
    },
    close() {
      reader?.close();
      try {
        // Don't wait out busy_timeout behind a reader (Litestream holds one): checkpoint what can be, now.
        sqlite.exec("PRAGMA busy_timeout = 0");
        sqlite.exec("PRAGMA wal_checkpoint(TRUNCATE)");
      } catch {
        // A busy checkpoint is not an error on close: the WAL is replayed on next open.
      } finally {
        sqlite.close();
      }
    },
  };
}
