import { afterEach, describe, expect, test } from "bun:test";
import type { Level } from "../../src/status/checks/types";
import { CHECK_NAMES } from "../../src/status/checks/engine";
import { computeUptime, mergeIntervals, type Point } from "../../src/status/uptime-math";
import { openTestApp, jsonInit, type TestApp } from "../support/app";
import { FakeClock } from "../support/clock";
import { createAdminToken } from "../support/partner";
import { insertSnapshot, iso, policyFile } from "./support";

// Uptime against windows worked out by hand, including maintenance exclusion, gaps and the snapshot before
// the window. Minutes are the unit of every comment: M = 60 000 ms.

const M = 60_000;
let h: TestApp | undefined;
const cleanups: Array<() => void> = [];
afterEach(async () => {
  await h?.close();
  h = undefined;
  while (cleanups.length) cleanups.pop()!();
});

const pt = (minute: number, overall: Level, degraded: Record<string, Level> = {}, checks: readonly string[] = ["a", "b"]): Point => ({
  at: minute * M,
  overall,
  degraded,
  checks,
});

/**
 * The worked example of docs/status.md: window [0, 60); a snapshot every minute at 0–39 and 50–59; overall
 * (and check a) warn at 10–19; maintenance [15, 25); max gap 1 minute.
 */
function example(): Point[] {
  const points: Point[] = [];
  for (let m = 0; m < 60; m++) {
    if (m >= 40 && m < 50) continue;
    const warn = m >= 10 && m < 20;
    points.push(pt(m, warn ? "warn" : "ok", warn ? { a: "warn" } : {}));
  }
  return points;
}

describe("computeUptime (pure)", () => {
  const base = { start: 0, end: 60 * M, maintenance: [{ start: 15 * M, end: 25 * M }], maxGapMs: 1 * M, checkNames: ["a", "b"] };

  test("maintenance excluded: 40 observed, 5 degraded → 12.5 %", () => {
    const r = computeUptime({ ...base, points: example(), excludeMaintenance: true });
    // spoken for: [0,40) + [50,60) = 50; minus maintenance [15,25) = 40 observed
    // degraded: [10,20) minus [15,20) = [10,15) = 5 → 5 / 40 = 12.5 %
    expect(r.overall).toEqual({
      observed_minutes: 40,
      degraded_minutes: 5,
      maintenance_minutes: 10,
      unobserved_minutes: 10,
      degraded_pct: 12.5,
      uptime_pct: 87.5,
    });
    expect(r.checks.a).toMatchObject({ observed_minutes: 40, degraded_minutes: 5, degraded_pct: 12.5 });
    expect(r.checks.b).toMatchObject({ observed_minutes: 40, degraded_minutes: 0, degraded_pct: 0, uptime_pct: 100 });
  });

  test("maintenance counted: 50 observed, 10 degraded → 20 %", () => {
    const r = computeUptime({ ...base, points: example(), excludeMaintenance: false });
    expect(r.overall).toMatchObject({ observed_minutes: 50, degraded_minutes: 10, maintenance_minutes: 10, degraded_pct: 20, uptime_pct: 80 });
  });

  test("the snapshot before the window speaks for its start; time past the max gap is unobserved", () => {
    // window [0, 10); bad at −1 speaks for [−1, 2) → [0, 2) inside; ok at 2 speaks for [2, 5) (gap 3); [5, 10) nobody
    const r = computeUptime({
      start: 0,
      end: 10 * M,
      points: [pt(-1, "bad", { a: "bad" }), pt(2, "ok")],
      maintenance: [],
      excludeMaintenance: true,
      maxGapMs: 3 * M,
      checkNames: ["a"],
    });
    // observed 2 + 3 = 5, degraded 2 → 40 %
    expect(r.overall).toEqual({ observed_minutes: 5, degraded_minutes: 2, maintenance_minutes: 0, unobserved_minutes: 5, degraded_pct: 40, uptime_pct: 60 });
  });

  test("only the last snapshot before the window counts, and a snapshot at the very end speaks for nothing", () => {
    const r = computeUptime({
      start: 0,
      end: 10 * M,
      points: [pt(-20, "bad"), pt(-2, "ok"), pt(5, "warn"), pt(10, "bad")],
      maintenance: [],
      excludeMaintenance: true,
      maxGapMs: 10 * M,
      checkNames: [],
    });
    // ok at −2 speaks for [−2, 5) → [0, 5); warn at 5 for [5, 10); bad at 10 for nothing inside → 5 of 10
    expect(r.overall).toMatchObject({ observed_minutes: 10, degraded_minutes: 5, degraded_pct: 50 });
  });

  test("a check absent from a snapshot's check set is not observed then (it did not exist yet)", () => {
    const points = [pt(0, "ok", {}, ["a"]), pt(30, "warn", { b: "warn" }, ["a", "b"])];
    const r = computeUptime({ start: 0, end: 60 * M, points, maintenance: [], excludeMaintenance: true, maxGapMs: 30 * M, checkNames: ["a", "b"] });
    expect(r.checks.a).toMatchObject({ observed_minutes: 60, degraded_minutes: 0 });
    expect(r.checks.b).toMatchObject({ observed_minutes: 30, degraded_minutes: 30, degraded_pct: 100 });
  });

  test("a merged run of identical snapshots gives exactly what the individual snapshots give", () => {
    const single = computeUptime({ ...base, points: example(), excludeMaintenance: true });
    // The same history as runs: [0,10) ok, [10,20) warn, [20,40) ok, [50,60) ok — each with `last`.
    const runs: Point[] = [
      { ...pt(0, "ok"), last: 9 * M },
      { ...pt(10, "warn", { a: "warn" }), last: 19 * M },
      { ...pt(20, "ok"), last: 39 * M },
      { ...pt(50, "ok"), last: 59 * M },
    ];
    expect(computeUptime({ ...base, points: runs, excludeMaintenance: true })).toEqual(single);
  });

  test("overlapping maintenance windows are merged, not subtracted twice; nothing observed → null", () => {
    expect(
      mergeIntervals([
        { start: 20, end: 40 },
        { start: 0, end: 30 },
        { start: 50, end: 50 },
      ]),
    ).toEqual([{ start: 0, end: 40 }]);
    const points = Array.from({ length: 60 }, (_, m) => pt(m, "ok"));
    const r = computeUptime({
      ...base,
      points,
      maintenance: [
        { start: 0, end: 30 * M },
        { start: 20 * M, end: 40 * M },
      ],
      excludeMaintenance: true,
    });
    expect(r.overall).toMatchObject({ observed_minutes: 20, maintenance_minutes: 40, degraded_pct: 0 });
    const none = computeUptime({ ...base, points: [], excludeMaintenance: true });
    expect(none.overall).toEqual({
      observed_minutes: 0,
      degraded_minutes: 0,
      maintenance_minutes: 10,
      unobserved_minutes: 60,
      degraded_pct: null,
      uptime_pct: null,
    });
  });
});

