import { afterEach, describe, expect, test } from "bun:test";
import { reliabilityCheck, reliabilityOf } from "../../src/status/checks/reliability";
import { DEFAULT_POLICY } from "../../src/status/checks/policy";
import { openTestApp, type TestApp } from "../support/app";
import { FakeClock } from "../support/clock";
import { insertRun, policyFile } from "./support";

// The jobs reliability numbers against a job history built by hand. Every expected number is worked out in
// the comments from the definitions in docs/status.md, not by running the code.

let h: TestApp | undefined;
const cleanups: Array<() => void> = [];
afterEach(async () => {
  await h?.close();
  h = undefined;
  while (cleanups.length) cleanups.pop()!();
});

// now = 2026-01-08T00:00Z; window_days = 7 → runs that started at or after 2026-01-01T00:00Z count.
const NOW = "2026-01-08T00:00:00.000Z";

/** [job, started_at, finished_at, ok] — deliberately NOT in time order: the check must order them itself. */
const HISTORY: Array<[string, string, string | null, boolean | null]> = [
  // alpha: ok, FAIL, FAIL, ok, ok, ok
  //   one failure episode (runs 2–3): first failure finished 01:01, next success finished 03:31 → 150 min
  //   current streak: the 3 successes after the last failure
  ["alpha", "2026-01-02T04:00:00.000Z", "2026-01-02T04:01:00.000Z", true],
  ["alpha", "2026-01-02T00:00:00.000Z", "2026-01-02T00:01:00.000Z", true],
  ["alpha", "2026-01-02T02:00:00.000Z", "2026-01-02T02:01:00.000Z", false],
  ["alpha", "2026-01-02T01:00:00.000Z", "2026-01-02T01:01:00.000Z", false],
  ["alpha", "2026-01-02T05:00:00.000Z", "2026-01-02T05:01:00.000Z", true],
  ["alpha", "2026-01-02T03:00:00.000Z", "2026-01-02T03:31:00.000Z", true],
  // beta: FAIL, ok, FAIL, ok, FAIL
  //   episode 1: failed 00:02 → recovered 00:12 = 10 min; episode 2: 00:22 → 00:32 = 10 min
  //   episode 3 (00:40) is not recovered: beta's latest run failed → unresolved; current streak 0
  ["beta", "2026-01-03T00:40:00.000Z", "2026-01-03T00:42:00.000Z", false],
  ["beta", "2026-01-03T00:00:00.000Z", "2026-01-03T00:02:00.000Z", false],
  ["beta", "2026-01-03T00:20:00.000Z", "2026-01-03T00:22:00.000Z", false],
  ["beta", "2026-01-03T00:10:00.000Z", "2026-01-03T00:12:00.000Z", true],
  ["beta", "2026-01-03T00:30:00.000Z", "2026-01-03T00:32:00.000Z", true],
  // gamma: a failure BEFORE the window (ignored, so no episode), then ok, ok → streak 2
  ["gamma", "2025-12-31T23:00:00.000Z", "2025-12-31T23:01:00.000Z", false],
  ["gamma", "2026-01-04T00:05:00.000Z", "2026-01-04T00:05:30.000Z", true],
  ["gamma", "2026-01-04T00:00:00.000Z", "2026-01-04T00:00:30.000Z", true],
  // delta: ok, then a run still in progress (not judged) → streak 1
  ["delta", "2026-01-05T00:00:00.000Z", "2026-01-05T00:01:00.000Z", true],
  ["delta", "2026-01-07T23:59:00.000Z", null, null],
  // epsilon: only an unfinished run → not a job with history in the window at all
  ["epsilon", "2026-01-07T23:59:30.000Z", null, null],
];

// job_count = 4 (alpha, beta, gamma, delta); runs_considered = 6 + 5 + 2 + 1 = 14
// avg_success_streak = (3 + 0 + 2 + 1) / 4 = 1.5
// MTTR samples: 150, 10, 10 → (150 + 10 + 10) / 3 = 56.666… → 56.67; jobs_with_mttr_samples = 2 (alpha, beta)
// unresolved_failure_jobs = 1 (beta)
const EXPECTED = {
  window_days: 7,
  job_count: 4,
  runs_considered: 14,
  avg_success_streak: 1.5,
  avg_mttr_minutes: 56.67,
  jobs_with_mttr_samples: 2,
  unresolved_failure_jobs: 1,
  unresolved_jobs: ["beta"],
};

async function seeded(env: Record<string, string> = {}) {
  h = await openTestApp({ clock: new FakeClock(NOW), env });
  for (const [name, s, f, ok] of HISTORY) await insertRun(h, name, s, f, ok);
  return h;
}

