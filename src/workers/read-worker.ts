import { Database, SQLiteError } from "bun:sqlite";
import { TASKS } from "./read-tasks";
import { type ApartAnswer, CHECKPOINT, CLOSE } from "../db/apart";
import type { Param, Queryable, RunResult } from "../db/port";
import { Statements } from "../db/sqlite-statements";

// The SQLite file's read worker (src/db/apart.ts): a read-only connection of its own, one task at a time. Listed as
// an extra entrypoint in package.json's build so that the compiled binary carries it (src/worker-entry.ts).

declare const self: Worker;

type Binding = string | number | boolean | null | Uint8Array;

/** The read-only connection's statements, each prepared once; null until the first task. */
let statements: Statements | null = null;
let db: Database | null = null;
/** The checkpointer's connection (read-write, used for nothing else): see checkpoint(). */
let writer: Database | null = null;

/**
 * A PASSIVE checkpoint: copies what the WAL holds into the database file as far as no reader needs the older pages,
 * waiting for no lock and holding no writer up. Run here instead of by SQLite's automatic checkpoint on the serving
 * thread, where each one (a thousand pages written back, then an fsync) held every request: 16–20 ms at 1 GB,
 * ~270 ms at 6.6 GB (bench scale, credits alone), and seconds after a backup's long read let the WAL grow.
 */
function checkpoint(path: string): { busy: number; log: number; checkpointed: number } {
  if (!writer) {
    writer = new Database(path, { readwrite: true, create: false, strict: true });
    writer.exec("PRAGMA busy_timeout = 0");
  }
  return writer.query("PRAGMA wal_checkpoint(PASSIVE)").get() as { busy: number; log: number; checkpointed: number };
}

function closeAll(): void {
  // Finalized first: close() (sqlite3_close_v2) leaves a connection with live statements open until they are collected.
  statements?.finalizeAll();
  statements = null;
  db?.close();
  writer?.close();
  db = null;
  writer = null;
}

function opened(path: string): void {
  if (db) return;
  db = new Database(path, { readonly: true, strict: true });
  // A reader waits for a checkpoint's brief lock rather than fail; it never holds the writer up (WAL).
  db.exec("PRAGMA busy_timeout = 5000");
  statements = new Statements(db);
}

const reader: Queryable = {
  dialect: "sqlite",
  all: async <T>(sql: string, params: readonly Param[] = []) => statements!.of(sql).all(...(params as Binding[])) as T[],
  get: async <T>(sql: string, params: readonly Param[] = []) => (statements!.of(sql).get(...(params as Binding[])) as T | null) ?? null,
  run: (): Promise<RunResult> => Promise.reject(new Error("a read task wrote: the read worker's connection is read-only")),
};

self.onmessage = async (e: MessageEvent<{ id: number; path: string; task: string; args: unknown }>) => {
  const { id, path, task, args } = e.data;
  let answer: ApartAnswer;
  try {
    if (task === CHECKPOINT) {
      self.postMessage({ id, value: checkpoint(path) } satisfies ApartAnswer);
      return;
    }
    if (task === CLOSE) {
      closeAll();
      self.postMessage({ id, value: null } satisfies ApartAnswer);
      return;
    }
    opened(path);
    const t = TASKS.get(task);
    if (!t) throw new Error(`no read task named ${task}`);
    answer = { id, value: await t.run(reader, args) };
  } catch (err) {
    const code = err instanceof SQLiteError ? String((err as { code?: unknown }).code ?? "") : undefined;
    answer = { id, error: { name: (err as Error).name ?? "Error", message: (err as Error).message ?? String(err), code } };
  }
  self.postMessage(answer);
};