describe("GET /api/public/system-status/uptime", () => {
  const T0 = "2026-01-01T00:00:00.000Z";

  /** The worked example in the database, the maintenance window scheduled through the admin API (in advance). */
  async function exampleApp() {
    const f = policyFile("policy.yaml", "checks:\n  uptime:\n    max_sample_gap_seconds: 60\n");
    cleanups.push(f.remove);
    h = await openTestApp({ clock: new FakeClock(T0), env: { STATUS_POLICY_PATH: f.path } });
    const token = await createAdminToken(h);
    const created = await h.json(
      "/admin/status/maintenance",
      jsonInit("POST", { starts_at: iso(T0, 15), ends_at: iso(T0, 25), title: "Upgrade" }, { authorization: `Bearer ${token}` }),
    );
    expect(created.status).toBe(201);
    for (let m = 0; m < 60; m++) {
      if (m >= 40 && m < 50) continue;
      const warn = m >= 10 && m < 20;
      await insertSnapshot(h, iso(T0, m), warn ? "warn" : "ok", warn ? { chain_rpc: "warn" } : {});
    }
    h.clock.set(iso(T0, 60));
    return h;
  }

  test("the worked example: 12.5 % degraded with maintenance excluded (the default), 20 % with it counted", async () => {
    const h = await exampleApp();
    const r = await h.json("/api/public/system-status/uptime?hours=1");
    expect(r.status).toBe(200);
    expect(r.body).toMatchObject({
      selected_hours: 1,
      window: { start_utc: T0, end_utc: iso(T0, 60) },
      exclude_maintenance: true,
      method: "time_weighted_snapshots",
      max_sample_gap_seconds: 60,
      overall: { observed_minutes: 40, degraded_minutes: 5, maintenance_minutes: 10, unobserved_minutes: 10, degraded_pct: 12.5, uptime_pct: 87.5 },
    });
    expect(r.body.checks.chain_rpc).toMatchObject({ degraded_pct: 12.5 });
    expect(r.body.checks.database).toMatchObject({ degraded_pct: 0, observed_minutes: 40 });
    expect(Object.keys(r.body.checks)).toEqual([...CHECK_NAMES]);
    const counted = await h.json("/api/public/system-status/uptime?hours=1&exclude_maintenance=0");
    expect(counted.body).toMatchObject({ exclude_maintenance: false, overall: { observed_minutes: 50, degraded_minutes: 10, degraded_pct: 20 } });
    // Monitoring began at the window's start: a full window; 50 of its 60 minutes were spoken for.
    expect(r.body).toMatchObject({ observed_since: T0, partial_window: false, coverage_pct: 83.333 });
    // By component: chain_rpc belongs to chain_data, the rest never degraded.
    expect(r.body.components.chain_data).toMatchObject({ degraded_pct: 12.5 });
    expect(r.body.components.api).toMatchObject({ degraded_pct: 0, observed_minutes: 40 });
    expect(Object.keys(r.body.components)).toEqual(["api", "webhooks", "chain_data", "jobs"]);
  });

  test("a window reaching back before monitoring began counts only the time since (observed_since, partial_window, coverage_pct)", async () => {
    const h = await exampleApp();
    // 24 h ending one hour after the first snapshot: the same figures as the hour, over 1/24 of the window.
    const r = await h.json("/api/public/system-status/uptime?hours=24");
    expect(r.body).toMatchObject({ observed_since: T0, partial_window: true, coverage_pct: 3.472, overall: { observed_minutes: 40, degraded_pct: 12.5 } });
    const empty = await openTestApp({ clock: new FakeClock(T0) });
    cleanups.push(() => empty.close());
    const none = await empty.json("/api/public/system-status/uptime?hours=24");
    expect(none.body).toMatchObject({ observed_since: null, partial_window: true, coverage_pct: 0, overall: { degraded_pct: null, uptime_pct: null } });
  });

  test("the policy's exclude_maintenance_default applies when the query does not say", async () => {
    const f = policyFile("policy.yaml", "exclude_maintenance_default: false\n");
    cleanups.push(f.remove);
    h = await openTestApp({ clock: new FakeClock(T0), env: { STATUS_POLICY_PATH: f.path } });
    expect((await h.json("/api/public/system-status/uptime")).body.exclude_maintenance).toBe(false);
    expect((await h.json("/api/public/system-status/uptime?exclude_maintenance=true")).body.exclude_maintenance).toBe(true);
  });

  test("a new snapshot or maintenance change is seen at once (the per-process cache never serves stale data)", async () => {
    const h = await exampleApp();
    expect((await h.json("/api/public/system-status/uptime?hours=1")).body.overall.degraded_pct).toBe(12.5);
    // A later bad snapshot (minute 60 → the clock moves to 61): it speaks for [60, 61).
    await insertSnapshot(h, iso(T0, 60), "bad", { database: "bad" });
    h.clock.set(iso(T0, 61));
    // window [1, 61): spoken for [1,40) + [50,61) = 50, minus maintenance 10 = 40; degraded [10,15) + [60,61) = 6
    expect((await h.json("/api/public/system-status/uptime?hours=1")).body.overall).toMatchObject({
      observed_minutes: 40,
      degraded_minutes: 6,
      degraded_pct: 15,
    });
    // Deleting the maintenance window counts its time again: 50 observed, degraded [10,20) + [60,61) = 11 → 22 %
    const token = await createAdminToken(h, "second");
    expect((await h.json("/admin/status/maintenance/1", { method: "DELETE", headers: { authorization: `Bearer ${token}` } })).status).toBe(200);
    expect((await h.json("/api/public/system-status/uptime?hours=1")).body.overall).toMatchObject({
      observed_minutes: 50,
      degraded_minutes: 11,
      degraded_pct: 22,
    });
  });

  test("bad hours or exclude_maintenance are 400 invalid_query", async () => {
    h = await openTestApp();
    for (const q of ["hours=0", "hours=2161", "hours=12h", "exclude_maintenance=yes"]) {
      const r = await h.json(`/api/public/system-status/uptime?${q}`);
      expect(r.status).toBe(400);
      expect(r.body.error).toBe("invalid_query");
    }
    expect((await h.json("/api/public/system-status/uptime?hours=2160")).status).toBe(200);
  });
});
