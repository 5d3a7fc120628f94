// Issue 71: an operator lowering a mission's target checks the players' progress without touching every enrollment.
// It used to lock each unfinished enrollment with an UPDATE (seconds of the event loop with a million players on
// SQLite, every one of their plays waiting on PostgreSQL) and then read them all for the MAX. Now: on SQLite nothing
// is locked (the transaction holds the one writer); on PostgreSQL the edit takes the mission's target lock, which
// progress events hold shared; and the highest progress is one index entry. Both engines (HERALD_TEST_ENGINE=postgres);
// the two tests of a progress event and an edit at the same time run on PostgreSQL, where they really overlap.
import { afterEach, describe, expect, test } from "bun:test";
import type { Queryable } from "../../src/db/port";
import { highestUnfinishedProgress, holdMissionTarget, lockMission, setProgress, updateMissionIfRevision } from "../../src/messenger/store/missions";
import { jsonInit, type TestApp } from "../support/app";
import { CountingStore } from "../support/counting-store";
import { testEngine } from "../support/engine";
import { createAdminToken } from "../support/partner";
import { fullReads, planOf, sortsAll } from "../support/query-plans";
import { describeOn } from "../support/skipped";
import { initDataFor, openMessengerApp, QUIZ3_MISSION, tmaPost } from "./support";

const FILE = "test/messenger/mission-target.test.ts";

let h: TestApp;
let admin: string;
afterEach(async () => {
  await h?.close();
});

const KEY = QUIZ3_MISSION.mission_key;
const auth = () => ({ authorization: `Bearer ${admin}` });
const patchTarget = (target: number, revision: number) =>
  h.json(`/api/messenger/admin/missions/${KEY}`, jsonInit("PATCH", { target }, { ...auth(), "x-expected-revision": String(revision) }));
const player = (id: number, path: string, body: Record<string, unknown>) => h.json(`/api/messenger/missions/${path}`, tmaPost(initDataFor(h, { id }), body));
const progress = (id: number, eventId: string, value: number) => player(id, "progress", { mission_key: KEY, client_event_id: eventId, progress: value });

/** The mission at `target`, and players enrolled with their progress reported (each under the mission's caps). */
async function setup(target: number, players: Record<number, number>) {
  h = await openMessengerApp();
  admin = await createAdminToken(h);
  expect((await h.json("/api/messenger/admin/missions", jsonInit("POST", { ...QUIZ3_MISSION, target }, auth()))).status).toBe(200);
  for (const [id, value] of Object.entries(players)) {
    expect((await player(Number(id), "enroll", { mission_key: KEY })).status).toBe(200);
    expect((await progress(Number(id), `evt-${id}-0001`, value)).body).toMatchObject({ accepted: true, progress: value });
  }
}

