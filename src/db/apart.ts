import { startWorker } from "../worker-entry";
import { type ApartTask, type Queryable, SerializationFailure, StoreUnavailable } from "./port";

export type { ApartTask };

// Reads that grow with the data, run apart from the event loop.
//
// bun:sqlite runs every statement on the JavaScript thread that issued it, so a read over a table that grows (24
// hours of the request log for latency percentiles, every webhook delivery counted by status) holds every other
// request, /healthz included, for as long as it runs: 0.3–5 s at 3M rows. On SQLite such a read runs in a worker
// thread with a read-only connection of its own (WAL: it reads the last commit and never blocks the writer), and
// the work on its rows (a sort, a count per route) runs there too, so only the small answer crosses back. On
// PostgreSQL the statements already leave the thread: a task runs on the store as any read does.
//
// A task is a named function of a Queryable and plain arguments; src/workers/read-tasks.ts lists them so that the
// worker can find one by name. It must only read, and its arguments and answer must survive structured cloning.

export const apartTask = <A, R>(name: string, run: (q: Queryable, args: A) => Promise<R>): ApartTask<A, R> => ({ name, run });

/** A read's longest time in the worker before it is abandoned (the worker is ended and started anew). */
export const APART_DEADLINE_MS = 30_000;
/** Reads waiting for the worker beyond this are refused (503 db_unavailable) rather than queued without end. */
export const APART_MAX_WAITING = 64;

/** The worker's own commands, beside the read tasks (names no task takes: they begin with $). */
export const CHECKPOINT = "$checkpoint";
export const CLOSE = "$close";

export interface CheckpointResult {
  /** 1 when the checkpoint could not take its lock (another checkpoint ran): nothing was done this time. */
  busy: number;
  /** Frames in the WAL, and how many of them are now in the database file. */
  log: number;
  checkpointed: number;
}

interface Waiting {
  resolve: (v: unknown) => void;
  reject: (e: unknown) => void;
  timer: ReturnType<typeof setTimeout>;
}

export interface ApartAnswer {
  id: number;
  value?: unknown;
  error?: { name: string; message: string; code?: string };
}

/** An error from the worker as the port's typed error (a busy file is a retryable conflict, I/O an outage). */
function errorOf(e: NonNullable<ApartAnswer["error"]>): Error {
  const code = e.code ?? "";
  if (code.startsWith("SQLITE_BUSY") || code.startsWith("SQLITE_LOCKED")) return new SerializationFailure(e.message);
  if (code.startsWith("SQLITE_IOERR") || code.startsWith("SQLITE_CANTOPEN") || code === "SQLITE_FULL") return new StoreUnavailable(e.message);
  const err = new Error(e.message);
  err.name = e.name;
  return err;
}

/** The SQLite file's read worker: started on first use, one read at a time in it, ended with the store. */
export class ApartReader {
  private worker: Worker | null = null;
  private nextId = 1;
  private readonly waiting = new Map<number, Waiting>();
  /** Reads sent to the worker, for tests and benchmarks. */
  ran = 0;

  constructor(private readonly path: string) {}

  run<A, R>(task: ApartTask<A, R>, args: A): Promise<R> {
    if (this.waiting.size >= APART_MAX_WAITING) {
      return Promise.reject(new StoreUnavailable(`${APART_MAX_WAITING} reads already wait for the database's read worker`));
    }
    this.ran++;
    return this.send(task.name, args);
  }

  /** A PASSIVE checkpoint on the worker's own read-write connection (src/workers/read-worker.ts). */
  checkpoint(): Promise<CheckpointResult> {
    return this.send(CHECKPOINT, null);
  }

  /** Lets the worker close its connections (so that the store's closing checkpoint is not held back), then ends it. */
  async close(): Promise<void> {
    if (this.worker) {
      const closed = this.send(CLOSE, null).catch(() => {});
      await Promise.race([closed, new Promise((r) => setTimeout(r, 1_000).unref?.())]);
    }
    this.abandon(new StoreUnavailable("the database is closing"));
  }

  private send<R>(name: string, args: unknown): Promise<R> {
    const worker = this.started();
    const id = this.nextId++;
    return new Promise<R>((resolve, reject) => {
      const timer = setTimeout(() => this.abandon(new StoreUnavailable(`a read (${name}) took longer than ${APART_DEADLINE_MS} ms`)), APART_DEADLINE_MS);
      timer.unref?.();
      this.waiting.set(id, { resolve: resolve as (v: unknown) => void, reject, timer });
      worker.postMessage({ id, path: this.path, task: name, args });
    });
  }

  private started(): Worker {
    if (this.worker) return this.worker;
    const w = startWorker("workers/read-worker.ts");
    w.onmessage = (e: MessageEvent<ApartAnswer>) => this.answered(e.data);
    w.onerror = (e) => this.abandon(new StoreUnavailable(`the database's read worker failed: ${(e as ErrorEvent).message ?? e}`));
    // An idle worker must not keep a process (a CLI command, a test) alive; the waiting reads' timers are unref'd too.
    w.unref();
    this.worker = w;
    return w;
  }

  private answered(a: ApartAnswer): void {
    const w = this.waiting.get(a.id);
    if (!w) return;
    this.waiting.delete(a.id);
    clearTimeout(w.timer);
    if (a.error) w.reject(errorOf(a.error));
    else w.resolve(a.value);
  }

  /** Ends the worker and refuses what waits for it; the next read starts a fresh one. */
  private abandon(err: Error): void {
    const w = this.worker;
    this.worker = null;
    w?.terminate();
    for (const [id, p] of this.waiting) {
      clearTimeout(p.timer);
      this.waiting.delete(id);
      p.reject(err);
    }
  }
}
