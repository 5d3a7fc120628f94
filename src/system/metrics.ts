// In-process Prometheus counters. Per-instance memory is right for metrics: each instance is scraped alone.

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

export class Metrics {
  /** One series per method and route template: status counts and a latency histogram. */
  private series = new Map<string, RouteSeries>();
  private jobRuns = new Map<string, { ok: number; failed: number }>();
  /** Extra gauges other domains publish (webhook backlog, dead letters …), read at scrape time. */
  private gauges = new Map<string, { help: string; read: () => number }>();

  /** The series of one method and route; a hot route keeps it and calls `observe` without the lookup. */
  route(method: string, route: string): RouteSeries {
    const key = `${method}\u0000${route}`;
    let s = this.series.get(key);
    if (!s) {
      s = { method, route, statuses: new Map(), buckets: BUCKETS_SECONDS.map(() => 0), sum: 0, count: 0 };
      this.series.set(key, s);
    }
    return s;
  }

  observeRequest(method: string, route: string, status: number, seconds: number): void {
    observe(this.route(method, route), status, seconds);
  }

  observeJob(name: string, ok: boolean): void {
    const c = this.jobRuns.get(name) ?? { ok: 0, failed: 0 };
    if (ok) c.ok++;
    else c.failed++;
    this.jobRuns.set(name, c);
  }

  gauge(name: string, help: string, read: () => number): void {
    this.gauges.set(name, { help, read });
  }

  render(): string {
    const out: string[] = [];
    const esc = (v: string) => v.replace(/\\/g, "\\\\").replace(/"/g, '\\"').replace(/\n/g, "\\n");
    out.push("# HELP herald_http_requests_total HTTP requests by route template and status.", "# TYPE herald_http_requests_total counter");
    for (const s of this.series.values()) {
      for (const [status, n] of s.statuses) out.push(`herald_http_requests_total{method="${esc(s.method)}",route="${esc(s.route)}",status="${status}"} ${n}`);
    }
    out.push("# HELP herald_http_request_duration_seconds Request latency.", "# TYPE herald_http_request_duration_seconds histogram");
    for (const s of this.series.values()) {
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
    out.push("# HELP herald_job_runs_total Job runs by outcome.", "# TYPE herald_job_runs_total counter");
    for (const [name, c] of this.jobRuns) {
      out.push(`herald_job_runs_total{job="${esc(name)}",outcome="ok"} ${c.ok}`);
      out.push(`herald_job_runs_total{job="${esc(name)}",outcome="failed"} ${c.failed}`);
    }
    for (const [name, g] of this.gauges) {
      out.push(`# HELP ${name} ${g.help}`, `# TYPE ${name} gauge`, `${name} ${g.read()}`);
    }
    return out.join("\n") + "\n";
  }
}