describe("reliability check", () => {
  test("the hand-built history gives the hand-computed numbers, and one unresolved job warns", async () => {
    const h = await seeded();
    const r = await h.json("/api/public/system-status");
    expect(r.status).toBe(200);
    const rel = r.body.checks.reliability;
    expect(rel).toMatchObject({ status: "warn", ...EXPECTED });
    expect(rel.summary).toContain("latest run failed: beta");
    expect(rel.summary).toContain("mean time to recovery 56.67 min");
  });

  test("thresholds at their edges: unresolved below warn → ok; MTTR just above its limit → warn, at it → ok", async () => {
    const below = policyFile("p.yaml", "checks:\n  reliability:\n    unresolved_failure_jobs_warn: 2\n    avg_mttr_minutes_warn: 57\n");
    cleanups.push(below.remove);
    let app = await seeded({ STATUS_POLICY_PATH: below.path });
    // 1 unresolved < 2; 56.67 ≤ 57 → ok
    expect((await app.json("/api/public/system-status")).body.checks.reliability.status).toBe("ok");
    await app.close();
    h = undefined;

    const slow = policyFile("p.yaml", "checks:\n  reliability:\n    unresolved_failure_jobs_warn: 2\n    avg_mttr_minutes_warn: 56\n");
    cleanups.push(slow.remove);
    app = await seeded({ STATUS_POLICY_PATH: slow.path });
    // 56.67 > 56 → warn from the MTTR alone
    expect((await app.json("/api/public/system-status")).body.checks.reliability.status).toBe("warn");
    await app.close();
    h = undefined;

    const bad = policyFile("p.yaml", "checks:\n  reliability:\n    unresolved_failure_jobs_bad: 1\n");
    cleanups.push(bad.remove);
    app = await seeded({ STATUS_POLICY_PATH: bad.path });
    // 1 unresolved ≥ bad 1 → bad
    expect((await app.json("/api/public/system-status")).body.checks.reliability.status).toBe("bad");
  });

  test("a shorter window drops older history: window_days 3 keeps only runs from 2026-01-05 on", async () => {
    const f = policyFile("p.yaml", "checks:\n  reliability:\n    window_days: 3\n");
    cleanups.push(f.remove);
    const h = await seeded({ STATUS_POLICY_PATH: f.path });
    // Only delta's finished run (2026-01-05T00:00) is inside: 1 job, 1 run, streak 1, no episodes.
    expect((await h.json("/api/public/system-status")).body.checks.reliability).toMatchObject({
      status: "ok",
      window_days: 3,
      job_count: 1,
      runs_considered: 1,
      avg_success_streak: 1,
      avg_mttr_minutes: null,
      jobs_with_mttr_samples: 0,
      unresolved_failure_jobs: 0,
      unresolved_jobs: [],
    });
  });

  test("no history: zero jobs, null MTTR, ok", async () => {
    h = await openTestApp({ clock: new FakeClock(NOW) });
    expect((await h.json("/api/public/system-status")).body.checks.reliability).toMatchObject({
      status: "ok",
      job_count: 0,
      avg_success_streak: 0,
      avg_mttr_minutes: null,
    });
  });
});

describe("reliability figures kept between reads", () => {
  /** The window's tallies the app runs (each is one read of every run in the window). */
  function countTallies(app: TestApp): { n: number } {
    const seen = { n: 0 };
    const apart = app.ctx.store.apart.bind(app.ctx.store);
    app.ctx.store.apart = ((task, args) => {
      if (task.name === "status-reliability") seen.n++;
      return apart(task, args);
    }) as typeof apart;
    return seen;
  }
  const reliability = async (app: TestApp) => (await app.json("/api/public/system-status")).body.checks.reliability;

  test("read again only when a run starts or finishes, or a minute has gone by", async () => {
    const app = await seeded();
    const tallies = countTallies(app);
    expect(await reliability(app)).toMatchObject(EXPECTED);
    expect(await reliability(app)).toMatchObject(EXPECTED);
    expect(tallies.n).toBe(1);
    // A run that starts (unfinished: not judged) changes nothing but is seen; finishing it is seen at once.
    await insertRun(app, "beta", "2026-01-07T23:00:00.000Z", null, null);
    expect(await reliability(app)).toMatchObject(EXPECTED);
    expect(tallies.n).toBe(2);
    await app.ctx.store.run("UPDATE job_runs SET finished_at = ?, ok = 1 WHERE name = 'beta' AND finished_at IS NULL", ["2026-01-07T23:05:00.000Z"]);
    // beta recovers: episode 3 timed 00:42 on 01-03 → 23:05 on 01-07 = 6,143 min; no job unresolved.
    expect(await reliability(app)).toMatchObject({ unresolved_failure_jobs: 0, jobs_with_mttr_samples: 2, runs_considered: 15 });
    expect(tallies.n).toBe(3);
    // A minute later the window has slid: read again though no run changed.
    app.clock.advance(59_999);
    await reliability(app);
    expect(tallies.n).toBe(3);
    app.clock.advance(1);
    await reliability(app);
    expect(tallies.n).toBe(4);
  });

  test("a policy with another window is tallied for that window, not served the kept figures", async () => {
    const app = await seeded();
    const tallies = countTallies(app);
    await reliability(app);
    const r = await reliabilityCheck(app.ctx, {
      ...DEFAULT_POLICY,
      checks: { ...DEFAULT_POLICY.checks, reliability: { ...DEFAULT_POLICY.checks.reliability, window_days: 3 } },
    });
    expect(r.window_days).toBe(3);
    expect(tallies.n).toBe(2);
  });
});

describe("reliabilityOf (pure)", () => {
  test("a job that fails twice in a row and recovers is one episode, timed from the first failure", () => {
    const r = reliabilityOf(
      [
        { name: "j", finished_at: "2026-01-01T00:00:00.000Z", ok: false },
        { name: "j", finished_at: "2026-01-01T00:05:00.000Z", ok: false },
        { name: "j", finished_at: "2026-01-01T00:30:00.000Z", ok: true },
      ],
      7,
    );
    // one episode: 00:00 → 00:30 = 30 min; streak 1
    expect(r).toMatchObject({ avg_mttr_minutes: 30, jobs_with_mttr_samples: 1, avg_success_streak: 1, unresolved_failure_jobs: 0 });
  });
});
