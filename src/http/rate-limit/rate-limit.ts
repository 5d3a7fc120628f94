import { epochMs, type Clock } from "../../clock";

export interface RateDecision {
  allowed: boolean;
  limit: number;
  remaining: number;
  /**
   * Unix seconds when the oldest request still counted leaves the window, so Remaining goes up. On a refusal this is
   * the moment a retry is admitted: the same moment as Retry-After.
   */
  resetAt: number;
  /** On a refusal: seconds until one more request would be allowed. */
  retryAfterSeconds: number;
}

/** The requests counted for one (group, subject), by the second they were admitted in; oldest first. */
interface Log {
  seconds: number[];
  counts: number[];
  total: number;
}

/**
 * A sliding window of 60 s, exact to the second and never generous: a request is admitted when those admitted in the
 * current second and the 60 before it, plus this one, are at most the limit, so any 60 s span holds at most `limit`
 * (the weighted two-counter estimate this replaced let 1.5× through). Refused requests are not counted. Whole seconds
 * cost a wait up to one second longer than exact times would; the memory is at most 61 (second, count) pairs a client.
 *
 * Not rate-limiter-flexible: its memory limiter answers through a Promise (an await in synchronous hooks) and counts
 * fixed windows, which lets twice the limit through across an edge. Per-process memory: windows are a cache, not
 * coordination state (behind several instances each enforces its own share).
 */
export class RateLimiter {
  private logs = new Map<string, Log>();
  private lastSweep = 0;
  /** A second counts while it is at most this many seconds before the current one. */
  private readonly span: number;

  constructor(
    private readonly clock: Clock,
    windowMs = 60_000,
  ) {
    this.span = Math.round(windowMs / 1000);
  }

  /** What `hit` would answer, without counting a request: whether one more is admitted now. */
  peek(group: string, subject: string, limit: number): RateDecision {
    return this.hit(group, subject, limit, false);
  }

  hit(group: string, subject: string, limit: number, count = true): RateDecision {
    const now = epochMs(this.clock);
    const second = Math.floor(now / 1000);
    this.sweep(second);
    const key = `${group}\u0000${subject}`;
    let log = this.logs.get(key);
    if (!log) {
      log = { seconds: [], counts: [], total: 0 };
      this.logs.set(key, log);
    }
    const { seconds, counts } = log;
    while (seconds.length > 0 && seconds[0]! < second - this.span) {
      log.total -= counts[0]!;
      seconds.shift();
      counts.shift();
    }
    const allowed = log.total + 1 <= limit;
    if (allowed && count) {
      const last = seconds.length - 1;
      if (last >= 0 && seconds[last] === second) counts[last]!++;
      else {
        seconds.push(second);
        counts.push(1);
      }
      log.total++;
    }
    return {
      allowed,
      limit,
      remaining: Math.max(0, limit - log.total),
      resetAt: (seconds[0] ?? second) + this.span + 1,
      retryAfterSeconds: allowed ? 0 : Math.max(1, Math.ceil((this.admittedAt(log, limit) - now) / 1000)),
    };
  }

  /** When (ms) enough of the oldest seconds have left for one more request, given that nothing else is counted. */
  private admittedAt(log: Log, limit: number): number {
    let freed = 0;
    for (let i = 0; i < log.seconds.length; i++) {
      freed += log.counts[i]!;
      if (log.total - freed + 1 <= limit) return (log.seconds[i]! + this.span + 1) * 1000;
    }
    // A limit below 1 admits nothing; callers treat 0 as "off" and never ask.
    return ((log.seconds.at(-1) ?? 0) + this.span + 1) * 1000;
  }

  private sweep(second: number): void {
    if (second - this.lastSweep < this.span) return;
    this.lastSweep = second;
    // A client whose newest counted second has left the window no longer weighs anything.
    for (const [k, log] of this.logs) if ((log.seconds.at(-1) ?? 0) < second - this.span) this.logs.delete(k);
  }
}

export function rateLimitHeaders(d: RateDecision): Record<string, string> {
  const h: Record<string, string> = {
    "X-RateLimit-Limit": String(d.limit),
    "X-RateLimit-Remaining": String(d.remaining),
    "X-RateLimit-Reset": String(d.resetAt),
  };
  if (!d.allowed) h["Retry-After"] = String(d.retryAfterSeconds);
  return h;
}
