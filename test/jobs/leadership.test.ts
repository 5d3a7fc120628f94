import { afterEach, expect, test } from "bun:test";
import { JobLeases } from "../../src/jobs/leases";
import { openTestApp, type TestApp } from "../support/app";

// Job leadership (issue 27, item 4): two instances — two contexts with their own registries — on ONE database,
// on SQLite and (HERALD_TEST_ENGINE=postgres) on PostgreSQL. A singleton job runs on exactly one of them per
// tick, the other takes over once the lease has expired, `everyInstance` jobs run on both, and a manual run ignores
// the lease. Time moves only with the shared fake clock: ticks are driven by hand (registry.tick), never by croner.

const MINUTE = 60_000;
let apps: TestApp[] = [];
afterEach(async () => {
  // The second instance first: on SQLite the first one owns the file (its close removes the folder).
  for (const a of apps.reverse()) await a.close();
  apps = [];
});

/** A second instance on the database of `h`, with its own registry and instance id, on the same clock. */
async function sibling(h: TestApp, instanceId: string): Promise<TestApp> {
  const env: Record<string, string> = { HERALD_INSTANCE_ID: instanceId };
  if (h.ctx.store.dialect === "postgres") env.DATABASE_URL = h.ctx.config.database.url!;
  else env.HERALD_DB_PATH = h.ctx.config.dbPath;
  const s = await openTestApp({ clock: h.clock, env });
  apps.push(s);
  return s;
}

async function twoInstances(): Promise<{ a: TestApp; b: TestApp; ran: string[] }> {
  const a = await openTestApp({ env: { HERALD_INSTANCE_ID: "instance-a" } });
  apps.push(a);
  const b = await sibling(a, "instance-b");
  const ran: string[] = [];
  for (const x of [a, b]) {
    const me = x.ctx.instanceId;
    // Every minute: a lease of max(2 × 60 s, 30 s) = 120 s.
    x.ctx.jobs.register({ name: "test-singleton", pattern: "0 * * * * *", description: "a singleton", run: () => void ran.push(me) });
    x.ctx.jobs.register({
      name: "test-drain",
      pattern: "* * * * * *",
      description: "drains a queue",
      everyInstance: true,
      run: () => void ran.push(`drain:${me}`),
    });
  }
  return { a, b, ran };
}

const runsOf = (h: TestApp, name: string) =>
  h.ctx.store.all<{ instance_id: string; trigger: string }>("SELECT instance_id, trigger FROM job_runs WHERE name = ? ORDER BY id", [name]);

test("a singleton job runs on exactly one instance per tick; the other takes over once the lease has expired", async () => {
  const { a, b, ran } = await twoInstances();
  // Both tick at once: exactly one runs, the other skips without a job_runs row.
  const first = await Promise.all([a.ctx.jobs.tick("test-singleton"), b.ctx.jobs.tick("test-singleton")]);
  expect(first.filter((r) => r !== null)).toHaveLength(1);
  const [leader, other] = first[0] !== null ? [a, b] : [b, a];
  expect((await new JobLeases(a.ctx.store).current("test-singleton"))!).toMatchObject({
    holder: leader.ctx.instanceId,
    untilMs: a.clock.now().getTime() + 2 * MINUTE,
  });
  // The holder renews at each tick, in whichever order the instances tick.
  for (let i = 0; i < 4; i++) {
    a.clock.advance(MINUTE);
    const [x, y] = i % 2 === 0 ? [other, leader] : [leader, other];
    const rx = await x.ctx.jobs.tick("test-singleton");
    const ry = await y.ctx.jobs.tick("test-singleton");
    expect([rx, ry].filter((r) => r !== null)).toHaveLength(1);
    expect((x === leader ? rx : ry)!.ok).toBe(true);
  }
  expect(ran).toEqual(Array(5).fill(leader.ctx.instanceId));
  expect(await runsOf(a, "test-singleton")).toEqual(Array(5).fill({ instance_id: leader.ctx.instanceId, trigger: "schedule" }));

  // The leader stops ticking without releasing (a crash): its last lease runs until 2 minutes after its last tick.
  a.clock.advance(MINUTE);
  expect(await other.ctx.jobs.tick("test-singleton")).toBeNull();
  a.clock.advance(MINUTE);
  expect((await other.ctx.jobs.tick("test-singleton"))!.ok).toBe(true);
  expect(await leader.ctx.jobs.tick("test-singleton")).toBeNull(); // back, but the lease has moved
  expect((await new JobLeases(b.ctx.store).current("test-singleton"))!.holder).toBe(other.ctx.instanceId);
  expect(ran.at(-1)).toBe(other.ctx.instanceId);
  expect((await runsOf(a, "test-singleton")).map((r) => r.instance_id)).toEqual([...Array(5).fill(leader.ctx.instanceId), other.ctx.instanceId]);
});

