import { afterEach, describe, expect, test } from "bun:test";
import type { Level } from "../../src/status/checks/types";
import { CHECK_NAMES } from "../../src/status/checks/engine";
import { storeSnapshot } from "../../src/status/snapshots";
import { openTestApp, type TestApp } from "../support/app";
import { FakeClock } from "../support/clock";
import { insertSnapshot, iso } from "./support";

// Incidents from a sequence of snapshots: opened by a transition into warn/bad, updated while degraded
// (severity = worst seen), closed by the first ok; and the snapshot job doing it for real.

let h: TestApp | undefined;
afterEach(async () => {
  await h?.close();
  h = undefined;
});

const T0 = "2026-01-01T00:00:00.000Z";

/**
 * Forgets the latest migration (as a database a release behind would look: each engine records them in its own
 * table) and answers how to put it back.
 */
async function forgetLatestMigration(h: TestApp): Promise<() => Promise<void>> {
  const store = h.ctx.store;
  if (store.dialect === "sqlite") {
    const last = (await store.get<{ hash: string; created_at: number }>("SELECT * FROM __drizzle_migrations ORDER BY created_at DESC LIMIT 1"))!;
    await store.run("DELETE FROM __drizzle_migrations WHERE created_at = ?", [last.created_at]);
    return async () => {
      await store.run("INSERT INTO __drizzle_migrations (hash, created_at) VALUES (?, ?)", [last.hash, last.created_at]);
    };
  }
  const last = (await store.get<{ name: string; applied_at: string }>("SELECT * FROM herald_migrations ORDER BY name DESC LIMIT 1"))!;
  await store.run("DELETE FROM herald_migrations WHERE name = ?", [last.name]);
  return async () => {
    await store.run("INSERT INTO herald_migrations (name, applied_at) VALUES (?, ?)", [last.name, last.applied_at]);
  };
}

const evaluation = (at: string, overall: Level, degraded: Record<string, Level> = {}) => ({
  generated_at: at,
  overall,
  policy_version: "test",
  checks: Object.fromEntries(
    CHECK_NAMES.map((n) => [n, { status: degraded[n] ?? ("ok" as Level), summary: degraded[n] ? `${n} went ${degraded[n]}` : "fine" }]),
  ),
});

