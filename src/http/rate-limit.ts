import { epochMs, type Clock } from "../clock";

export interface RateDecision {
  allowed: boolean;
  limit: number;
  remaining: number;
  /** Unix seconds when every request counted so far has left the window (Remaining is back to Limit). */
  resetAt: number;
  /** On a refusal: seconds until one more request would be allowed. */
  retryAfterSeconds: number;
}

interface Window {
  /** Start of the current fixed minute (ms). */
  start: number;
  /** Requests counted in the previous minute and in this one. */
  prev: number;
  cur: number;
}

/**
 * Sliding-window counters per (group, subject): the count is this minute's requests plus the previous minute's,
 * weighted by how much of that minute still lies inside the last 60 s. Unlike fixed windows, a client cannot send
 * the limit at 0:59 and again at 1:00: right after the edge the previous minute still weighs almost fully.
 *
 * Hand-written rather than rate-limiter-flexible: its memory limiter answers through a Promise (an await in the
 * partner guard and the HTTP core's onRequest, both synchronous today) and counts fixed windows from the first hit,
 * which keeps the edge burst this replaces. This is two counters and a multiplication per request.
 *
 * Per-process memory is fine here: rate-limit windows are a cache, not coordination state (behind several
 * instances each enforces its own share).
 */
export class RateLimiter {
  private windows = new Map<string, Window>();
  private lastSweep = 0;

  constructor(
    private readonly clock: Clock,
    private readonly windowMs = 60_000,
  ) {}

  hit(group: string, subject: string, limit: number): RateDecision {
    const W = this.windowMs;
    const now = epochMs(this.clock);
    const start = now - (now % W);
    this.sweep(start);
    const key = `${group}\u0000${subject}`;
    let w = this.windows.get(key);
    if (!w) {
      w = { start, prev: 0, cur: 0 };
      this.windows.set(key, w);
    } else if (w.start !== start) {
      w.prev = start - w.start === W ? w.cur : 0;
      w.cur = 0;
      w.start = start;
    }
    const elapsed = now - start;
    const weight = (W - elapsed) / W;
    const allowed = w.prev * weight + w.cur + 1 <= limit;
    if (allowed) w.cur++;
    const used = w.prev * weight + w.cur;
    return {
      allowed,
      limit,
      remaining: Math.max(0, Math.floor(limit - used)),
      resetAt: Math.ceil((w.cur > 0 ? start + 2 * W : start + W) / 1000),
      retryAfterSeconds: allowed ? 0 : Math.max(1, Math.ceil(this.waitMs(w, elapsed, limit) / 1000)),
    };
  }

  /** How long until prev·weight + cur + 1 ≤ limit, given that nothing else is counted meanwhile. */
  private waitMs(w: Window, elapsed: number, limit: number): number {
    const W = this.windowMs;
    if (w.cur + 1 <= limit) {
      // Still this minute: wait for the previous minute's weight to fall far enough.
      return Math.max(0, W - elapsed - (W * (limit - 1 - w.cur)) / w.prev);
    }
    // Only next minute, when this minute's count is the weighted one.
    return W - elapsed + Math.max(0, W * (1 - (limit - 1) / w.cur));
  }

  private sweep(currentStart: number): void {
    if (currentStart === this.lastSweep) return;
    this.lastSweep = currentStart;
    // A window whose current minute ended before the previous minute began no longer weighs anything.
    for (const [k, w] of this.windows) if (w.start < currentStart - this.windowMs) this.windows.delete(k);
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
