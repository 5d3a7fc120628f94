import { afterEach, expect, test } from "bun:test";
import { createTestApp, type TestApp } from "../support/app";

let h: TestApp;
afterEach(() => h?.close());

test("every run is recorded in job_runs with outcome, error and duration", async () => {
  h = createTestApp();
  let calls = 0;
  h.ctx.jobs.register({
    name: "test-ok",
    pattern: "0 0 * * * *",
    description: "succeeds",
    run: () => {
      calls++;
    },
  });
  h.ctx.jobs.register({
    name: "test-fail",
    pattern: "0 0 * * * *",
    description: "fails",
    run: async () => {
      throw new Error("rpc down");
    },
  });

  const ok = await h.ctx.jobs.runNow("test-ok");
  const failed = await h.ctx.jobs.runNow("test-fail");
  expect(ok).toMatchObject({ name: "test-ok", ok: true, error: null });
  expect(failed).toMatchObject({ name: "test-fail", ok: false, error: "rpc down" });
  expect(calls).toBe(1);

  const rows = h.ctx.db.sqlite.query("SELECT name, ok, error, trigger, started_at, finished_at, duration_ms FROM job_runs ORDER BY id").all() as any[];
  expect(rows).toEqual([
    expect.objectContaining({ name: "test-ok", ok: 1, error: null, trigger: "manual", started_at: "2026-01-01T00:00:00.000Z" }),
    expect.objectContaining({ name: "test-fail", ok: 0, error: "rpc down", trigger: "manual" }),
  ]);
  expect(rows[0].finished_at).not.toBeNull();
  expect(rows[0].duration_ms).toBeGreaterThanOrEqual(0);

  const listed = Object.fromEntries(h.ctx.jobs.list().map((j) => [j.name, j]));
  expect(listed["test-fail"]!.last_run).toMatchObject({ ok: false, error: "rpc down" });
  expect(listed["request-log-prune"]).toMatchObject({ enabled: true, scheduled: false, last_run: null });
  expect(await h.ctx.metrics.render()).toContain('herald_job_runs_total{job="test-fail",outcome="failed"} 1');
});

test("jobs are not scheduled by the test factory, and disabled jobs are never scheduled", async () => {
  h = createTestApp({ env: { JOBS_DISABLED: "job-runs-prune" } });
  expect(h.ctx.jobs.started).toBe(false);
  h.ctx.jobs.start();
  const byName = Object.fromEntries(h.ctx.jobs.list().map((j) => [j.name, j]));
  expect(byName["request-log-prune"]!.scheduled).toBe(true);
  expect(byName["request-log-prune"]!.next_run_at).not.toBeNull();
  expect(byName["job-runs-prune"]).toMatchObject({ enabled: false, scheduled: false });
  await h.ctx.jobs.stop();
  expect(h.ctx.jobs.started).toBe(false);
});

test("unknown job names and bad patterns are refused", async () => {
  h = createTestApp();
  await expect(h.ctx.jobs.runNow("nope")).rejects.toThrow(/unknown job nope/);
  expect(() => h.ctx.jobs.register({ name: "bad", pattern: "every minute", description: "", run: () => {} })).toThrow();
});

test("the request-log prune job deletes rows past the retention window only", async () => {
  h = createTestApp({ env: { REQUEST_LOG_RETENTION_DAYS: "14" } });
  const insert = h.ctx.db.sqlite.prepare("INSERT INTO request_log (at, method, route, status, latency_us, request_id) VALUES (?, 'GET', '/x', 200, 1, 'r')");
  insert.run("2025-12-17T23:59:59.000Z"); // 14 days + 1 s old
  insert.run("2025-12-18T00:00:01.000Z");
  await h.ctx.jobs.runNow("request-log-prune");
  const left = h.ctx.db.sqlite.query("SELECT at FROM request_log").all();
  expect(left).toEqual([{ at: "2025-12-18T00:00:01.000Z" }]);
});