describe("incident transitions", () => {
  test("ok → warn opens, → bad escalates, → warn keeps the peak, → ok closes; the next degradation opens a new one", async () => {
    h = await openTestApp({ clock: new FakeClock(T0) });
    const step = async (minute: number, overall: Level, degraded: Record<string, Level> = {}) =>
      (await storeSnapshot(h!.ctx, evaluation(iso(T0, minute), overall, degraded), null)).incident;

    expect(await step(0, "ok")).toMatchObject({ action: "none", incident_id: null });
    expect(await step(1, "warn", { chain_rpc: "warn" })).toMatchObject({ action: "opened", incident_id: 1 });
    expect(await step(2, "bad", { chain_rpc: "warn", database: "bad" })).toMatchObject({ action: "updated", incident_id: 1 });
    expect(await step(3, "warn", { chain_rpc: "warn" })).toMatchObject({ action: "updated", incident_id: 1 });
    expect(await step(4, "ok")).toMatchObject({ action: "closed", incident_id: 1 });
    expect(await step(5, "ok")).toMatchObject({ action: "none", incident_id: null });
    expect(await step(6, "warn", { webhooks: "warn" })).toMatchObject({ action: "opened", incident_id: 2 });

    h.clock.set(iso(T0, 10));
    const r = await h.json("/api/public/system-status/incidents");
    expect(r.status).toBe(200);
    expect(r.body).toMatchObject({ hours: 168, limit: 50, count: 2 });
    const [open, closed] = r.body.incidents;
    expect(open).toEqual({
      id: 2,
      source: "automatic",
      title: "Degraded service: webhooks",
      state: null,
      components: ["webhooks"],
      updates: [],
      updated_at: iso(T0, 6),
      started_at: iso(T0, 6),
      ended_at: null,
      severity: "warn",
      current_severity: "warn",
      status: "open",
      duration_minutes: 4,
      checks: { webhooks: "warn" },
      summary: { webhooks: "webhooks went warn" },
    });
    expect(closed).toEqual({
      id: 1,
      source: "automatic",
      title: "Outage: chain_rpc, database",
      state: null,
      components: ["api", "chain_data"],
      updates: [],
      updated_at: iso(T0, 4),
      started_at: iso(T0, 1),
      ended_at: iso(T0, 4),
      severity: "bad", // the peak, not the last state
      current_severity: null,
      status: "resolved",
      duration_minutes: 3,
      checks: { chain_rpc: "warn", database: "bad" },
      summary: { chain_rpc: "chain_rpc went warn", database: "database went bad" },
    });
    // The status answer names the open incident.
    expect((await h.json("/api/public/system-status")).body.open_incident.id).toBe(2);
    // Effects: rows in status_incidents point at the snapshots that opened and closed them.
    const rows = await h.ctx.store.all("SELECT id, opened_snapshot_id, closed_snapshot_id FROM status_incidents ORDER BY id");
    expect(rows).toEqual([
      { id: 1, opened_snapshot_id: 2, closed_snapshot_id: 5 },
      { id: 2, opened_snapshot_id: 7, closed_snapshot_id: null },
    ]);
  });

  test("?hours= keeps incidents that overlap the window (open ones always); ?limit= caps the list", async () => {
    h = await openTestApp({ clock: new FakeClock(T0) });
    const at = (hours: number) => new Date(Date.parse(T0) + hours * 3_600_000).toISOString();
    await storeSnapshot(h.ctx, evaluation(at(0), "bad", { database: "bad" }), null);
    await storeSnapshot(h.ctx, evaluation(at(1), "ok"), null); // incident 1: 00:00–01:00
    await storeSnapshot(h.ctx, evaluation(at(5), "warn", { jobs: "warn" }), null);
    await storeSnapshot(h.ctx, evaluation(at(6), "ok"), null); // incident 2: 05:00–06:00
    await storeSnapshot(h.ctx, evaluation(at(9), "warn", { jobs: "warn" }), null); // incident 3: open since 09:00
    h.clock.set(at(10));
    const ids = async (q: string) => (await h!.json(`/api/public/system-status/incidents${q}`)).body.incidents.map((i: any) => i.id);
    expect(await ids("?hours=1")).toEqual([3]); // window 09:00–10:00: only the open one
    expect(await ids("?hours=5")).toEqual([3, 2]); // 05:00–10:00: incident 2 ended at 06:00, inside
    expect(await ids("?hours=4")).toEqual([3]); // 06:00–10:00: incident 2 ended exactly at the start: outside
    expect(await ids("?hours=10")).toEqual([3, 2, 1]);
    expect(await ids("?hours=10&limit=2")).toEqual([3, 2]);
    const capped = (await h.json("/api/public/system-status/incidents?hours=10&limit=2")).body;
    expect(capped).toMatchObject({
      count: 2,
      query: { limit: 2, offset: 0, cursor: null, hours: 10 },
      pagination: { has_more: true, next_offset: null, next_cursor: null },
    });
    expect((await h.json("/api/public/system-status/incidents?hours=10&limit=3")).body.pagination.has_more).toBe(false);
  });

  test("bad hours and limit are 400 invalid_query naming the field", async () => {
    h = await openTestApp();
    for (const q of ["hours=0", "hours=2161", "hours=abc", "hours=1.5", "limit=0", "limit=201", "limit=-1"]) {
      const r = await h.json(`/api/public/system-status/incidents?${q}`);
      expect(r.status).toBe(400);
      expect(r.body.error).toBe("invalid_query");
      expect(r.body.details[0].field).toBe(`query.${q.split("=")[0]}`);
    }
  });
});

