import { AppError } from "../errors/errors";
import { errorResponse, type RequestState, tooLarge } from "../request-state";

// Reading a request body under a deadline: a client that trickles its body would otherwise hold its connection and
// half-read request until Bun's idle timeout (30 s, not reset by incoming bytes), and a few thousand such clients
// exhaust the file descriptors. A body late past REQUEST_BODY_TIMEOUT_MS, or slower than
// REQUEST_BODY_MIN_BYTES_PER_SEC after the grace period, is 408 with `Connection: close`.
//
// A body over MAX_BODY_BYTES is 413 only once read and dropped (up to `drainLimitBytes`, under the same deadline):
// most clients read nothing until they have sent the whole body, and would see a reset instead of the 413.

/** The most of a refused body Herald reads and drops: 4 × MAX_BODY_BYTES, at most 8 MiB (never less than the limit). */
export const REFUSED_BODY_MAX_BYTES = 8 * 1024 * 1024;
export const drainLimitBytes = (maxBytes: number) => Math.max(maxBytes, Math.min(4 * maxBytes, REFUSED_BODY_MAX_BYTES));

/** REQUEST_BODY_TIMEOUT_MS and REQUEST_BODY_MIN_BYTES_PER_SEC. */
export interface BodyDeadline {
  /** The longest a whole body may take, counted from when Herald starts reading it (right after its headers). */
  readonly timeoutMs: number;
  /** The least average rate, in bytes per second since the read began, once the grace period is over; 0: none. */
  readonly minBytesPerSec: number;
}

/** No minimum rate in a body's first seconds: TCP slow start, or a brief pause after the headers, is not a trickle. */
export const BODY_RATE_GRACE_MS = 2000;

/** How often reads in progress are looked at: a late body is refused at most this long after its deadline. */
const SWEEP_MS = 100;

/** A sweep that runs later than this after the previous one found the process busy: it refuses nothing. */
const LATE_SWEEP_MS = 4 * SWEEP_MS;

interface Reading {
  readonly startedNs: number;
  received: number;
  /** Set by the sweep that found the body late; the read then ends (`giveUp`) and answers 408. */
  late: boolean;
  /** Ends a read the sweep found late: its stream's reader is cancelled (the pending read then ends). */
  giveUp: () => void;
}

/** A body read from its stream, chunk by chunk. */
type StreamReading = Reading & { readonly reader: BodyReader };

/** What a read needs of a body stream's reader. */
interface BodyReader {
  read(): Promise<{ done: true; value?: undefined } | { done: false; value: Uint8Array }>;
  cancel(): Promise<void>;
}

/** One read of a body stream: a chunk, or the end. */
type Chunk = Awaited<ReturnType<BodyReader["read"]>>;

const NO_BODY = new Uint8Array(0);

/** The milliseconds a body that has delivered `received` bytes may have taken so far. */
export function bodyAllowanceMs(policy: BodyDeadline, received: number): number {
  if (policy.minBytesPerSec <= 0) return policy.timeoutMs;
  return Math.min(policy.timeoutMs, Math.max(BODY_RATE_GRACE_MS, (received * 1000) / policy.minBytesPerSec));
}

export const bodyTimedOut = (policy: BodyDeadline, received: number, elapsedMs: number) =>
  new AppError(
    "request_timeout",
    `The request body did not arrive in time: ${received} bytes in ${(elapsedMs / 1000).toFixed(1)} s. A body must arrive within ` +
      `${policy.timeoutMs} ms` +
      (policy.minBytesPerSec > 0 ? ` and, after its first ${BODY_RATE_GRACE_MS} ms, at ${policy.minBytesPerSec} bytes per second or faster` : "") +
      "; send it again on a new connection.",
    {
      headers: { connection: "close" },
      details: { received_bytes: received, elapsed_ms: Math.round(elapsedMs), timeout_ms: policy.timeoutMs, min_bytes_per_sec: policy.minBytesPerSec },
    },
  );

/** The bodies being read by one app and the one timer that watches them (a read costs a set entry, not a timer). */
export class BodyReads {
  private readonly reading = new Set<Reading>();
  private sweeper: ReturnType<typeof setInterval> | null = null;
  private lastSweepNs = 0;
  private readonly drainBytes: number;
  constructor(
    private readonly policy: BodyDeadline,
    private readonly maxBytes: number,
  ) {
    this.drainBytes = drainLimitBytes(maxBytes);
  }

