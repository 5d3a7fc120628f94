import { afterEach, expect, test } from "bun:test";
import { Cron } from "croner";
import { loadConfig } from "../../src/config";
import { failuresSince, triggersOf } from "../../src/jobs/store";
import { openTestApp, type TestApp } from "../support/app";
import { testEngine } from "../support/engine";

// The job registry on the storage port: the same cases on SQLite and, with HERALD_TEST_ENGINE=postgres, on
// PostgreSQL. Effects are read back through ctx.store, never through the SQLite handle.

let h: TestApp | undefined;
afterEach(async () => {
  await h?.close();
  h = undefined;
});

test("every run is recorded in job_runs with outcome, error, duration and the instance that ran it", async () => {
  h = await openTestApp({ env: { HERALD_INSTANCE_ID: "instance-a" } });
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

  const rows = await h.ctx.store.all<Record<string, any>>(
    "SELECT id, name, ok, error, trigger, started_at, finished_at, duration_ms, instance_id FROM job_runs ORDER BY id",
  );
  expect(rows).toEqual([
    expect.objectContaining({
      id: ok.run_id,
      name: "test-ok",
      ok: 1,
      error: null,
      trigger: "manual",
      started_at: "2026-01-01T00:00:00.000Z",
      instance_id: "instance-a",
    }),
    expect.objectContaining({ id: failed.run_id, name: "test-fail", ok: 0, error: "rpc down", trigger: "manual", instance_id: "instance-a" }),
  ]);
  expect(rows[0]!.finished_at).not.toBeNull();
  expect(rows[0]!.duration_ms).toBeGreaterThanOrEqual(0);

  const listed = Object.fromEntries((await h.ctx.jobs.list()).map((j) => [j.name, j]));
  expect(listed["test-fail"]!.last_run).toMatchObject({ ok: false, error: "rpc down", instance_id: "instance-a" });
  expect(listed["test-ok"]!.last_run).toMatchObject({ ok: true, error: null });
  expect(listed["request-log-prune"]).toMatchObject({ enabled: true, scheduled: false, last_run: null });
  expect(await h.ctx.metrics.render()).toContain('herald_job_runs_total{job="test-fail",outcome="failed"} 1');
  expect(await failuresSince(h.ctx.store, "2025-12-31T00:00:00.000Z")).toEqual(new Map([["test-fail", 1]]));
  expect(await triggersOf(h.ctx.store, [ok.run_id, 999_999])).toEqual(new Map([[ok.run_id, "manual"]]));
  const successes = Object.fromEntries((await h.ctx.jobs.lastSuccesses()).map((s) => [s.name, s.at]));
  expect(successes["test-ok"]).toBe(rows[0]!.finished_at);
  expect(successes["request-log-prune"]).toBeNull();
});

test("a quiet job's idle tick leaves no row; a tick that worked is recorded whole, as a scheduled run", async () => {
  h = await openTestApp();
  let work = false;
  h.ctx.jobs.register({ name: "test-quiet", pattern: "* * * * * *", description: "drains", quietWhenIdle: true, run: () => ({ idle: !work }) });
  expect(await h.ctx.jobs.tick("test-quiet")).toMatchObject({ ok: true, run_id: 0 });
  expect(await h.ctx.store.all("SELECT id FROM job_runs WHERE name = 'test-quiet'")).toEqual([]);
  work = true;
  const worked = await h.ctx.jobs.tick("test-quiet");
  const row = await h.ctx.store.get<Record<string, any>>("SELECT id, ok, trigger, finished_at, instance_id FROM job_runs WHERE name = 'test-quiet'");
  expect(row).toMatchObject({ id: worked!.run_id, ok: 1, trigger: "schedule", instance_id: h.ctx.instanceId });
  expect(row!.finished_at).not.toBeNull();
});

test("jobs are not scheduled by the test factory, and disabled jobs are never scheduled", async () => {
  h = await openTestApp({ env: { JOBS_DISABLED: "job-runs-prune" } });
  expect(h.ctx.jobs.started).toBe(false);
  h.ctx.jobs.start();
  const byName = Object.fromEntries((await h.ctx.jobs.list()).map((j) => [j.name, j]));
  expect(byName["request-log-prune"]!.scheduled).toBe(true);
  expect(byName["request-log-prune"]!.next_run_at).not.toBeNull();
  expect(byName["job-runs-prune"]).toMatchObject({ enabled: false, scheduled: false });
  await h.ctx.jobs.stop();
  expect(h.ctx.jobs.started).toBe(false);
});

