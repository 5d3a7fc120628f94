import { Gauge, type Metric } from "prom-client";
import { type AppContext, slot, stateOf } from "../context";

// How late Herald's one JavaScript thread runs a timer that should fire now: the time every request, job and probe
// waited because something else held the thread. On SQLite every statement runs on this thread (bun:sqlite is
// synchronous), so work that grows with the data stalls everything at once (docs/monitoring.md, "Event-loop lag").
//
// A late-timer sampler rather than perf_hooks' monitorEventLoopDelay: a stall of 2 s is ONE observation of about
// 2 s, which the histogram and the alert count as the event it is, where a delay monitor's percentiles would weigh
// it as one tick among thousands. Its cost, 50 wake-ups a second, is 3–4 ms of CPU a second idle on this VM (the
// same as a bare timer) and nothing measurable per request under load.

/** How often the timer is due. A stall S is observed as between S − LAG_SAMPLE_MS and S. */
export const LAG_SAMPLE_MS = 20;
/** From 1 ms (the timer's own jitter is ~0.1 ms) to stalls of tens of seconds (a backup of a large file). */
export const LAG_BUCKETS_SECONDS = [0.001, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30];
/** What "now" means for the readiness page and the max gauge. */
export const LAG_WINDOW_MS = 60_000;
/** Worst lag of the window from which the readiness page warns: a request held 100 ms is already felt. */
export const LAG_WARN_MS = 100;
/** Worst lag from which it says bad: a second without any answer, /healthz included. */
export const LAG_BAD_MS = 1000;
/** Samples kept for the window: 60 s at one per 20 ms is 3,000, and a timer never fires early, so 4,096 covers it. */
const RING = 4096;

export type LagState = "ok" | "warn" | "bad" | "not_measured";

/** Where the sampler's observations go: LagHistogram in the service, any histogram in a test. */
export interface LagSink {
  observe(seconds: number): void;
}

/**
 * herald_event_loop_lag_seconds, counted here rather than by a prom-client Histogram: prom-client's observe, called
 * 50 times a second and so never warm, cost ~35 µs a call on this VM (1.5–2 ms of CPU a second, measured idle against
 * a bare timer), more than the rest of the sampler together; an index into these counts costs nothing measurable.
 * Registered on the context's registry as prom-client reads a metric (name, help, type, get, reset).
 */
export class LagHistogram implements LagSink {
  readonly type = "histogram";
  readonly aggregator = "sum";
  /** Per bucket, not cumulative, the last one +Inf. */
  private readonly counts = new Float64Array(LAG_BUCKETS_SECONDS.length + 1);
  private sum = 0;
  private count = 0;

  constructor(
    readonly name: string,
    readonly help: string,
  ) {}

  observe(seconds: number): void {
    let i = 0;
    while (i < LAG_BUCKETS_SECONDS.length && seconds > LAG_BUCKETS_SECONDS[i]!) i++;
    this.counts[i]!++;
    this.sum += seconds;
    this.count++;
  }

  reset(): void {
    this.counts.fill(0);
    this.sum = 0;
    this.count = 0;
  }

  async get() {
    let cumulative = 0;
    const values: Array<{ metricName: string; labels: Record<string, string | number>; value: number }> = LAG_BUCKETS_SECONDS.map((le, i) => {
      cumulative += this.counts[i]!;
      return { metricName: `${this.name}_bucket`, labels: { le }, value: cumulative };
    });
    values.push(
      { metricName: `${this.name}_bucket`, labels: { le: "+Inf" }, value: this.count },
      { metricName: `${this.name}_sum`, labels: {}, value: this.sum },
      { metricName: `${this.name}_count`, labels: {}, value: this.count },
    );
    return { name: this.name, help: this.help, type: this.type, values, aggregator: this.aggregator };
  }
}

export class EventLoopLag {
  private timer: ReturnType<typeof setTimeout> | null = null;
  private dueAt = 0;
  // The window's samples in a ring: when each was taken (performance.now() ms) and its lag in seconds.
  private readonly at = new Float64Array(RING);
  private readonly lag = new Float64Array(RING);
  private next = 0;
  private filled = 0;