  /**
   * The whole body of `request`, at most `maxBytes` (else 413), within the deadline (else 408). Every byte is counted
   * as it arrives, so a 408 says how much had (`request.bytes()` counted nothing until all was there).
   */
  async read(request: Request): Promise<Uint8Array> {
    const body = request.body;
    if (!body) return NO_BODY;
    // A body whose Content-Length it has reached is whole: the read that would only say "done" is not waited for.
    const length = request.headers.get("content-length");
    const declared = length !== null && /^\d{1,15}$/.test(length) ? Number(length) : Number.NaN;
    const reading = this.begin(body);
    const chunks: Uint8Array[] = [];
    try {
      // The loop of `next`, inline: every request with a body passes here, and an async call per chunk is a promise.
      while (reading.received !== declared) {
        let chunk: Chunk;
        try {
          chunk = await reading.reader.read();
        } catch (err) {
          throw this.failed(reading, err);
        }
        const value = this.counted(reading, chunk);
        if (value === null) break;
        if (reading.received > this.maxBytes) throw tooLarge(this.maxBytes, !(await this.drained(reading)));
        chunks.push(value);
      }
    } finally {
      this.reading.delete(reading);
    }
    return chunks.length === 1 ? chunks[0]! : chunks.length === 0 ? NO_BODY : Buffer.concat(chunks);
  }

  /**
   * The 413 of a Content-Length over the limit, refused before routing: once the body is drained, or at once with
   * `Connection: close` when it declares more than the drain limit or does not arrive in time.
   */
  async refuseDeclared(request: Request, state: RequestState): Promise<Response> {
    const body = request.body;
    if (!body || Number(request.headers.get("content-length")) > this.drainBytes) return errorResponse(tooLarge(this.maxBytes, body !== null), state);
    const reading = this.begin(body);
    try {
      return errorResponse(tooLarge(this.maxBytes, !(await this.drained(reading))), state);
    } finally {
      this.reading.delete(reading);
    }
  }

  private begin(body: NonNullable<Request["body"]>): StreamReading {
    const reader = body.getReader();
    // Cancelling ends the pending read (it resolves as done); the read loop then answers 408.
    const reading: StreamReading = { startedNs: Bun.nanoseconds(), received: 0, late: false, reader, giveUp: () => void reader.cancel().catch(() => {}) };
    this.watch(reading);
    return reading;
  }

  /** The next chunk (counted), or null at the end; a late body is the deadline's refusal (408), as in `read`. */
  private async next(reading: StreamReading): Promise<Uint8Array | null> {
    const chunk = await reading.reader.read().catch((err: unknown) => {
      throw this.failed(reading, err);
    });
    return this.counted(reading, chunk);
  }

  /** What a rejected read throws: a cancelled read may reject rather than end, and that is still the deadline's refusal. */
  private failed(reading: Reading, err: unknown): unknown {
    return reading.late ? this.timedOut(reading) : err;
  }

  /** A read's chunk, counted, or null at the end; a read that came back late is the deadline's refusal (408). */
  private counted(reading: Reading, chunk: Chunk): Uint8Array | null {
    if (reading.late) throw this.timedOut(reading);
    if (chunk.done) return null;
    reading.received += chunk.value.byteLength;
    return chunk.value;
  }

  /**
   * Reads and drops the rest of a body refused for its size, up to the drain limit in all and within the deadline.
   * True when the whole body was read (the connection can serve the next request); false when it was given up on, its
   * reader cancelled.
   */
  private async drained(reading: StreamReading): Promise<boolean> {
    try {
      while (reading.received <= this.drainBytes) {
        if ((await this.next(reading)) === null) return true;
      }
    } catch {
      // Late, or the client went away: either way the rest is not read.
    }
    reading.reader.cancel().catch(() => {});
    return false;
  }

  private timedOut(reading: Reading): AppError {
    return bodyTimedOut(this.policy, reading.received, (Bun.nanoseconds() - reading.startedNs) / 1e6);
  }

  private watch(reading: Reading): void {
    this.reading.add(reading);
    if (this.sweeper) return;
    this.lastSweepNs = Bun.nanoseconds();
    this.sweeper = setInterval(() => this.sweep(), SWEEP_MS);
    this.sweeper.unref?.();
  }

  private sweep(): void {
    const now = Bun.nanoseconds();
    const sinceLastMs = (now - this.lastSweepNs) / 1e6;
    this.lastSweepNs = now;
    if (this.reading.size === 0) {
      clearInterval(this.sweeper!);
      this.sweeper = null;
      return;
    }
    // A late sweep means the process itself was busy: bytes may be waiting to be read that the reads in progress
    // have not been given yet. Judging them now would blame the client for the server's delay; the next sweep will.
    if (sinceLastMs > LATE_SWEEP_MS) return;
    for (const r of this.reading) {
      if (r.late) continue;
      if ((now - r.startedNs) / 1e6 <= bodyAllowanceMs(this.policy, r.received)) continue;
      r.late = true;
      r.giveUp();
    }
  }
}
