// Structured JSON logs, one object per line on stdout. Secrets never reach here: callers log ids, not values.

export type LogLevel = "debug" | "info" | "warn" | "error" | "silent";
const ORDER: Record<LogLevel, number> = { debug: 10, info: 20, warn: 30, error: 40, silent: 100 };

type LogLine = (msg: string, fields?: Record<string, unknown>) => void;

export interface Logger extends Record<Exclude<LogLevel, "silent">, LogLine> {
  /** Lets hot paths skip building fields for a line that would be dropped. */
  enabled(level: Exclude<LogLevel, "silent">): boolean;
  /** Writes the lines still held back (stdout's batches, below): call before process.exit. */
  flush(): void;
}

/** How long an info or debug line may wait for others before it is written, and how much may wait at most. */
export const LINE_BATCH_MS = 20;
export const LINE_BATCH_CHARS = 64 * 1024;

/**
 * Lines written in batches: a line waits at most LINE_BATCH_MS (or until LINE_BATCH_CHARS are waiting) to be written
 * with the others, and an urgent one (warn, error) is written at once, after those before it, so the order holds.
 * At LOG_LEVEL=info every request writes a line: one `process.stdout.write` each cost a logged route ~2.7 µs of CPU a
 * request in the running server (18.2–18.6 against 15.4–16.1 µs at warn), one write per batch ~0.5 µs a line in a
 * loop against 1.7 (bench/README.md "Request lines written in batches"). A hard crash loses at most the batch
 * waiting, never a warn or error line; a graceful stop and process exit write it.
 */
export class LineBatches {
  private pending = "";
  private timer: ReturnType<typeof setTimeout> | null = null;
  constructor(private readonly sink: (text: string) => void) {}

  add(line: string, urgent: boolean): void {
    this.pending += line + "\n";
    if (urgent || this.pending.length >= LINE_BATCH_CHARS) this.flush();
    else if (!this.timer) {
      this.timer = setTimeout(() => this.flush(), LINE_BATCH_MS);
      this.timer.unref?.();
    }
  }

  flush(): void {
    if (this.timer) clearTimeout(this.timer);
    this.timer = null;
    if (this.pending === "") return;
    const text = this.pending;
    this.pending = "";
    this.sink(text);
  }
}

/** The process's one stdout batcher (every logger writing to stdout shares it, so their lines keep their order). */
let stdoutBatches: LineBatches | null = null;
function stdoutLines(): LineBatches {
  if (!stdoutBatches) {
    const batches = new LineBatches((text) => process.stdout.write(text));
    // Whatever exits the process (process.exit, an uncaught error) writes what waits first.
    process.on("exit", () => batches.flush());
    stdoutBatches = batches;
  }
  return stdoutBatches;
}

/**
 * A logger at `level`. Without `write`, lines go to stdout in batches (LineBatches); with it, each line is handed
 * to `write` as it is made (the CLI's stderr logger, tests).
 */
export function createLogger(level: LogLevel, write?: (line: string) => void): Logger {
  const min = ORDER[level];
  const batches = write || level === "silent" ? null : stdoutLines();
  // At info a busy server writes dozens of lines a millisecond, and a Date and its toISOString were ~0.17 of a
  // line's ~0.45 µs (a loop of 300,000 request lines).
  const timeText = isoTimes();
  const emit = (lvl: Exclude<LogLevel, "silent">, msg: string, fields?: Record<string, unknown>) => {
    if (ORDER[lvl] < min) return;
    const line = JSON.stringify({ level: lvl, time: timeText(Date.now()), msg, ...fields });
    if (batches) batches.add(line, ORDER[lvl] >= ORDER.warn);
    else write!(line);
  };
  return {
    debug: (m, f) => emit("debug", m, f),
    info: (m, f) => emit("info", m, f),
    warn: (m, f) => emit("warn", m, f),
    error: (m, f) => emit("error", m, f),
    enabled: (lvl) => ORDER[lvl] >= min,
    flush: () => batches?.flush(),
  };
}

/** ISO text of epoch milliseconds, made once for the times of one millisecond in a row (they share one string). */
export function isoTimes(): (ms: number) => string {
  let lastMs = Number.NaN;
  let lastIso = "";
  return (ms) => {
    if (ms !== lastMs) {
      lastMs = ms;
      lastIso = new Date(ms).toISOString();
    }
    return lastIso;
  };
}

export function errorFields(err: unknown): Record<string, unknown> {
  if (err instanceof Error) return { error: err.message, stack: err.stack };
  return { error: String(err) };
}
