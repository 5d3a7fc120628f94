import { afterEach, expect, test } from "bun:test";
import { createTestApp, openTestApp, type TestApp } from "../support/app";
import { testEngine } from "../support/engine";
import { startCluster } from "../support/postgres";
import { Metrics } from "../../src/http/metrics";
import { testOn } from "../support/skipped";

// The app's cases run on the engine HERALD_TEST_ENGINE names (the SQLite file, or PostgreSQL); the write-lock case
// is the SQLite file's, and the stopped cluster PostgreSQL's.

let h: TestApp | undefined;
afterEach(async () => {
  await h?.close();
  h = undefined;
});

test("healthz says the process is up", async () => {
  h = await openTestApp();
  const { status, body } = await h.json("/healthz");
  expect(status).toBe(200);
  expect(body).toMatchObject({ success: true, status: "up", version: expect.any(String) });
});

test("readyz checks the database, migrations and jobs, and names the engine", async () => {
  h = await openTestApp();
  const { status, body } = await h.json("/readyz");
  expect(status).toBe(200);
  expect(body.ready).toBe(true);
  expect(body.database).toEqual({ engine: testEngine() });
  expect(body.checks.database).toEqual(
    testEngine() === "sqlite" ? { ok: true, detail: "writable" } : { ok: true, detail: "answers; a primary, not in recovery" },
  );
  expect(body.checks.migrations.ok).toBe(true);
  expect(body.checks.migrations.detail).toMatch(/^(\d+)\/\1 applied$/);
  expect(body.checks.jobs.detail).toContain("disabled");
});

test("a burst of readiness probes shares one database check: all 200, and on PostgreSQL a few statements, not one set each", async () => {
  h = await openTestApp();
  const app = h;
  const statements = () => app.ctx.store.health.counts.statements;
  const before = statements();
  const answers = await Promise.all(Array.from({ length: 100 }, () => app.json("/readyz")));
  expect(answers.map((a) => a.status)).toEqual(Array(100).fill(200));
  expect(new Set(answers.map((a) => JSON.stringify(a.body.checks.database))).size).toBe(1);
  if (testEngine() === "postgres") {
    // One ping and one migrations read per check; probes that arrive while one runs join it.
    const burst = statements() - before;
    expect(burst).toBeGreaterThanOrEqual(2);
    expect(burst).toBeLessThanOrEqual(10);
    // Not a cache: a probe after the check has finished asks the database again.
    const after = statements();
    expect((await app.json("/readyz")).status).toBe(200);
    expect(statements() - after).toBeGreaterThanOrEqual(2);
  }
});

test("readyz is 503 when jobs should run but are not scheduled", async () => {
  h = await openTestApp({ env: { JOBS_ENABLED: "1" } });
  const { status, body } = await h.json("/readyz");
  expect(status).toBe(503);
  expect(body.checks.jobs).toEqual({ ok: false, detail: "not started" });
  h.ctx.jobs.start();
  expect((await h.json("/readyz")).status).toBe(200);
  await h.ctx.jobs.stop();
});

testOn("postgres", "test/system/health.test.ts")(
  "readyz is 503 with the JSON body, never a 500, when PostgreSQL is gone",
  async () => {
    // A cluster of its own, stopped under the running app (the shared test cluster serves the other suites).
    const cluster = await startCluster();
    let stopped = false;
    try {
      h = await openTestApp({ env: { DATABASE_URL: cluster.url } });
      expect((await h.json("/readyz")).status).toBe(200);
      cluster.stop();
      stopped = true;
      const { status, body } = await h.json("/readyz");
      expect(status).toBe(503);
      expect(body).toMatchObject({ success: false, error: "service_unavailable", ready: false, database: { engine: "postgres" } });
      expect(body.checks.database.ok).toBe(false);
      expect(body.checks.database.detail).toStartWith("not available: ");
      expect(body.checks.migrations).toEqual({ ok: false, detail: "not read: the database is not available" });
    } finally {
      if (!stopped) cluster.stop();
    }
  },
  120_000,
);

test("readyz answers within a second behind a burst of 1,000 write transactions, 200 once they are through", async () => {
  h = await openTestApp();
  const app = h;
  // Each its own transaction, all queued at once: the probe's write check (SQLite) or ping (PostgreSQL) comes after them.
  // Settled, not all fulfilled: on PostgreSQL some may wait past their pool deadline (503 db_unavailable for a request).
  const burst = Promise.allSettled(
    Array.from({ length: 1000 }, (_, i) =>
      app.ctx.store.tx((t) => t.run("INSERT INTO job_leases (name, holder, until_ms, acquired_at_ms) VALUES (?, 'test', 0, 0)", [`burst-${i}`])),
    ),
  );
  const started = performance.now();
  const probe = await app.json("/readyz");
  const probeMs = performance.now() - started;
  expect({ probeMs: probeMs < 1000, status: [200, 503].includes(probe.status) }).toEqual({ probeMs: true, status: true });
  await burst;
  expect((await app.json("/readyz")).status).toBe(200);
});

