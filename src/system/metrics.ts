// In-process Prometheus counters. Per-instance memory is right for metrics: each instance is scraped alone.

const BUCKETS_SECONDS = [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10];

export class Metrics {
  private requests = new Map<string, number>();
  private latency = new Map<string, { buckets: number[]; sum: number; count: number }>();
  private jobRuns = new Map<string, { ok: number; failed: number }>();
  /** Extra gauges other domains publish (webhook backlog, dead letters …), read at scrape time. */
  private gauges = new Map<string, { help: string; read: () => number }>();

  observeRequest(method: string, route: string, status: number, seconds: number): void {
    const key = `${method}\u0000${route}\u0000${status}`;
    this.requests.set(key, (this.requests.get(key) ?? 0) + 1);
    const lk = `${method}\u0000${route}`;
    let h = this.latency.get(lk);
    if (!h) {
      h = { buckets: BUCKETS_SECONDS.map(() => 0), sum: 0, count: 0 };
      this.latency.set(lk, h);
    }
    for (let i = 0; i < BUCKETS_SECONDS.length; i++) if (seconds <= BUCKETS_SECONDS[i]!) h.buckets[i]!++;
    h.sum += seconds;
    h.count++;
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
    for (const [k, n] of this.requests) {
      const [method, route, status] = k.split("\u0000") as [string, string, string];
      out.push(`herald_http_requests_total{method="${esc(method)}",route="${esc(route)}",status="${status}"} ${n}`);
    }
    out.push("# HELP herald_http_request_duration_seconds Request latency.", "# TYPE herald_http_request_duration_seconds histogram");
    for (const [k, h] of this.latency) {
      const [method, route] = k.split("\u0000") as [string, string];
      const labels = `method="${esc(method)}",route="${esc(route)}"`;
      BUCKETS_SECONDS.forEach((le, i) => out.push(`herald_http_request_duration_seconds_bucket{${labels},le="${le}"} ${h.buckets[i]}`));
      out.push(`herald_http_request_duration_seconds_bucket{${labels},le="+Inf"} ${h.count}`);
      out.push(`herald_http_request_duration_seconds_sum{${labels}} ${h.sum}`);
      out.push(`herald_http_request_duration_seconds_count{${labels}} ${h.count}`);
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