test("a schedule's next run is asked of Croner once and kept until it has passed (every /metrics scrape lists the jobs)", async () => {
  h = await openTestApp({ env: { JOB_SCHEDULES: "auth-prune=*/1 * * * * *" } });
  h.ctx.jobs.start();
  const asked = { n: 0 };
  const nextRun = Cron.prototype.nextRun;
  Cron.prototype.nextRun = function (this: Cron, ...args: Parameters<Cron["nextRun"]>) {
    asked.n++;
    return nextRun.apply(this, args);
  };
  try {
    const first = Object.fromEntries((await h.ctx.jobs.list()).map((j) => [j.name, j.next_run_at]));
    const scheduled = asked.n;
    expect(scheduled).toBeGreaterThan(1);
    const again = Object.fromEntries((await h.ctx.jobs.list()).map((j) => [j.name, j.next_run_at]));
    expect(again).toEqual(first);
    expect(asked.n).toBe(scheduled);
    // The every-second schedule's next run passes: it answers a later time; the others keep theirs.
    await Bun.sleep(Date.parse(first["auth-prune"]!) - Date.now() + 20);
    const later = Object.fromEntries((await h.ctx.jobs.list()).map((j) => [j.name, j.next_run_at]));
    expect(Date.parse(later["auth-prune"]!)).toBeGreaterThan(Date.parse(first["auth-prune"]!));
    const passed = (at: string | null) => at !== null && Date.parse(at) <= Date.now();
    for (const [name, at] of Object.entries(first)) if (name !== "auth-prune" && !passed(at)) expect([name, later[name]]).toEqual([name, at]);
  } finally {
    Cron.prototype.nextRun = nextRun;
    await h.ctx.jobs.stop();
  }
});

test("JOB_SCHEDULES gives a job another schedule; a name Herald does not have, or a bad pattern, is refused", async () => {
  h = await openTestApp({ env: { JOB_SCHEDULES: "auth-prune=*/2 * * * * *;job-runs-prune=0 0 4 * * *" } });
  const byName = Object.fromEntries((await h.ctx.jobs.list()).map((j) => [j.name, j]));
  expect([byName["auth-prune"]!.pattern, byName["job-runs-prune"]!.pattern]).toEqual(["*/2 * * * * *", "0 0 4 * * *"]);
  expect(byName["request-log-prune"]!.pattern).toBe("0 17 * * * *");
  await h.close();
  h = undefined;
  if (testEngine() === "sqlite") await expect(openTestApp({ env: { JOB_SCHEDULES: "auth-prun=*/2 * * * * *" } })).rejects.toThrow(/auth-prun/);
  await expect(openTestApp({ env: { JOB_SCHEDULES: "auth-prune=every minute" } })).rejects.toThrow();
  expect(() => loadConfig({ JOB_SCHEDULES: "auth-prune" })).toThrow(/JOB_SCHEDULES/);
});

test("unknown job names and bad patterns are refused", async () => {
  h = await openTestApp();
  await expect(h.ctx.jobs.runNow("nope")).rejects.toThrow(/unknown job nope/);
  await expect(h.ctx.jobs.tick("nope")).rejects.toThrow(/unknown job nope/);
  expect(() => h!.ctx.jobs.register({ name: "bad", pattern: "every minute", description: "", run: () => {} })).toThrow();
});

test("the request-log prune job deletes rows past the retention window only", async () => {
  h = await openTestApp({ env: { REQUEST_LOG_RETENTION_DAYS: "14" } });
  const insert = (at: string) =>
    h!.ctx.store.run("INSERT INTO request_log (at, method, route, status, latency_us, request_id) VALUES (?, 'GET', '/x', 200, 1, 'r')", [at]);
  await insert("2025-12-17T23:59:59.000Z"); // 14 days + 1 s old
  await insert("2025-12-18T00:00:01.000Z");
  expect((await h.ctx.jobs.runNow("request-log-prune")).ok).toBe(true);
  expect(await h.ctx.store.all("SELECT at FROM request_log")).toEqual([{ at: "2025-12-18T00:00:01.000Z" }]);
});

test("the job-runs prune job deletes runs older than 90 days", async () => {
  h = await openTestApp();
  const insert = (startedAt: string) =>
    h!.ctx.store.run("INSERT INTO job_runs (name, started_at, trigger, ok) VALUES ('old-job', ?, 'schedule', 1)", [startedAt]);
  await insert("2025-10-02T23:59:59.000Z"); // 90 days + 1 s before the fake clock's 2026-01-01
  await insert("2025-10-03T00:00:01.000Z");
  expect((await h.ctx.jobs.runNow("job-runs-prune")).ok).toBe(true);
  const left = await h.ctx.store.all<{ started_at: string }>("SELECT started_at FROM job_runs WHERE name = 'old-job'");
  expect(left).toEqual([{ started_at: "2025-10-03T00:00:01.000Z" }]);
});

test("a run that outlasts its schedule's period is not overlapped: the ticks meanwhile are skipped (Croner's protect)", async () => {
  h = await openTestApp();
  const runs = { started: 0, active: 0, most: 0, startedWhenFirstEnded: -1 };
  h.ctx.jobs.register({
    name: "test-slow",
    pattern: "* * * * * *",
    description: "takes 2.5 s, ticks every second",
    run: async () => {
      runs.started++;
      runs.most = Math.max(runs.most, ++runs.active);
      await Bun.sleep(2_500);
      runs.active--;
      if (runs.startedWhenFirstEnded < 0) runs.startedWhenFirstEnded = runs.started;
    },
  });
  h.ctx.jobs.start();
  const end = Date.now() + 8_000;
  while (runs.startedWhenFirstEnded < 0 && Date.now() < end) await Bun.sleep(50);
  await h.ctx.jobs.stop();
  expect(runs.startedWhenFirstEnded).toBe(1);
  expect(runs.most).toBe(1);
});
