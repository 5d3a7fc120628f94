import { afterEach, expect, test } from "bun:test";
import type { SqliteStore } from "../../src/db/sqlite-engine";
import { latencyOf } from "../../src/http/request-log/latency";
import { catchUpRollups, hourCountsTask } from "../../src/http/request-log/catchup";
import { routeSummaries } from "../../src/http/request-log/summary";
import { latencyPercentiles } from "../../src/status/latency";
import { deliveryHealth } from "../../src/webhooks/deliveries";
import { TASKS } from "../../src/workers/read-tasks";
import { openTestApp, type TestApp } from "../support/app";
import { testEngine } from "../support/engine";
import { testOn } from "../support/skipped";

// Reads that grow with the data run apart from the event loop (src/db/apart.ts): on SQLite in the file's read
// worker, on PostgreSQL on the pool. Their answers are the same as the read run in place.

let h: TestApp | null = null;
afterEach(async () => {
  await h?.close();
  h = null;
});

/** `n` request_log rows over the last hour, in one statement (a recursive count), latencies spread 1–5,000 µs. */
async function requests(app: TestApp, n: number): Promise<void> {
  const end = app.clock.now().getTime();
  const rows: string[] = [];
  const params: Array<string | number> = [];
  for (let i = 0; i < n; i++) {
    rows.push("(?, 'GET', ?, ?, ?, ?)");
    params.push(new Date(end - 1 - (i % 3_000_000) / 1000).toISOString(), i % 3 ? "/healthz" : "/status", i % 17 ? 200 : 503, 1 + ((i * 7919) % 5000), `r${i}`);
    if (rows.length === 500 || i === n - 1) {
      await app.ctx.store.run(`INSERT INTO request_log (at, method, route, status, latency_us, request_id) VALUES ${rows.join(", ")}`, params);
      rows.length = 0;
      params.length = 0;
    }
  }
}

test("every read task is listed once by a name of its own", () => {
  expect(TASKS.size).toBeGreaterThanOrEqual(3);
  for (const [name, task] of TASKS) expect(task.name).toBe(name);
});

test("latency percentiles read apart answer as the read in place, and on SQLite in the read worker", async () => {
  h = await openTestApp();
  await requests(h, 3_000);
  await catchUpRollups(h.ctx.store); // rows written here, not by the flush: their summaries are built from them
  const apart = await latencyPercentiles(h.ctx, 24);
  const hours = { fromHour: apart.window.start_utc.slice(0, 13), toHour: apart.window.end_utc.slice(0, 13) };
  const inPlace = latencyOf(await routeSummaries(h.ctx.store, { key: null, ...hours }), 50);
  expect(apart.overall).toEqual(inPlace.overall);
  expect(apart.endpoint_breakdown).toEqual(inPlace.endpoint_breakdown);
  expect(apart.overall.samples).toBe(3_000);
  if (testEngine() === "sqlite") expect((h.ctx.store as SqliteStore).reader?.ran).toBeGreaterThanOrEqual(1);
});

// On PostgreSQL every read leaves the thread already.
testOn("sqlite", "test/db/apart.test.ts")("the event loop keeps turning while a read runs apart (SQLite: in the worker)", async () => {
  h = await openTestApp();
  await requests(h, 60_000);
  let resolved = false;
  // The request log's count per hour: a read of every row of the window.
  const end = h.clock.now();
  const window = { fromIso: new Date(end.getTime() - 3_600_000).toISOString(), toIso: new Date(end.getTime() + 1).toISOString() };
  const read = h.ctx.store.apart(hourCountsTask, window).then((r) => {
    resolved = true;
    return r;
  });
  // A timer fires while the read is still running: it would not before a read on this thread had ended.
  const turned = await new Promise<boolean>((r) => setTimeout(() => r(!resolved), 1));
  expect(turned).toBe(true);
  expect((await read).reduce((n, r) => n + r.n, 0)).toBe(60_000);
});

test("webhook delivery counts read apart", async () => {
  h = await openTestApp();
  expect(await deliveryHealth(h.ctx, null)).toEqual({ dead_letter_events: 0, failed_events: 0, pending_events: 0, delivered_events: 0 });
});

// PostgreSQL has no WAL of Herald's to checkpoint.
testOn("sqlite", "test/db/apart.test.ts")(
  "SQLite: the WAL is checkpointed in the read worker, SQLite's automatic checkpoint on the serving thread off",
  async () => {
    h = await openTestApp();
    const store = h.ctx.store as SqliteStore;
    store.checkpointApart(10);
    expect((await store.get<{ wal_autocheckpoint: number }>("PRAGMA wal_autocheckpoint"))!.wal_autocheckpoint).toBe(0);
    await requests(h, 5_000);
    // Bounded wait: the worker's checkpoint runs every 10 ms after a commit.
    for (let i = 0; i < 200 && !(store.lastCheckpoint && store.lastCheckpoint.log > 0); i++) await Bun.sleep(10);
    expect(store.lastCheckpoint!.log).toBeGreaterThan(0);
    expect(store.lastCheckpoint!.checkpointed).toBe(store.lastCheckpoint!.log);
    await catchUpRollups(store);
    expect((await latencyPercentiles(h.ctx, 24)).overall.samples).toBe(5_000);
  },
);

test("every apartTask(…) in src/ is listed for the read worker (an unlisted one fails on SQLite only, in production)", async () => {
  const declared = new Set<string>();
  for await (const file of new Bun.Glob("**/*.ts").scan({ cwd: new URL("../../src", import.meta.url).pathname })) {
    const text = await Bun.file(new URL(`../../src/${file}`, import.meta.url)).text();
    for (const m of text.matchAll(/apartTask\(\s*"([^"]+)"/g)) declared.add(m[1]!);
  }
  expect(declared.size).toBeGreaterThanOrEqual(9);
  expect([...declared].filter((name) => !TASKS.has(name))).toEqual([]);
});