  constructor(
    private readonly histogram: LagSink,
    private readonly now: () => number = () => performance.now(),
  ) {}

  get sampling(): boolean {
    return this.timer !== null;
  }

  /**
   * Starts sampling. The timer is unref'd, so it never keeps a process alive (a test, a command that ends), and
   * re-armed with refresh() rather than made anew: one timer object for the life of the process.
   */
  start(): void {
    if (this.timer) return;
    this.dueAt = this.now() + LAG_SAMPLE_MS;
    this.timer = setTimeout(this.tick, LAG_SAMPLE_MS);
    this.timer.unref();
  }

  stop(): void {
    if (this.timer) clearTimeout(this.timer);
    this.timer = null;
  }

  private readonly tick = (): void => {
    const t = this.now();
    this.record(Math.max(0, t - this.dueAt) / 1000, t);
    if (!this.timer) return; // stopped meanwhile
    this.dueAt = t + LAG_SAMPLE_MS;
    this.timer.refresh();
  };

  /** One observation: in the histogram, and in the window the readiness page reads. */
  record(seconds: number, at = this.now()): void {
    this.histogram.observe(seconds);
    this.at[this.next] = at;
    this.lag[this.next] = seconds;
    this.next = (this.next + 1) % RING;
    this.filled = Math.min(this.filled + 1, RING);
  }

  /** The lags (seconds) of the samples taken in the last LAG_WINDOW_MS, in no order. */
  private windowSamples(): number[] {
    const since = this.now() - LAG_WINDOW_MS;
    const out: number[] = [];
    for (let i = 0; i < this.filled; i++) if (this.at[i]! >= since) out.push(this.lag[i]!);
    return out;
  }

  /** The worst lag of the last minute in seconds, NaN without a sample (not sampling: nothing was measured). */
  maxSeconds(): number {
    const samples = this.windowSamples();
    return samples.length ? Math.max(...samples) : Number.NaN;
  }

  /** The last minute as the readiness page shows it: its worst sample decides the state, since one stall is what every request felt. */
  snapshot() {
    const samples = this.windowSamples().sort((a, b) => a - b);
    const ms = (q: number) => (samples.length ? Math.round(samples[Math.min(samples.length - 1, Math.ceil(q * samples.length) - 1)]! * 10_000) / 10 : null);
    const max = ms(1);
    const state: LagState = max === null ? "not_measured" : max >= LAG_BAD_MS ? "bad" : max >= LAG_WARN_MS ? "warn" : "ok";
    return {
      state,
      sampling: this.sampling,
      interval_ms: LAG_SAMPLE_MS,
      window_seconds: LAG_WINDOW_MS / 1000,
      samples: samples.length,
      max_ms: max,
      p99_ms: ms(0.99),
      p50_ms: ms(0.5),
      warn_ms: LAG_WARN_MS,
      bad_ms: LAG_BAD_MS,
    };
  }
}

/**
 * The context's sampler, made with its two series on the context's registry: they are on /metrics from the start
 * (empty until `serve` starts the sampler), so a rule or panel reading them never finds them missing.
 */
const LAG = slot("event-loop-lag", (ctx: AppContext) => {
  const histogram = new LagHistogram(
    "herald_event_loop_lag_seconds",
    `How late a timer due every ${LAG_SAMPLE_MS} ms ran: the time the JavaScript thread was held by other work (on SQLite, every statement). A stall is one observation.`,
  );
  ctx.metrics.registry.registerMetric(histogram as unknown as Metric);
  const lag = new EventLoopLag(histogram);
  new Gauge({
    name: "herald_event_loop_lag_max_seconds",
    help: "The worst event-loop lag of the last minute; NaN when this process does not sample (not `herald serve`).",
    registers: [ctx.metrics.registry],
    collect() {
      this.set(lag.maxSeconds());
    },
  });
  return lag;
});

export const eventLoopLag = (ctx: AppContext): EventLoopLag => stateOf(ctx, LAG);

/** Stops the sampler if one was made (shutdown: starts nothing). */
export function stopEventLoopLag(ctx: AppContext): void {
  ctx.state.peek(LAG)?.stop();
}
