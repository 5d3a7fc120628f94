/** What a BufferedWriter writes and when. */
export interface BufferedWriterOptions<R> {
  /** Writes one batch, rows in the order they were recorded (one transaction); a throw keeps them for the next flush. */
  write(rows: R[]): Promise<void>;
  /** Told when a write failed (its rows are back in the buffer): the owner decides what to log. */
  failed(err: unknown, rows: number): void;
  /** Rows past this are dropped (and counted) rather than letting a stuck database grow memory without bound. */
  maxBuffered: number;
  /** A write begins once this many rows wait, without waiting for a timer. */
  batchRows: number;
  /** A write begins this long after the first row that found no timer set; without it, only start()'s interval. */
  flushAfterMs?: number;
}

/**
 * Rows recorded on a hot path (a request, an RPC attempt) and written later in batches through the storage port:
 * recording only pushes onto an in-memory buffer; a write takes the whole buffer, when it reaches `batchRows`, on a
 * timer (start()'s interval, or `flushAfterMs` after a batch's first row), or when a reader or shutdown flushes.
 * Writes run one after another, so `await flush()` sees every row recorded before it in the database. A write that
 * fails puts its rows back at the front of the buffer for the next one; flush() never rejects. The buffer is
 * per-process and lost on a hard crash: what goes through here is monitoring data, and a graceful stop writes it.
 */
export class BufferedWriter<R> {
  private buffer: R[] = [];
  private interval: ReturnType<typeof setInterval> | null = null;
  private delay: ReturnType<typeof setTimeout> | null = null;
  /** After stop(): no timer starts again until start(). */
  private stopped = false;
  /** The last write begun or queued: writes run one after the other, so `await flush()` sees every earlier row. */
  private tail: Promise<unknown> = Promise.resolve();
  /** A write queued behind the one in progress, not begun yet: a flush() arriving now joins it. */
  private queued: Promise<number> | null = null;
  private readonly maxBuffered: number;
  private readonly batchRows: number;
  private readonly flushAfterMs: number | null;
  /** Rows refused because the buffer was full. */
  dropped = 0;
  /** Writes that stored their rows. */
  batches = 0;

  constructor(private readonly options: BufferedWriterOptions<R>) {
    this.maxBuffered = options.maxBuffered;
    this.batchRows = options.batchRows;
    this.flushAfterMs = options.flushAfterMs ?? null;
  }

  /** On the hot path: a push, and at most a flush queued or a timer set; never a write. */
  record(row: R): void {
    if (this.buffer.length >= this.maxBuffered) {
      this.dropped++;
      return;
    }
    this.buffer.push(row);
    // flush() only queues the write (it begins in a later microtask), and a flush already queued is joined.
    if (this.buffer.length >= this.batchRows) void this.flush();
    else if (this.flushAfterMs !== null && this.delay === null && !this.stopped) {
      this.delay = setTimeout(() => void this.flush(), this.flushAfterMs);
      this.delay.unref?.();
    }
  }

  get pending(): number {
    return this.buffer.length;
  }

  /** Whether start()'s interval is running. */
  get running(): boolean {
    return this.interval !== null;
  }

  /** Writes every `intervalMs` as well (unref'd: it never keeps the process alive); false when already running. */
  start(intervalMs: number): boolean {
    if (this.interval) return false;
    this.stopped = false;
    this.interval = setInterval(() => void this.flush(), intervalMs);
    this.interval.unref?.();
    return true;
  }

  /** Stops the timers without writing (stop() does both; an owner with work of its own to end first calls this). */
  stopTimers(): void {
    this.stopped = true;
    if (this.interval) clearInterval(this.interval);
    this.interval = null;
    if (this.delay) clearTimeout(this.delay);
    this.delay = null;
  }

  /** Stops the timers and writes what is buffered (graceful shutdown: await it before closing the store). */
  stop(): Promise<number> {
    this.stopTimers();
    return this.flush();
  }

  /**
   * Writes everything buffered, after any write in progress; resolves with the number of rows this write stored
   * (0 when it failed: the rows are back in the buffer for the next flush). Never rejects.
   */
  flush(): Promise<number> {
    if (this.delay) clearTimeout(this.delay);
    this.delay = null;
    if (this.queued) return this.queued;
    const next = this.tail.then(() => {
      this.queued = null;
      return this.writeBuffered();
    });
    this.queued = next;
    this.tail = next;
    return next;
  }

  private async writeBuffered(): Promise<number> {
    if (this.buffer.length === 0) return 0;
    const rows = this.buffer;
    this.buffer = [];
    try {
      await this.options.write(rows);
    } catch (err) {
      // Back in front of what arrived meanwhile (bounded), so that a transient failure (busy, a lost connection)
      // loses nothing and the next write keeps the order they were recorded in.
      this.buffer = rows.concat(this.buffer).slice(0, this.maxBuffered);
      this.options.failed(err, rows.length);
      return 0;
    }
    this.batches++;
    return rows.length;
  }
}