testOn("postgres", "test/system/health.test.ts")(
  "readyz answers 503 within a second while every pooled connection is busy, naming the check that ran out of time; 200 after",
  async () => {
    h = await openTestApp({ env: { DATABASE_POOL_MAX: "2" } });
    const app = h;
    // Both connections of the pool held for 2 s by statements of their own (within their 5 s deadline).
    const busy = Promise.all([app.ctx.store.get("SELECT pg_sleep(2)"), app.ctx.store.get("SELECT pg_sleep(2)")]);
    await Bun.sleep(100);
    const started = performance.now();
    const probe = await app.json("/readyz");
    const probeMs = performance.now() - started;
    expect({ probeMs: probeMs < 1000, status: probe.status }).toEqual({ probeMs: true, status: 503 });
    expect(probe.body.checks.database.ok).toBe(false);
    expect(probe.body.checks.database.detail).toMatch(/within 700 ms/);
    await busy;
    let status = 0;
    for (let i = 0; i < 50 && status !== 200; i++) {
      status = (await app.json("/readyz")).status;
      if (status !== 200) await Bun.sleep(100);
    }
    expect(status).toBe(200);
  },
  30_000,
);

// A second connection holding the SQLite file's write lock: PostgreSQL has no file lock to hold.
testOn("sqlite", "test/system/health.test.ts")("readyz is 503 within a second when another process holds the write lock; 200 once it lets go", async () => {
  h = createTestApp();
  const { Database } = await import("bun:sqlite");
  const other = new Database(h.ctx.config.dbPath);
  other.exec("PRAGMA busy_timeout = 0");
  other.exec("BEGIN IMMEDIATE");
  try {
    // The service's own connection would wait its busy_timeout (5 s) for the lock: the check waits only what is left
    // of its 700 ms.
    const started = performance.now();
    const { status, body } = await h.json("/readyz");
    const probeMs = performance.now() - started;
    expect({ status, probeMs: probeMs < 1000 }).toEqual({ status: 503, probeMs: true });
    expect(body.checks.database.ok).toBe(false);
    expect(body.checks.database.detail).toContain("not writable: ");
    other.exec("ROLLBACK");
    expect((await h.json("/readyz")).status).toBe(200);
  } finally {
    if (other.inTransaction) other.exec("ROLLBACK");
    other.close();
  }
});

test("metrics expose request counts by route template, latency histograms and DB size", async () => {
  h = await openTestApp({ env: { METRICS_PUBLIC: "1" } });
  await h.request("/healthz");
  await h.request("/healthz");
  await Bun.sleep(0);
  const res = await h.request("/metrics");
  expect(res.headers.get("content-type")).toContain("text/plain");
  const text = await res.text();
  expect(text).toContain('herald_http_requests_total{method="GET",route="/healthz",status="200"} 2');
  expect(text).toContain('herald_http_request_duration_seconds_count{method="GET",route="/healthz"} 2');
  expect(text).toMatch(/herald_db_size_bytes \d+/);
});

test("latency histogram buckets are cumulative and statuses are counted per route", async () => {
  const m = new Metrics({ processMetrics: false });
  m.observeRequest("GET", "/x", 200, 0.0005);
  m.observeRequest("GET", "/x", 200, 0.003);
  m.observeRequest("GET", "/x", 404, 0.2);
  m.observeRequest("GET", "/x", 200, 60);
  const text = await m.render();
  const bucket = (le: string) =>
    Number(text.match(new RegExp(`duration_seconds_bucket\\{method="GET",route="/x",le="${le.replace(/[.+]/g, "\\$&")}"\\} (\\d+)`))?.[1]);
  expect([bucket("0.001"), bucket("0.0025"), bucket("0.005"), bucket("0.25"), bucket("10"), bucket("+Inf")]).toEqual([1, 1, 2, 3, 3, 4]);
  expect(text).toContain('herald_http_requests_total{method="GET",route="/x",status="200"} 3');
  expect(text).toContain('herald_http_requests_total{method="GET",route="/x",status="404"} 1');
  expect(text).toContain('herald_http_request_duration_seconds_sum{method="GET",route="/x"} 60.2035');
});

test("process and GC metrics come from prom-client with the herald_ prefix; counters are typed counter", async () => {
  const m = new Metrics();
  let n = 0;
  m.counter("herald_test_events", "Events counted by their owner.", () => ++n);
  m.observeJob("snapshot", true);
  const text = await m.render();
  for (const name of ["herald_process_cpu_user_seconds_total", "herald_process_resident_memory_bytes", "herald_nodejs_heap_size_total_bytes"]) {
    expect(text).toContain(`# TYPE ${name}`);
  }
  // Not the per-heap-space series: they walk the whole heap on every scrape under Bun (src/http/metrics.ts).
  expect(text).not.toContain("herald_nodejs_heap_space_size");
  expect(text).toContain("# TYPE herald_test_events counter");
  expect(text).toMatch(/^herald_test_events 1$/m);
  expect(text).toContain('herald_job_runs_total{job="snapshot",outcome="ok"} 1');
  // Every sample line is `name{labels} value` with a finite number (what a Prometheus scrape needs).
  for (const line of text.split("\n").filter((l) => l && !l.startsWith("#")))
    expect(line).toMatch(/^[a-zA-Z_:][a-zA-Z0-9_:]*(\{.*\})? -?[0-9.e+-]+$|^[a-zA-Z_:][a-zA-Z0-9_:]*(\{.*\})? (NaN|Nan|\+Inf)$/); // prom-client prints NaN as "Nan"; Prometheus parses it in any case
});
