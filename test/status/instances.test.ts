import { afterEach, describe, expect, test } from "bun:test";
import type { AdminRequest } from "../../src/auth/admin-plugin";
import type { AppContext } from "../../src/context";
import { CHECK_NAMES } from "../../src/status/checks/engine";
import type { Level } from "../../src/status/checks/types";
import { statusNotifier, STATUS_EVENT_TYPES } from "../../src/status/incidents/notify";
import { createOperatorIncident, postIncidentUpdate } from "../../src/status/incidents/operator";
import { createSubscriber } from "../../src/status/incidents/subscribers";
import { storeSnapshot, type CheckSetMemo } from "../../src/status/snapshots";
import { UPTIME_REUSE_MS, UptimeCache, uptimeSource } from "../../src/status/uptime";
import { sharedDatabase, type SharedDatabase } from "../chain/contexts";
import { FakeClock } from "../support/clock";
import { startReceiver } from "../support/receiver";
import { iso } from "./support";

// Two Herald instances over ONE database (two contexts: two SQLite connections on the file, or two PostgreSQL
// pools), on HERALD_TEST_ENGINE's engine: what the status domain promises when several instances run at once.

const T0 = "2026-04-01T00:00:00.000Z";
const ADMIN: AdminRequest = { actor: { kind: "admin", tokenId: 1, name: "ops" }, requestId: "req_instances" };

let db: SharedDatabase | undefined;
const stops: Array<() => void> = [];
afterEach(async () => {
  for (const stop of stops.splice(0)) stop();
  await db?.dispose();
  db = undefined;
});

/** Two instances sharing one clock (the third element). */
async function twoInstances(): Promise<[AppContext, AppContext, FakeClock]> {
  db = await sharedDatabase();
  const clock = new FakeClock(T0);
  return [await db.open({}, clock, "a"), await db.open({}, clock, "b"), clock];
}

const evaluation = (at: string, overall: Level, degraded: Record<string, Level> = {}, names: readonly string[] = CHECK_NAMES) => ({
  generated_at: at,
  overall,
  policy_version: "test",
  checks: Object.fromEntries(names.map((n) => [n, { status: degraded[n] ?? ("ok" as Level), summary: degraded[n] ? `${n} went ${degraded[n]}` : "fine" }])),
});

describe("subscriber deliveries", () => {
  test("two notifiers draining one queue at once send every event exactly once (leases: SKIP LOCKED on PostgreSQL)", async () => {
    const [a, b] = await twoInstances();
    const rx = startReceiver();
    stops.push(rx.stop);
    await createSubscriber(a, ADMIN, { url: rx.url("/hook") }, STATUS_EVENT_TYPES);
    // 40 incident events (20 incidents opened and closed), more than two leases of 16 each.
    for (let i = 0; i < 40; i++) await storeSnapshot(a, evaluation(iso(T0, i), i % 2 === 0 ? "bad" : "ok", i % 2 === 0 ? { database: "bad" } : {}), null);
    await Promise.all([statusNotifier(a).runOnce(), statusNotifier(b).runOnce()]);
    const ids = rx.received.map((r) => JSON.parse(r.rawBody).event_id as string);
    expect(ids).toHaveLength(40);
    expect(new Set(ids).size).toBe(40);
    const rows = await a.store.all<{ status: string; attempts: number }>("SELECT status, attempts FROM status_subscriber_deliveries");
    expect(rows).toHaveLength(40);
    expect(rows.every((r) => r.status === "succeeded" && r.attempts === 1)).toBe(true);
    // Both instances took part: each recorded outcomes of its own.
    expect(statusNotifier(a).sent + statusNotifier(b).sent).toBe(40);
  });
});

