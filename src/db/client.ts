import { Database } from "bun:sqlite";
import { mkdirSync } from "node:fs";
import { dirname } from "node:path";
import { drizzle, type BunSQLiteDatabase } from "drizzle-orm/bun-sqlite";
import { type SyncQueryable, syncQueryable } from "./sqlite-file";

export type Db = BunSQLiteDatabase<Record<string, never>> & { $client: Database };

export interface DbHandle {
  /** The raw bun:sqlite connection: prepared statements on hot paths, pragmas, checkpoints. */
  sqlite: Database;
  db: Db;
  path: string;
  /** Synchronous statements on this connection, for the checks that run before the context exists (the master key). */
  sync: SyncQueryable;
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
  return {
    sqlite,
    db,
    path,
    sync: syncQueryable(sqlite),
    close() {
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
