import type { Clock } from "../context";

export interface RateDecision {
  allowed: boolean;
  limit: number;
  remaining: number;
  /** Unix seconds when the current window ends. */
  resetAt: number;
  retryAfterSeconds: number;
}

/**
 * Fixed one-minute windows per (group, subject). Per-process memory is fine here: rate-limit windows are a
 * cache, not coordination state (behind several instances each enforces its own share).
 */
export class RateLimiter {
  private windows = new Map<string, { start: number; count: number }>();
  private lastSweep = 0;

  constructor(private readonly clock: Clock, private readonly windowMs = 60_000) {}

  hit(group: string, subject: string, limit: number): RateDecision {
    const now = this.clock.now().getTime();
    const start = now - (now % this.windowMs);
    this.sweep(start);
    const key = `${group}\u0000${subject}`;
    let w = this.windows.get(key);
    if (!w || w.start !== start) {
      w = { start, count: 0 };
      this.windows.set(key, w);
    }
    const resetMs = start + this.windowMs;
    const allowed = w.count < limit;
    if (allowed) w.count++;
    return {
      allowed,
      limit,
      remaining: Math.max(0, limit - w.count),
      resetAt: Math.ceil(resetMs / 1000),
      retryAfterSeconds: Math.max(1, Math.ceil((resetMs - now) / 1000)),
    };
  }

  private sweep(currentStart: number): void {
    if (currentStart === this.lastSweep) return;
    this.lastSweep = currentStart;
    for (const [k, w] of this.windows) if (w.start < currentStart) this.windows.delete(k);
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
