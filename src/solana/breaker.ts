import type { Clock } from "../clock";

export type BreakerState = "closed" | "open" | "half_open";

/**
 * One RPC URL's circuit breaker. `threshold` consecutive host failures open it; while open, calls skip the URL
 * (failing over at once instead of waiting out timeouts). After `cooldownMs` one trial call is let through
 * (half-open): success closes it, failure opens it for another cooldown. Time comes from the clock, so tests
 * drive it with the FakeClock. Per-process memory on purpose: it is a cache of health, rebuilt in seconds.
 */
export class CircuitBreaker {
  private failures = 0;
  private openedAt: number | null = null;
  private trialInFlight = false;
  private lastError: string | null = null;

  constructor(
    private readonly clock: Clock,
    private readonly threshold: number,
    private readonly cooldownMs: number,
  ) {}

  get state(): BreakerState {
    if (this.openedAt === null) return "closed";
    return this.clock.now().getTime() - this.openedAt >= this.cooldownMs ? "half_open" : "open";
  }

  /** Whether a call may use this URL now; in half-open state only one trial at a time. */
  tryAcquire(): boolean {
    const state = this.state;
    if (state === "closed") return true;
    if (state === "open" || this.trialInFlight) return false;
    this.trialInFlight = true;
    return true;
  }

  success(): void {
    this.failures = 0;
    this.openedAt = null;
    this.trialInFlight = false;
    this.lastError = null;
  }

  failure(message: string): void {
    this.lastError = message;
    this.failures += 1;
    const wasTrial = this.trialInFlight;
    this.trialInFlight = false;
    if (wasTrial || this.failures >= this.threshold) this.openedAt = this.clock.now().getTime();
  }

  /** A call that ended without a verdict on the host (e.g. a request-specific RPC error) frees the trial slot. */
  release(): void {
    this.trialInFlight = false;
  }

  snapshot() {
    return {
      state: this.state,
      consecutive_failures: this.failures,
      opened_at: this.openedAt === null ? null : new Date(this.openedAt).toISOString(),
      last_error: this.lastError,
    };
  }
}