test("everyInstance jobs run on both instances at every tick and take no lease", async () => {
  const { a, b, ran } = await twoInstances();
  for (let i = 0; i < 2; i++) {
    expect((await a.ctx.jobs.tick("test-drain"))!.ok).toBe(true);
    expect((await b.ctx.jobs.tick("test-drain"))!.ok).toBe(true);
    a.clock.advance(1_000);
  }
  expect(ran).toEqual(["drain:instance-a", "drain:instance-b", "drain:instance-a", "drain:instance-b"]);
  expect((await runsOf(a, "test-drain")).map((r) => r.instance_id)).toEqual(["instance-a", "instance-b", "instance-a", "instance-b"]);
  expect(await new JobLeases(a.ctx.store).current("test-drain")).toBeNull();
});

test("a manual run ignores the lease; stop() releases held leases so the other instance takes over at its next tick", async () => {
  const { a, b, ran } = await twoInstances();
  expect(await a.ctx.jobs.tick("test-singleton")).not.toBeNull();
  expect(await b.ctx.jobs.tick("test-singleton")).toBeNull();
  const manual = await b.ctx.jobs.runNow("test-singleton");
  expect(manual.ok).toBe(true);
  expect(await runsOf(a, "test-singleton")).toEqual([
    { instance_id: "instance-a", trigger: "schedule" },
    { instance_id: "instance-b", trigger: "manual" },
  ]);
  expect((await new JobLeases(a.ctx.store).current("test-singleton"))!.holder).toBe("instance-a"); // a manual run takes no lease

  await a.ctx.jobs.stop();
  expect(await new JobLeases(b.ctx.store).current("test-singleton")).toBeNull();
  expect(await b.ctx.jobs.tick("test-singleton")).not.toBeNull(); // no waiting out the lease
  expect(ran).toEqual(["instance-a", "instance-b", "instance-b"]);
});

test("the lease lasts two periods of the job's pattern, and never less than 30 s", async () => {
  const { a } = await twoInstances();
  const now = a.clock.now().getTime();
  const leases = new JobLeases(a.ctx.store);
  for (const [name, pattern, ttl] of [
    ["test-daily", "0 23 3 * * *", 2 * 86_400_000],
    ["test-hourly", "0 17 * * * *", 2 * 3_600_000],
    ["test-monthly", "0 0 0 1 * *", 2 * 31 * 86_400_000], // the longest gap of the next few: January's 31 days
    ["test-frequent", "*/2 * * * * *", 30_000], // every 2 s: the floor
  ] as const) {
    a.ctx.jobs.register({ name, pattern, description: name, run: () => {} });
    expect(await a.ctx.jobs.tick(name)).not.toBeNull();
    expect({ name, untilMs: (await leases.current(name))!.untilMs - now }).toEqual({ name, untilMs: ttl });
  }
});

test("taking over a lease ends the stopped instance's unfinished scheduled runs as interrupted, and nothing else", async () => {
  const { a, b } = await twoInstances();
  const at = a.clock.now().toISOString();
  const insert = (name: string, instance: string, trigger: string) =>
    a.ctx.store.run("INSERT INTO job_runs (name, started_at, trigger, instance_id) VALUES (?, ?, ?, ?)", [name, at, trigger, instance]);
  // instance-dead held the lease and was killed inside a run; it had also begun a manual run, and another job's run.
  await new JobLeases(a.ctx.store).acquire("test-singleton", "instance-dead", a.clock.now().getTime(), 2 * MINUTE);
  await insert("test-singleton", "instance-dead", "schedule");
  await insert("test-singleton", "instance-dead", "manual");
  await insert("other-job", "instance-dead", "schedule");

  expect(await b.ctx.jobs.tick("test-singleton")).toBeNull(); // the dead lease still runs
  const open = () => a.ctx.store.all<{ trigger: string }>("SELECT trigger FROM job_runs WHERE finished_at IS NULL ORDER BY id");
  expect((await open()).map((r) => r.trigger)).toEqual(["schedule", "manual", "schedule"]);

  a.clock.advance(2 * MINUTE);
  expect((await b.ctx.jobs.tick("test-singleton"))!.ok).toBe(true);
  const rows = await a.ctx.store.all<{
    name: string;
    trigger: string;
    instance_id: string;
    ok: number | boolean | null;
    error: string | null;
    finished_at: string | null;
  }>("SELECT name, trigger, instance_id, ok, error, finished_at FROM job_runs ORDER BY id");
  expect(rows[0]).toMatchObject({ name: "test-singleton", trigger: "schedule", instance_id: "instance-dead", finished_at: a.clock.now().toISOString() });
  expect(Number(rows[0]!.ok)).toBe(0);
  expect(rows[0]!.error).toBe("interrupted: instance instance-dead stopped before the run ended; its lease expired and instance-b took the job over");
  // A manual run ignores leases (it may still be running) and another job's run is that job's lease holder's business.
  expect(rows.slice(1, 3).map((r) => [r.name, r.trigger, r.finished_at])).toEqual([
    ["test-singleton", "manual", null],
    ["other-job", "schedule", null],
  ]);
  expect(rows[3]).toMatchObject({ name: "test-singleton", instance_id: "instance-b", error: null });
  // The leader's own runs are never closed: its next ticks renew the lease without touching job_runs.
  a.clock.advance(MINUTE);
  expect((await b.ctx.jobs.tick("test-singleton"))!.ok).toBe(true);
  expect(await open()).toHaveLength(2);
});
