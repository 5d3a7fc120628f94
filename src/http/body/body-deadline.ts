import { AppError } from "../errors";
import { tooLarge } from "../request-state";

// Reading a request body under a deadline. A client that sends its headers and then trickles the body (a byte a
// second) would otherwise hold its connection, and the memory of its half-read request, until Bun's idle timeout
// (30 s, and not reset by incoming bytes); a few thousand such clients exhaust the process's file descriptors.
// Every body is read through `BodyReads.read`: it is refused with 408 `request_timeout` and `Connection: close`
// when it has not arrived within REQUEST_BODY_TIMEOUT_MS, or when, after the grace period, it arrives slower than
// REQUEST_BODY_MIN_BYTES_PER_SEC on average. Bun then closes the connection once the answer is written.

/** The limits a request body is read under (REQUEST_BODY_TIMEOUT_MS, REQUEST_BODY_MIN_BYTES_PER_SEC). */
export interface BodyDeadline {
  /** The longest a whole body may take, counted from when Herald starts reading it (right after its headers). */
  readonly timeoutMs: number;
  /** The least average rate, in bytes per second since the read began, once the grace period is over; 0: none. */
  readonly minBytesPerSec: number;
}

/**
 * The first seconds of a body are not held to the minimum rate: a connection's first round trips and TCP slow
 * start, or a client that pauses briefly between its headers and its body, are not what the rate is meant to catch.
 */
export const BODY_RATE_GRACE_MS = 2000;

/** How often reads in progress are looked at: a late body is refused at most this long after its deadline. */
const SWEEP_MS = 100;

/** A sweep that runs later than this after the previous one found the process busy: it refuses nothing. */
const LATE_SWEEP_MS = 4 * SWEEP_MS;

interface Reading {
  readonly startedNs: number;
  received: number;
  /** Set by the sweep that found the body late; the read then ends (its reader is cancelled) and answers 408. */
  late: boolean;
  readonly reader: BodyReader;
}

/** What a read needs of a body stream's reader. */
interface BodyReader {
  read(): Promise<{ done: true; value?: undefined } | { done: false; value: Uint8Array }>;
  cancel(): Promise<void>;
}

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

/**
 * The bodies being read by one app, and the one timer that watches them: a read costs a set entry, not a timer of
 * its own. The timer runs only while a read is in progress.
 */
export class BodyReads {
  private readonly reading = new Set<Reading>();
  private sweeper: ReturnType<typeof setInterval> | null = null;
  private lastSweepNs = 0;

  constructor(
    private readonly policy: BodyDeadline,
    private readonly maxBytes: number,
  ) {}

  /**
   * The whole body of `request`, at most `maxBytes` (413 `payload_too_large` past it, counted as read, with or
   * without Content-Length), within the deadline (408 `request_timeout`, with `Connection: close`).
   */
  async read(request: Request): Promise<Uint8Array> {
    const body = request.body;
    if (!body) return NO_BODY;
    const reading: Reading = { startedNs: Bun.nanoseconds(), received: 0, late: false, reader: body.getReader() };
    this.watch(reading);
    const chunks: Uint8Array[] = [];
    try {
      for (;;) {
        let next: Awaited<ReturnType<BodyReader["read"]>>;
        try {
          next = await reading.reader.read();
        } catch (err) {
          // A cancelled read may reject rather than end: it is still the deadline's refusal.
          if (reading.late) throw this.timedOut(reading);
          throw err;
        }
        if (reading.late) throw this.timedOut(reading);
        const { done, value } = next;
        if (done) break;
        reading.received += value.byteLength;
        if (reading.received > this.maxBytes) {
          reading.reader.cancel().catch(() => {});
          throw tooLarge(this.maxBytes);
        }
        chunks.push(value);
      }
    } finally {
      this.reading.delete(reading);
    }
    return chunks.length === 1 ? chunks[0]! : chunks.length === 0 ? NO_BODY : Buffer.concat(chunks);
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
      // Ends the pending read (it resolves as done); the read loop then answers 408.
      r.reader.cancel().catch(() => {});
    }
  }
}
