import { collectDefaultMetrics, Counter, Gauge, Registry } from "prom-client";
import { StoreUnavailable } from "../db/port";

/**
 * A value read from the database at scrape time, or `unavailable` (NaN, no series) while the database is away:
 * /metrics keeps answering during an outage (herald_db_unavailable is what an operator wants to see then).
 */
async function readAtScrape<T>(read: () => T | Promise<T>, unavailable: T): Promise<T> {
  try {
    return await read();
  } catch (err) {
    if (err instanceof StoreUnavailable) return unavailable;
    throw err;
  }
}

/**
 * Prometheus metrics. Per-instance memory is right for metrics: each instance is scraped alone.
 *
 * prom-client holds every series except the two per-request ones: process and GC metrics (its default
 * collectors, prefixed `herald_`), job runs, counters and gauges that other domains publish. The per-request
 * series (`herald_http_requests_total`, `herald_http_request_duration_seconds`) stay hand-written: prom-client
 * hashes the label set on every observation, measured at 0.65 µs per request for the counter + histogram pair in
 * a loop against 0.11 µs here (/tmp loop, 10^6 requests), and 1.5–2.5 µs in the running server (bench/README.md
 * "metrics"), several percent of the cheapest routes. The exposition is one document: prom-client's output
 * followed by these series, with the same names and types as before.
 */

const BUCKETS_SECONDS = [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10];

export interface RouteSeries {
  readonly method: string;
  readonly route: string;
  readonly statuses: Map<number, number>;
  /** Per bucket, not cumulative (rendering adds them up): one increment per request. */
  readonly buckets: number[];
  sum: number;
  count: number;
}

/** Counts one answered request in its route's series. */
export function observe(s: RouteSeries, status: number, seconds: number): void {
  s.statuses.set(status, (s.statuses.get(status) ?? 0) + 1);
  for (let i = 0; i < BUCKETS_SECONDS.length; i++) {
    if (seconds <= BUCKETS_SECONDS[i]!) {
      s.buckets[i]!++;
      break;
    }
  }
  s.sum += seconds;
  s.count++;
}

/**
 * How often the event-loop lag monitor samples. prom-client's default (10 ms) cost 5–6 µs of server CPU per request
 * on the signed capabilities route (bench/README.md "Compression, sliding-window rate limits and prom-client": 57.6
 * → 51.5 µs signed, 46.8 → 40.3 µs unsigned, the same as with no process metrics at all); once a second keeps the
 * lag percentiles and costs nothing measurable. The rules, the dashboard and the readiness page read Herald's own
 * late-timer histogram instead (herald_event_loop_lag_seconds, src/ops/event-loop-lag.ts), which sees each stall once.
 */
const EVENT_LOOP_SAMPLE_MS = 1000;

/**
 * prom-client's per-heap-space series, dropped: they call v8.getHeapSpaceStatistics, which under Bun walks the whole
 * heap on every scrape and blocks the event loop meanwhile: 1.8 ms on an empty heap, 12 ms with 300,000 small
 * objects (/tmp loop, Bun 1.4.5), and ~8 % of herald's CPU samples in a profile of the credit benchmark over a few
 * scrapes. A scrape without them takes 0.6 ms. The heap's total and used sizes stay (`herald_nodejs_heap_size_*`,
 * from process.memoryUsage).
 */
const HEAP_SPACE_SERIES = ["available", "total", "used"].map((k) => `herald_nodejs_heap_space_size_${k}_bytes`);

export const METRICS_CONTENT_TYPE = "text/plain; version=0.0.4; charset=utf-8";

export class Metrics {
  readonly registry = new Registry();
  /**
   * One series per method and route template (status counts and a latency histogram), by method, then route: found
   * without building a key string per request.
   */
  private byMethod = new Map<string, Map<string, RouteSeries>>();
  private readonly jobRuns: Counter<"job" | "outcome">;

  constructor(opts: { processMetrics?: boolean } = {}) {
    this.jobRuns = new Counter({ name: "herald_job_runs_total", help: "Job runs by outcome.", labelNames: ["job", "outcome"], registers: [this.registry] });
    // Process and GC metrics (CPU, resident memory, heap, event-loop lag, GC time): off in tests that build many
    // apps in one process, since the collectors keep timers and observers for the life of the registry.
    if (opts.processMetrics !== false) {
      collectDefaultMetrics({ register: this.registry, prefix: "herald_", eventLoopMonitoringPrecision: EVENT_LOOP_SAMPLE_MS });
      for (const name of HEAP_SPACE_SERIES) this.registry.removeSingleMetric(name);
    }
  }