describe("status snapshots", () => {
  test("two snapshots stored at once never open two automatic incidents, and close the one once", async () => {
    const [a, b] = await twoInstances();
    const bad = evaluation(iso(T0, 0), "bad", { database: "bad" });
    const [first, second] = await Promise.all([storeSnapshot(a, bad, null), storeSnapshot(b, { ...bad, generated_at: iso(T0, 0.5) }, null)]);
    expect([first.incident.action, second.incident.action].sort()).toEqual(["opened", "updated"]);
    const open = await a.store.all("SELECT id FROM status_incidents WHERE ended_at IS NULL AND source = 'automatic'");
    expect(open).toHaveLength(1);
    const ok = evaluation(iso(T0, 1), "ok");
    const closing = await Promise.all([storeSnapshot(a, ok, null), storeSnapshot(b, { ...ok, generated_at: iso(T0, 1.5) }, null)]);
    expect(closing.map((s) => s.incident.action).sort()).toEqual(["closed", "none"]);
    expect(await a.store.all("SELECT id FROM status_incidents WHERE ended_at IS NULL")).toEqual([]);
  });

  test("a check set stored by another instance in between is not taken for this instance's own ('=' is written only against the set really stored before)", async () => {
    const [a, b] = await twoInstances();
    const memoA: CheckSetMemo = { names: null };
    const memoB: CheckSetMemo = { names: null };
    const older = CHECK_NAMES.filter((n) => n !== "webhooks"); // an instance one release behind, without a check
    await storeSnapshot(a, evaluation(iso(T0, 0), "ok"), null, memoA);
    await storeSnapshot(a, evaluation(iso(T0, 1), "ok"), null, memoA);
    await storeSnapshot(b, evaluation(iso(T0, 2), "ok", {}, older), null, memoB);
    await storeSnapshot(a, evaluation(iso(T0, 3), "ok"), null, memoA);
    const rows = await a.store.all<{ checks: string }>("SELECT checks FROM status_snapshots ORDER BY id");
    expect(rows.map((r) => r.checks)).toEqual([CHECK_NAMES.join(","), "=", older.join(","), CHECK_NAMES.join(",")]);
  });
});

describe("operator incidents", () => {
  test("one Idempotency-Key used on two instances at once makes one incident; the other request is its replay", async () => {
    const [a, b] = await twoInstances();
    const input = { title: "Failover", message: "Moving to the standby.", severity: "warn" as const };
    const outcomes = await Promise.all([
      createOperatorIncident(a, ADMIN, input, "same-key", () => {}),
      createOperatorIncident(b, ADMIN, input, "same-key", () => {}),
    ]);
    expect(outcomes.map((o) => o.replayed).sort()).toEqual([false, true]);
    expect(outcomes[0].incident.id).toBe(outcomes[1].incident.id);
    expect((await a.store.get<{ n: number }>("SELECT count(*) AS n FROM status_incidents"))!.n).toBe(1);
    expect((await a.store.get<{ n: number }>("SELECT count(*) AS n FROM status_incident_updates"))!.n).toBe(1);
  });

  test("two updates of one incident on two instances take turns: both kept, the severity peak is the worse one", async () => {
    const [a, b] = await twoInstances();
    const { incident } = await createOperatorIncident(a, ADMIN, { title: "Slow", message: "Looking.", severity: "warn" }, null, () => {});
    await Promise.all([
      postIncidentUpdate(a, ADMIN, incident.id, { state: "identified", message: "Found it.", severity: "bad" }, "u-a", () => {}),
      postIncidentUpdate(b, ADMIN, incident.id, { state: "monitoring", message: "Fixed, watching.", severity: "warn" }, "u-b", () => {}),
    ]);
    const row = (await a.store.get<{ severity: string }>("SELECT severity FROM status_incidents WHERE id = ?", [incident.id]))!;
    expect(row.severity).toBe("bad");
    expect((await a.store.get<{ n: number }>("SELECT count(*) AS n FROM status_incident_updates WHERE incident_id = ?", [incident.id]))!.n).toBe(3);
  });
});

describe("the uptime cache", () => {
  test("sees another instance's snapshot at once, and never serves a source older than UPTIME_REUSE_MS", async () => {
    const [a, b, clock] = await twoInstances();
    const cache = new UptimeCache();
    await storeSnapshot(a, evaluation(iso(T0, 0), "ok"), null);
    clock.set(iso(T0, 1));
    const first = await uptimeSource(a, 1, cache);
    expect(first.points).toHaveLength(1);
    // Another instance stores a snapshot: the inputs key changes, the source is read again.
    await storeSnapshot(b, evaluation(iso(T0, 1), "bad", { database: "bad" }), null);
    const second = await uptimeSource(a, 1, cache);
    expect(second.points).toHaveLength(2);
    // Unchanged inputs: reused within the bound (the same points object), read again past it.
    clock.set(new Date(Date.parse(iso(T0, 1)) + UPTIME_REUSE_MS).toISOString());
    expect((await uptimeSource(a, 1, cache)).points).toBe(second.points);
    clock.advance(1);
    expect((await uptimeSource(a, 1, cache)).points).not.toBe(second.points);
  });
});