describe("the status-snapshot job", () => {
  test("stores a snapshot of every check, opens an incident when a check goes bad and closes it when it recovers", async () => {
    h = await openTestApp({ clock: new FakeClock(T0) });
    expect((await h.ctx.jobs.runNow("status-snapshot")).ok).toBe(true);
    // Break the database check (a migration "not applied"), run again: an incident opens.
    const repair = await forgetLatestMigration(h);
    h.clock.advance(60_000);
    const run = await h.ctx.jobs.runNow("status-snapshot");
    expect(run.ok).toBe(true);
    let incidents = (await h.json("/api/public/system-status/incidents")).body.incidents;
    expect(incidents).toHaveLength(1);
    expect(incidents[0]).toMatchObject({ status: "open", severity: "bad", checks: { database: "bad" }, started_at: iso(T0, 1) });
    expect(incidents[0].summary.database).toContain("migrations behind");
    // Repair, run again: closed.
    await repair();
    h.clock.advance(60_000);
    await h.ctx.jobs.runNow("status-snapshot");
    incidents = (await h.json("/api/public/system-status/incidents")).body.incidents;
    expect(incidents[0]).toMatchObject({ status: "resolved", ended_at: iso(T0, 2), duration_minutes: 1 });

    const snaps = await h.ctx.store.all<any>("SELECT generated_at, overall, degraded, checks, policy_version, job_run_id FROM status_snapshots ORDER BY id");
    expect(snaps.map((s) => [s.generated_at, s.overall])).toEqual([
      [T0, "ok"],
      [iso(T0, 1), "bad"],
      [iso(T0, 2), "ok"],
    ]);
    expect(JSON.parse(snaps[1].degraded)).toEqual({ database: "bad" });
    expect(snaps[0].checks).toBe(CHECK_NAMES.join(",")); // the first snapshot names the check set…
    expect(snaps[1].checks).toBe("="); // …later ones say "same as before"
    expect(snaps[1].job_run_id).toBe(run.run_id);
    expect(snaps[0].policy_version).toBe("builtin-1");

    const t = (await h.json("/api/public/system-status/trend?limit=2")).body;
    expect(t).toEqual({
      success: true,
      limit: 2,
      count: 2,
      counts: { ok: 1, warn: 0, bad: 1 },
      points: [
        { generated_at: iso(T0, 1), overall: "bad" },
        { generated_at: iso(T0, 2), overall: "ok" },
      ],
      // A "latest N" view: the query it applied, and whether older snapshots exist beyond these (no next page).
      query: { limit: 2, offset: 0, cursor: null },
      pagination: { has_more: true, next_offset: null, next_cursor: null },
    });
  });

  test("trend: default 60 points oldest first; limit bounds 1–1440", async () => {
    h = await openTestApp({ clock: new FakeClock(T0) });
    for (let m = 0; m < 70; m++) await insertSnapshot(h, iso(T0, m), m % 10 === 0 ? "warn" : "ok");
    const t = (await h.json("/api/public/system-status/trend")).body;
    expect(t).toMatchObject({ limit: 60, count: 60, counts: { ok: 54, warn: 6, bad: 0 } }); // minutes 10–69: warn at 10,20,…,60
    expect(t.points[0].generated_at).toBe(iso(T0, 10));
    expect(t.points[59].generated_at).toBe(iso(T0, 69));
    for (const q of ["limit=0", "limit=1441", "limit=x"]) expect((await h.json(`/api/public/system-status/trend?${q}`)).status).toBe(400);
    expect((await h.json("/api/public/system-status/trend?limit=1440")).body).toMatchObject({ count: 70, pagination: { has_more: false } });
    expect(t.pagination).toEqual({ has_more: true, next_offset: null, next_cursor: null });
  });

  test("status-prune deletes history past the retention and keeps the check set readable", async () => {
    h = await openTestApp({ clock: new FakeClock("2026-06-01T00:00:00.000Z") });
    const old = "2026-01-01T00:00:00.000Z"; // > 100 days before now
    await storeSnapshot(h.ctx, evaluation(old, "bad", { database: "bad" }), null);
    await storeSnapshot(h.ctx, evaluation(iso(old, 1), "ok"), null); // closes incident 1 (ended long ago)
    const memo = { names: null };
    await storeSnapshot(h.ctx, evaluation("2026-05-30T00:00:00.000Z", "ok"), null, memo); // kept; written as "="
    expect((await h.ctx.store.get<any>("SELECT checks FROM status_snapshots ORDER BY id DESC LIMIT 1")).checks).toBe("=");
    expect((await h.ctx.jobs.runNow("status-prune")).ok).toBe(true);
    const left = await h.ctx.store.all("SELECT generated_at, checks FROM status_snapshots");
    expect(left).toEqual([{ generated_at: "2026-05-30T00:00:00.000Z", checks: CHECK_NAMES.join(",") }]);
    expect((await h.ctx.store.get<any>("SELECT count(*) AS n FROM status_incidents")).n).toBe(0);
    // The uptime maths still knows which checks existed.
    const u = (await h.json("/api/public/system-status/uptime?hours=72")).body;
    expect(u.checks.database.observed_minutes).toBeGreaterThan(0);
  });
});