  /** The series of one method and route; a hot route keeps it and calls `observe` without the lookup. */
  route(method: string, route: string): RouteSeries {
    let routes = this.byMethod.get(method);
    if (!routes) this.byMethod.set(method, (routes = new Map()));
    let s = routes.get(route);
    if (!s) {
      s = { method, route, statuses: new Map(), buckets: BUCKETS_SECONDS.map(() => 0), sum: 0, count: 0 };
      routes.set(route, s);
    }
    return s;
  }

  observeRequest(method: string, route: string, status: number, seconds: number): void {
    observe(this.route(method, route), status, seconds);
  }

  observeJob(name: string, ok: boolean): void {
    this.jobRuns.inc({ job: name, outcome: ok ? "ok" : "failed" });
  }

  /** A value read at scrape time (backlog, file size …); a read through the storage port is awaited. */
  gauge(name: string, help: string, read: () => number | Promise<number>): void {
    this.unregister(name);
    new Gauge({
      name,
      help,
      registers: [this.registry],
      async collect() {
        this.set(await readAtScrape(read, Number.NaN));
      },
    });
  }

  /**
   * Labelled values read at scrape time: one series per label set `read` returns (the set is rebuilt on every
   * scrape, so a series whose subject went away disappears). `read` may be async (a folder listing, a query).
   */
  labelledGauge<L extends string>(
    name: string,
    help: string,
    labelNames: readonly L[],
    read: () => Array<{ labels: Record<L, string>; value: number }> | Promise<Array<{ labels: Record<L, string>; value: number }>>,
  ): void {
    this.unregister(name);
    new Gauge({
      name,
      help,
      labelNames: [...labelNames],
      registers: [this.registry],
      async collect() {
        this.reset();
        for (const s of await readAtScrape(read, [])) this.set(s.labels as Partial<Record<L, string>>, s.value);
      },
    });
  }

  /** A monotonic count kept by its owner (e.g. group commits), read at scrape time and exposed as a counter. */
  counter(name: string, help: string, read: () => number): void {
    this.unregister(name);
    new Counter({
      name,
      help,
      registers: [this.registry],
      collect() {
        this.reset();
        this.inc(read());
      },
    });
  }

  /** A series registered again (an app rebuilt over the same metrics) replaces the earlier one. */
  private unregister(name: string): void {
    if (this.registry.getSingleMetric(name)) this.registry.removeSingleMetric(name);
  }

  async render(): Promise<string> {
    return (await this.registry.metrics()) + this.renderRequests();
  }

  private *allSeries(): Iterable<RouteSeries> {
    for (const routes of this.byMethod.values()) yield* routes.values();
  }

  private renderRequests(): string {
    const out: string[] = [];
    const esc = (v: string) => v.replace(/\\/g, "\\\\").replace(/"/g, '\\"').replace(/\n/g, "\\n");
    out.push("# HELP herald_http_requests_total HTTP requests by route template and status.", "# TYPE herald_http_requests_total counter");
    for (const s of this.allSeries()) {
      for (const [status, n] of s.statuses) out.push(`herald_http_requests_total{method="${esc(s.method)}",route="${esc(s.route)}",status="${status}"} ${n}`);
    }
    out.push("# HELP herald_http_request_duration_seconds Request latency.", "# TYPE herald_http_request_duration_seconds histogram");
    for (const s of this.allSeries()) {
      const labels = `method="${esc(s.method)}",route="${esc(s.route)}"`;
      let cumulative = 0;
      BUCKETS_SECONDS.forEach((le, i) => {
        cumulative += s.buckets[i]!;
        out.push(`herald_http_request_duration_seconds_bucket{${labels},le="${le}"} ${cumulative}`);
      });
      out.push(`herald_http_request_duration_seconds_bucket{${labels},le="+Inf"} ${s.count}`);
      out.push(`herald_http_request_duration_seconds_sum{${labels}} ${s.sum}`);
      out.push(`herald_http_request_duration_seconds_count{${labels}} ${s.count}`);
    }
    return out.join("\n") + "\n";
  }
}