describe("lowering a mission's target", () => {
  test("refused at or below an unfinished player's progress, accepted above it; completed players do not count", async () => {
    await setup(10, { 7: 2, 8: 6, 9: 4 });
    // Player 9 completed when the target was lower (it went up since): its progress is over any target tried here.
    await h.ctx.store.run("UPDATE messenger_mission_enrollments SET progress = 9, completed_at = ? WHERE telegram_user_id = 9 AND mission_key = ?", [
      h.clock.now().toISOString(),
      KEY,
    ]);
    const low = await patchTarget(6, 1);
    expect([low.status, low.body.error, low.body.details[0].field]).toEqual([409, "conflict", "body.target"]);
    expect(low.body.message).toContain("target must be more than 6");
    const ok = await patchTarget(7, 1);
    expect([ok.status, ok.body.mission.target, ok.body.mission.revision]).toEqual([200, 7, 2]);
    h.clock.advanceSeconds(61);
    expect((await progress(8, "evt-8-0002", 7)).body).toMatchObject({ accepted: true, completed: true, target: 7 });
  });

  test("the check locks no enrollment and reads one index entry: no UPDATE, a bounded read", async () => {
    await setup(10, { 7: 2, 8: 6 });
    for (let id = 100; id < 400; id++) {
      await h.ctx.store.run("INSERT INTO messenger_mission_enrollments (telegram_user_id, mission_key, progress, enrolled_at) VALUES (?, ?, ?, ?)", [
        id,
        KEY,
        id % 5,
        h.clock.now().toISOString(),
      ]);
    }
    // PostgreSQL plans from statistics (autovacuum keeps them); with the visibility map set, the read is one entry of
    // the index alone.
    if (testEngine() === "postgres") await h.ctx.store.run("VACUUM ANALYZE messenger_mission_enrollments");
    const store = new CountingStore(h.ctx.store);
    expect(await store.tx((t: Queryable) => highestUnfinishedProgress(t, KEY))).toBe(6);
    // SQLite: the read alone. PostgreSQL: the mission's target lock, then the read.
    const reads = store.sent.filter((s) => s.sql.includes("messenger_mission_enrollments"));
    expect(store.runs).toEqual([]);
    expect(reads).toHaveLength(1);
    expect(store.sent).toHaveLength(testEngine() === "postgres" ? 2 : 1);
    const plan = await planOf(h, reads[0]!.sql, reads[0]!.params);
    expect(fullReads(plan)).toEqual([]);
    expect(sortsAll(plan)).toEqual([]);
    expect(plan.join("\n")).toContain("messenger_mission_enrollments_progress_idx");
  });
});

describeOn("postgres", FILE)("an edit and a progress event at the same time (PostgreSQL)", () => {
  /** Waits until a transaction waits for an advisory lock (the mission's target lock), polling pg_locks. */
  async function untilWaitingForTargetLock(): Promise<void> {
    for (let i = 0; i < 500; i++) {
      const row = await h.ctx.store.get<{ n: number }>("SELECT count(*) AS n FROM pg_locks WHERE locktype = 'advisory' AND NOT granted");
      if (Number(row!.n) > 0) return;
      await Bun.sleep(10);
    }
    throw new Error("nobody waited for the mission's target lock");
  }

  test("a progress event in flight: the lowered target waits for it, then counts its progress and is refused", async () => {
    await setup(10, { 7: 2 });
    let release!: () => void;
    const gate = new Promise<void>((r) => (release = r));
    let holding!: () => void;
    const held = new Promise<void>((r) => (holding = r));
    // What a progress event does, held open between its hold on the target and its commit (only a test may).
    const event = h.ctx.store.tx(async (t) => {
      await holdMissionTarget(t, KEY);
      await setProgress(t, 7, KEY, 4, null);
      holding();
      await gate;
    });
    await held;
    const edit = patchTarget(4, 1);
    await untilWaitingForTargetLock();
    release();
    await event;
    const answer = await edit;
    expect([answer.status, answer.body.error]).toEqual([409, "conflict"]);
    expect(answer.body.message).toContain("target must be more than 4");
  });

  test("an edit in flight: a progress event waits for it, then reads the new target and completes", async () => {
    await setup(10, { 7: 2 });
    let release!: () => void;
    const gate = new Promise<void>((r) => (release = r));
    let holding!: () => void;
    const held = new Promise<void>((r) => (holding = r));
    // What the operator's PATCH does to lower the target to 3, held open before its commit.
    const edit = h.ctx.store.tx(async (t) => {
      await lockMission(t, KEY);
      expect(await highestUnfinishedProgress(t, KEY)).toBe(2);
      await updateMissionIfRevision(t, KEY, 1, [{ column: "target", value: 3 }], h.clock.now().toISOString());
      holding();
      await gate;
    });
    await held;
    h.clock.advanceSeconds(61);
    const event = progress(7, "evt-7-0002", 3);
    await untilWaitingForTargetLock();
    release();
    await edit;
    // Read before the edit's commit, the old target (10) would have left the player at 3 of 3, never completed.
    expect((await event).body).toMatchObject({ accepted: true, progress: 3, target: 3, completed: true });
  });
});
