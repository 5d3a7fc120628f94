import type { ApartReader, CheckpointResult } from "./apart";

// The SQLite WAL's checkpoints, run in the read worker instead of on the serving thread (docs/storage-port.md).
//
// SQLite's automatic checkpoint runs inside the commit that crosses 1,000 WAL pages, on the thread that committed:
// it writes those pages back into the database file and fsyncs it while every request waits — 16–20 ms at 1 GB and
// ~270 ms at 6.6 GB here (bench scale, credits alone), and seconds after a backup's long read let the WAL grow. Under
// `herald serve` it is turned off and the read worker runs a PASSIVE checkpoint on a read-write connection of its
// own (src/workers/read-worker.ts), which waits for no lock and holds no writer up. Should one fail, SQLite's own
// checkpoint is turned back on and the caller told once: the WAL never grows without bound.

/** Ticks without a commit after which a checkpoint runs anyway (a write that bypassed the queue: a migration). */
const IDLE_TICKS = 30;

export class WorkerCheckpoints {
  private timer: ReturnType<typeof setInterval> | null = null;
  private running = false;
  /** The latest checkpoint's outcome, for tests and benchmarks. */
  last: CheckpointResult | null = null;

  constructor(
    private readonly reader: ApartReader,
    /** The store's commits so far; null once it is closing. */
    private readonly commits: () => number | null,
    /** Turns SQLite's automatic checkpoint on the serving connection on or off. */
    private readonly automatic: (on: boolean) => void,
    private readonly onFailure: (err: unknown) => void,
  ) {}

  start(intervalMs: number): void {
    this.automatic(false);
    let seen = this.commits();
    let idle = 0;
    this.timer = setInterval(() => {
      const now = this.commits();
      if (this.running || now === null) return;
      if (now === seen && ++idle < IDLE_TICKS) return;
      idle = 0;
      seen = now;
      this.running = true;
      void this.reader
        .checkpoint()
        .then((r) => {
          this.last = r;
        })
        .catch((err) => this.failed(err))
        .finally(() => {
          this.running = false;
        });
    }, intervalMs);
    this.timer.unref?.();
  }

  stop(): void {
    if (this.timer) clearInterval(this.timer);
    this.timer = null;
  }

  private failed(err: unknown): void {
    if (!this.timer) return; // stopped meanwhile: the store is closing
    this.stop();
    if (this.commits() !== null) this.automatic(true);
    this.onFailure(err);
  }
}
