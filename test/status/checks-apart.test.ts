import { afterEach, expect, test } from "bun:test";
import type { SqliteStore } from "../../src/db/sqlite-engine";
import { CHECKS } from "../../src/status/checks/engine";
import { loadPolicy } from "../../src/status/checks/policy";
import { reliabilityOf } from "../../src/status/checks/reliability";
import { takeStatusSnapshot } from "../../src/status/snapshots";
import { finishedRunsSince, requestOutcomesSince } from "../../src/status/store/read-models";
import { openTestApp, type TestApp } from "../support/app";
import { FakeClock } from "../support/clock";
import { testEngine } from "../support/engine";
import { insertRequest, insertRun } from "./support";

// The status snapshot's reads that grow (issue 71): the request outcomes of request_errors (the window's requests,
// which grow with the traffic) and the job runs of reliability (with their tally) run apart from the event loop
// (src/db/apart.ts). Each check answers as its read in place did, on both engines; on SQLite the worker ran it.

let h: TestApp | null = null;
afterEach(async () => {
  await h?.close();
  h = null;
});

const NOW = "2026-01-08T00:00:00.000Z";
const ran = (app: TestApp) => (testEngine() === "sqlite" ? ((app.ctx.store as SqliteStore).reader?.ran ?? 0) : 0);
const checkOf = (name: string) => CHECKS.find(([n]) => n === name)![1];

test("request_errors counts the window's requests in the read worker, as the count in place", async () => {
  h = await openTestApp({ clock: new FakeClock(NOW) });
  const now = h.clock.now().getTime();
  // 60 requests over the last 30 minutes: a 5xx every fourth, a 4xx every fifth; the 15-minute window holds half.
  for (let i = 0; i < 60; i++) await insertRequest(h, new Date(now - 30_000 - i * 30_000).toISOString(), i % 4 === 0 ? 503 : i % 5 === 0 ? 404 : 200);
  const policy = loadPolicy(h.ctx).policy;
  const since = new Date(now - policy.checks.request_errors.window_minutes * 60_000).toISOString();
  const inPlace = await requestOutcomesSince(h.ctx.store, since);
  expect(inPlace.total).toBe(29);
  const before = ran(h);
  const c = (await checkOf("request_errors")(h.ctx, policy, {})) as unknown as Record<string, unknown>;
  expect(c).toMatchObject({ total_requests: inPlace.total, server_errors: inPlace.server, client_errors: inPlace.client, judged: true });
  if (testEngine() === "sqlite") expect(ran(h)).toBeGreaterThan(before);
  // Held still before a time (the trust dashboard's requestsBefore): the same bound as the read in place.
  const end = new Date(now - 10 * 60_000);
  const held = await requestOutcomesSince(h.ctx.store, new Date(end.getTime() - 15 * 60_000).toISOString(), end.toISOString());
  const heldCheck = (await checkOf("request_errors")(h.ctx, policy, { requestsBefore: end })) as unknown as Record<string, unknown>;
  expect(heldCheck).toMatchObject({ total_requests: held.total, server_errors: held.server, client_errors: held.client });
  expect(held.total).toBeGreaterThan(0);
});

test("reliability reads and tallies the window's runs in the read worker, as the tally in place", async () => {
  h = await openTestApp({ clock: new FakeClock(NOW) });
  const now = h.clock.now().getTime();
  // Three jobs over ten days (the window is 7): failures, recoveries, one job failing last, one run in progress.
  for (let i = 0; i < 240; i++) {
    const started = now - 10 * 86_400_000 + i * 3_600_000;
    const name = ["alpha", "beta", "gamma"][i % 3]!;
    const ok = name === "beta" ? i % 7 !== 0 || i > 200 : name === "gamma" ? i < 230 : true;
    await insertRun(h, name, new Date(started).toISOString(), new Date(started + 60_000 * (1 + (i % 5))).toISOString(), ok);
  }
  await insertRun(h, "alpha", new Date(now - 60_000).toISOString(), null, null);
  const policy = loadPolicy(h.ctx).policy;
  const since = new Date(now - policy.checks.reliability.window_days * 86_400_000).toISOString();
  const rows = await finishedRunsSince(h.ctx.store, since);
  const inPlace = reliabilityOf(
    rows.map((r) => ({ name: r.name, finished_at: r.finished_at ?? since, ok: r.ok === 1 })),
    policy.checks.reliability.window_days,
  );
  expect(inPlace.unresolved_jobs).toEqual(["gamma"]);
  expect(inPlace.avg_mttr_minutes).not.toBeNull();
  const before = ran(h);
  const c = await checkOf("reliability")(h.ctx, policy, {});
  expect(c).toMatchObject({ ...inPlace, status: "warn" });
  if (testEngine() === "sqlite") expect(ran(h)).toBeGreaterThan(before);
});

test("a status snapshot sends its growing reads to the read worker: delivery counts, request outcomes, reliability", async () => {
  h = await openTestApp({ clock: new FakeClock(NOW) });
  await insertRequest(h, new Date(h.clock.now().getTime() - 60_000).toISOString(), 200);
  const before = ran(h);
  const s = await takeStatusSnapshot(h.ctx, null);
  expect(s.evaluation.checks.request_errors).toMatchObject({ total_requests: 1 });
  if (testEngine() === "sqlite") expect(ran(h) - before).toBeGreaterThanOrEqual(3);
});
