// Missions administration (issue 19): the list and create, PATCH guarded by X-Expected-Revision (428 without it,
// 409 with the winning revision when stale, exactly one of two racing edits applies), activate/deactivate seen by
// the mini-app routes, and the comparison / analytics / stats figures after real progress events; which missions
// are self-reported, and their tighter limits kept by PATCH (issue 30, item 3).
import { missionWindowTask } from "../../src/messenger/store/mission-stats";
import { afterEach, describe, expect, test } from "bun:test";
import type { Param } from "../../src/db/port";
import { jsonInit, type TestApp } from "../support/app";
import { createAdminToken, createKey, signedJson } from "../support/partner";
import { openMessengerApp, initDataFor, QUIZ3_MISSION, tmaPost } from "./support";

let h: TestApp;
let admin: string;
afterEach(async () => {
  await h?.close();
});

const setup = async () => {
  h = await openMessengerApp();
  admin = await createAdminToken(h);
};
const auth = () => ({ authorization: `Bearer ${admin}` });
const get = (path: string) => h.json(path, { headers: auth() });
const post = (path: string, body?: unknown, headers: Record<string, string> = {}) =>
  h.json(path, body === undefined ? { method: "POST", headers: { ...auth(), ...headers } } : jsonInit("POST", body, { ...auth(), ...headers }));
const patch = (key: string, body: unknown, revision?: string | number) =>
  h.json(
    `/api/messenger/admin/missions/${key}`,
    jsonInit("PATCH", body, { ...auth(), ...(revision === undefined ? {} : { "x-expected-revision": String(revision) }) }),
  );
const player = (id: number, path: string, body: Record<string, unknown> = {}) =>
  h.json(`/api/messenger/missions/${path}`, tmaPost(initDataFor(h, { id }), body));
const progress = (id: number, key: string, eventId: string, value: number) =>
  player(id, "progress", { mission_key: key, client_event_id: eventId, progress: value });
const audit = () =>
  h.ctx.store.all<{ action: string; target: string; details: string }>(
    "SELECT action, target, details FROM admin_audit WHERE action LIKE 'messenger.mission.%' ORDER BY id",
  );

const quiz3 = QUIZ3_MISSION;
const play2 = {
  mission_key: "play-2",
  title: "Play twice",
  event_type: "poll.vote",
  progress_source: "self_reported",
  target: 2,
  reward: { free_spins: 1 },
  daily_cap: 10,
  per_minute_cap: 1,
};

describe("GET and POST /api/messenger/admin/missions", () => {
  test("create is audited, a duplicate key is 409; the list pages with limit/offset and shows revision, state, updated_at", async () => {
    await setup();
    const created = await post("/api/messenger/admin/missions", quiz3);
    expect(created.status).toBe(200);
    expect(created.body.mission).toMatchObject({ mission_key: "quiz-3", revision: 1, active: true, updated_at: "2026-01-01T00:00:00.000Z" });
    h.clock.advanceSeconds(1);
    expect((await post("/api/messenger/admin/missions", play2)).status).toBe(200);
    const dup = await post("/api/messenger/admin/missions", { ...quiz3, title: "Again" });
    expect([dup.status, dup.body.error]).toEqual([409, "conflict"]);
    expect((await audit()).map((a) => [a.action, a.target])).toEqual([
      ["messenger.mission.create", "quiz-3"],
      ["messenger.mission.create", "play-2"],
    ]);

    const first = await get("/api/messenger/admin/missions?limit=1");
    expect(first.status).toBe(200);
    expect(first.body).toMatchObject({ count: 1, total: 2, pagination: { has_more: true, next_offset: 1, next_cursor: expect.any(String) } });
    expect(first.body.missions[0]).toMatchObject({ mission_key: "quiz-3", revision: 1, active: true, target: 3, progress_source: "self_reported" });
    const second = await get("/api/messenger/admin/missions?limit=1&offset=1");
    expect(second.body.missions.map((m: any) => m.mission_key)).toEqual(["play-2"]);
    expect(second.body.pagination).toEqual({ has_more: false, next_offset: null, next_cursor: null });

    const badLimit = await get("/api/messenger/admin/missions?limit=0");
    expect([badLimit.status, badLimit.body.error, badLimit.body.details[0].field]).toEqual([400, "invalid_query", "query.limit"]);
    const badBody = await post("/api/messenger/admin/missions", { ...quiz3, mission_key: "x-1", target: 0 });
    expect([badBody.status, badBody.body.error]).toEqual([400, "invalid_payload"]);
  });
});

describe("PATCH /api/messenger/admin/missions/{mission_key}", () => {
  test("428 without X-Expected-Revision, 400 naming the header when not a positive integer, 409 with the current revision when stale", async () => {
    await setup();
    await post("/api/messenger/admin/missions", quiz3);
    const missing = await patch("quiz-3", { title: "New" });
    expect([missing.status, missing.body.error]).toEqual([428, "revision_required"]);
    expect(missing.body.message).toContain("X-Expected-Revision");
    for (const bad of ["abc", "0", "-1", "1.5", "1e3", "99999999999999999999"]) {
      const res = await patch("quiz-3", { title: "New" }, bad);
      expect([bad, res.status, res.body.error, res.body.details[0].field]).toEqual([bad, 400, "invalid_payload", "header.x-expected-revision"]);
      expect(res.body.message).toContain("X-Expected-Revision");
    }
    const stale = await patch("quiz-3", { title: "New" }, 7);
    expect([stale.status, stale.body.error, stale.body.details.current_revision]).toEqual([409, "revision_conflict", 1]);
    const unknown = await patch("nope", { title: "New" }, 1);
    expect([unknown.status, unknown.body.error]).toEqual([404, "mission_not_found"]);
    const empty = await patch("quiz-3", {}, 1);
    expect([empty.status, empty.body.error]).toEqual([400, "invalid_payload"]);
    const emptyReward = await patch("quiz-3", { reward: {} }, 1);
    expect([emptyReward.status, emptyReward.body.error]).toEqual([400, "invalid_payload"]);
    const unknownField = await patch("quiz-3", { active: false }, 1);
    expect([unknownField.status, unknownField.body.error]).toEqual([400, "invalid_payload"]);
    const badCap = await patch("quiz-3", { per_minute_cap: 0 }, 1);
    expect([badCap.status, badCap.body.error]).toEqual([400, "invalid_payload"]);
    // Nothing of the refused edits applied or was audited.
    expect((await get("/api/messenger/admin/missions")).body.missions[0]).toMatchObject({ title: "Answer three quizzes", revision: 1 });
    expect(await audit()).toHaveLength(1);
  });

  test("an edit bumps revision and updated_at, is audited with before and after, and the next completion pays the new reward", async () => {
    await setup();
    await post("/api/messenger/admin/missions", quiz3);
    h.clock.advanceSeconds(60);
    const res = await patch("quiz-3", { title: "Answer thrice", reward: { points: 25 }, daily_cap: 20 }, 1);
    expect(res.status).toBe(200);
    expect(res.body.changed_fields).toEqual(["title", "reward.points", "daily_cap"]);
    expect(res.body.mission).toMatchObject({
      title: "Answer thrice",
      reward: { points: 25, missiles: 1, free_spins: 0 },
      daily_cap: 20,
      revision: 2,
      updated_at: "2026-01-01T00:01:00.000Z",
      created_at: "2026-01-01T00:00:00.000Z",
    });
    const row = (await audit()).at(-1)!;
    expect([row.action, row.target]).toEqual(["messenger.mission.update", "quiz-3"]);
    expect(JSON.parse(row.details)).toEqual({
      revision: 2,
      changed_fields: ["title", "reward.points", "daily_cap"],
      before: { title: "Answer three quizzes", "reward.points": 10, daily_cap: 10 },
      after: { title: "Answer thrice", "reward.points": 25, daily_cap: 20 },
    });
    expect((await patch("quiz-3", { title: "Old read" }, 1)).body.details.current_revision).toBe(2);

    await player(5, "enroll", { mission_key: "quiz-3" });
    const done = await progress(5, "quiz-3", "evt-p5-0001", 3);
    expect(done.body).toMatchObject({ accepted: true, completed: true, reward_paid: { points: 25, missiles: 1, free_spins: 0 } });
  });

  test("two PATCHes naming the same revision: exactly one applies, the other is 409 with the winner's revision", async () => {
    await setup();
    await post("/api/messenger/admin/missions", quiz3);
    const answers = await Promise.all(Array.from({ length: 8 }, (_, i) => patch("quiz-3", { title: `Edit ${i}` }, 1)));
    const won = answers.filter((a) => a.status === 200);
    const lost = answers.filter((a) => a.status === 409);
    expect([won.length, lost.length]).toEqual([1, 7]);
    expect(won[0]!.body.mission.revision).toBe(2);
    for (const l of lost) expect([l.body.error, l.body.details.current_revision]).toEqual(["revision_conflict", 2]);
    const mission = (await get("/api/messenger/admin/missions")).body.missions[0];
    expect([mission.title, mission.revision]).toEqual([won[0]!.body.mission.title, 2]);
    expect((await audit()).filter((a) => a.action === "messenger.mission.update")).toHaveLength(1);
  });

  test("a target at or below an unfinished player's progress is refused naming the field; above it applies", async () => {
    await setup();
    await post("/api/messenger/admin/missions", { ...quiz3, target: 5 });
    await player(7, "enroll", { mission_key: "quiz-3" });
    await progress(7, "quiz-3", "evt-p7-0001", 2);
    const low = await patch("quiz-3", { target: 2 }, 1);
    expect([low.status, low.body.error, low.body.details[0].field]).toEqual([409, "conflict", "body.target"]);
    expect(low.body.message).toContain("target must be more than 2");
    const ok = await patch("quiz-3", { target: 3 }, 1);
    expect([ok.status, ok.body.mission.target, ok.body.mission.revision]).toEqual([200, 3, 2]);
    h.clock.advanceSeconds(61);
    expect((await progress(7, "quiz-3", "evt-p7-0002", 3)).body).toMatchObject({ accepted: true, completed: true, target: 3 });
  });
});

describe("self-reported and server missions", () => {
  test("PATCH keeps a self-reported mission within its limits and each mission on its kind of event type", async () => {
    await setup();
    await post("/api/messenger/admin/missions", quiz3);
    const spin2 = await post("/api/messenger/admin/missions", { ...quiz3, mission_key: "spin-2", event_type: "spin_wheel.play", progress_source: undefined });
    expect(spin2.body.mission.progress_source).toBe("server");
    for (const [key, body, field] of [
      ["quiz-3", { daily_cap: 21 }, "body.daily_cap"],
      ["quiz-3", { per_minute_cap: 6 }, "body.per_minute_cap"],
      ["quiz-3", { reward: { salutes: "0.5" } }, "body.reward.salutes"],
      ["quiz-3", { event_type: "spin_wheel.play" }, "body.event_type"],
      ["spin-2", { event_type: "quiz.answer" }, "body.event_type"],
    ] as const) {
      const res = await patch(key, body, 1);
      expect([key, field, res.status, res.body.error, res.body.details[0].field]).toEqual([key, field, 400, "invalid_payload", field]);
    }
    expect((await patch("quiz-3", { daily_cap: 20, event_type: "quiz.correct" }, 1)).status).toBe(200);
    const moved = await patch("spin-2", { event_type: "recon_grid.reveal", daily_cap: 1000 }, 1);
    expect([moved.status, moved.body.mission.progress_source, moved.body.mission.event_type]).toEqual([200, "server", "recon_grid.reveal"]);
    expect((await audit()).filter((a) => a.action === "messenger.mission.update")).toHaveLength(2);
    const listed = await get("/api/messenger/admin/missions");
    expect(listed.body.missions.map((m: any) => [m.mission_key, m.progress_source])).toEqual([
      ["quiz-3", "self_reported"],
      ["spin-2", "server"],
    ]);
    const stats = await get("/api/messenger/admin/missions/quiz-3/stats");
    expect(stats.body.mission.progress_source).toBe("self_reported");
  });

  test("PATCH judges the whole mission: a self-reported one written outside its limits is refused until it is within them", async () => {
    await setup();
    await post("/api/messenger/admin/missions", quiz3);
    // A row outside the limits, as no route writes it (an older database, a hand edit).
    await h.ctx.store.tx((t) => t.run("UPDATE messenger_missions SET daily_cap = 500, reward_salutes = '5' WHERE mission_key = 'quiz-3'"));
    const title = await patch("quiz-3", { title: "Quiz, renamed" }, 1);
    expect([title.status, title.body.details.map((d: { field: string }) => d.field)]).toEqual([400, ["body.daily_cap"]]);
    expect((await patch("quiz-3", { daily_cap: 20 }, 1)).body.details.map((d: { field: string }) => d.field)).toEqual(["body.reward.salutes"]);
    const fixed = await patch("quiz-3", { title: "Quiz, renamed", daily_cap: 20, reward: { salutes: null } }, 1);
    expect([fixed.status, fixed.body.mission.daily_cap, fixed.body.mission.reward_salutes]).toEqual([200, 20, null]);
  });
});

describe("POST /api/messenger/admin/missions/{mission_key}/activate and /deactivate", () => {
  test("idempotent, audited when changed, optional revision honoured; the mini-app routes see the state", async () => {
    await setup();
    await post("/api/messenger/admin/missions", quiz3);
    await player(3, "enroll", { mission_key: "quiz-3" });
    expect((await progress(3, "quiz-3", "evt-p3-0001", 1)).body.accepted).toBe(true);

    const off = await post("/api/messenger/admin/missions/quiz-3/deactivate");
    expect([off.status, off.body.changed, off.body.mission.active, off.body.mission.revision]).toEqual([200, true, false, 2]);
    const again = await post("/api/messenger/admin/missions/quiz-3/deactivate");
    expect([again.status, again.body.changed, again.body.mission.revision]).toEqual([200, false, 2]);

    expect((await player(3, "catalog")).body.missions).toEqual([]);
    const enroll = await player(4, "enroll", { mission_key: "quiz-3" });
    expect([enroll.status, enroll.body.error]).toEqual([409, "mission_inactive"]);
    const refused = await progress(3, "quiz-3", "evt-p3-0002", 2);
    expect([refused.status, refused.body.error]).toEqual([409, "mission_inactive"]);
    // A replay still answers what was recorded.
    expect((await progress(3, "quiz-3", "evt-p3-0001", 1)).body).toMatchObject({ accepted: true, replayed: true });
    expect((await player(3, "enroll", { mission_key: "nope" })).body.error).toBe("mission_not_found");

    const stale = await post("/api/messenger/admin/missions/quiz-3/activate", undefined, { "x-expected-revision": "1" });
    expect([stale.status, stale.body.error, stale.body.details.current_revision]).toEqual([409, "revision_conflict", 2]);
    const badHeader = await post("/api/messenger/admin/missions/quiz-3/activate", undefined, { "x-expected-revision": "two" });
    expect([badHeader.status, badHeader.body.error]).toEqual([400, "invalid_payload"]);
    const on = await post("/api/messenger/admin/missions/quiz-3/activate", undefined, { "x-expected-revision": "2" });
    expect([on.status, on.body.changed, on.body.mission.active, on.body.mission.revision]).toEqual([200, true, true, 3]);
    expect((await post("/api/messenger/admin/missions/quiz-3/activate")).body.changed).toBe(false);

    const catalog = await player(3, "catalog");
    expect(catalog.body.missions.map((m: any) => [m.mission_key, m.enrollment.progress])).toEqual([["quiz-3", 1]]);
    expect((await progress(3, "quiz-3", "evt-p3-0003", 2)).body).toMatchObject({ accepted: true, progress: 2 });
    expect((await audit()).map((a) => [a.action, JSON.parse(a.details).revision ?? null])).toEqual([
      ["messenger.mission.create", 1],
      ["messenger.mission.deactivate", 2],
      ["messenger.mission.activate", 3],
    ]);
    for (const action of ["activate", "deactivate"]) {
      const unknown = await post(`/api/messenger/admin/missions/nope/${action}`);
      expect([unknown.status, unknown.body.error]).toEqual([404, "mission_not_found"]);
    }
  });
});

describe("comparison, analytics and stats", () => {
  /**
   * Two UTC days of real progress through the mini-app routes:
   * day 1: P1 enrolls quiz-3, 1 (ok), 1 (not_monotonic), 3 (ok, completes, 10 points + 1 missile);
   *        P2 enrolls quiz-3, 2 (ok); P3 enrolls play-2, 1 (ok), 2 (rate_limited).
   * day 2: reward edited to 20 points; P2 3 (ok, completes, 20 points + 1 missile); P1 4 (already_completed);
   *        P4 enrolls quiz-3 (no progress); P5 enrolls quiz-3, 1 (ok).
   */
  async function scenario() {
    await setup();
    await post("/api/messenger/admin/missions", quiz3);
    h.clock.advanceSeconds(1); // quiz-3 is the older: listed first
    await post("/api/messenger/admin/missions", play2);
    h.clock.set("2026-01-01T10:00:00.000Z");
    for (const [id, key] of [
      [1, "quiz-3"],
      [2, "quiz-3"],
      [3, "play-2"],
    ] as const)
      await player(id, "enroll", { mission_key: key });
    expect((await progress(1, "quiz-3", "evt-1-00001", 1)).body.accepted).toBe(true);
    expect((await progress(1, "quiz-3", "evt-1-00002", 1)).body.reason).toBe("not_monotonic");
    expect((await progress(1, "quiz-3", "evt-1-00003", 3)).body.completed).toBe(true);
    expect((await progress(2, "quiz-3", "evt-2-00001", 2)).body.accepted).toBe(true);
    expect((await progress(3, "play-2", "evt-3-00001", 1)).body.accepted).toBe(true);
    expect((await progress(3, "play-2", "evt-3-00002", 2)).body.reason).toBe("rate_limited");
    h.clock.set("2026-01-02T09:00:00.000Z");
    expect((await patch("quiz-3", { reward: { points: 20 } }, 1)).status).toBe(200);
    expect((await progress(2, "quiz-3", "evt-2-00002", 3)).body.reward_paid).toEqual({ points: 20, missiles: 1, free_spins: 0 });
    expect((await progress(1, "quiz-3", "evt-1-00004", 4)).body.reason).toBe("already_completed");
    await player(4, "enroll", { mission_key: "quiz-3" });
    await player(5, "enroll", { mission_key: "quiz-3" });
    expect((await progress(5, "quiz-3", "evt-5-00001", 1)).body.accepted).toBe(true);
  }

  const reasons = (r: Partial<Record<string, number>>) => ({
    not_monotonic: 0,
    not_observed: 0,
    rate_limited: 0,
    daily_cap_reached: 0,
    already_completed: 0,
    ...r,
  });
  const rewards = (n: number, points: number, missiles: number, free_spins = 0) => ({ completions_paid: n, free_spins, missiles, points, salutes: "0" });

  test("GET /api/messenger/admin/missions/comparison: every mission side by side in the window", async () => {
    await scenario();
    const two = await get("/api/messenger/admin/missions/comparison?days=2");
    expect(two.status).toBe(200);
    expect(two.body.window).toEqual({ from: "2026-01-01", to: "2026-01-02", days: 2, label: "last_2d" });
    expect(two.body).toMatchObject({ count: 2, has_more: false });
    expect(two.body.missions).toEqual([
      {
        mission_key: "quiz-3",
        title: "Answer three quizzes",
        active: true,
        progress_source: "self_reported",
        revision: 2,
        target: 3,
        enrollments: 4,
        completions: 2,
        events: { accepted: 5, accepted_units: 7, refused: 2, refused_by_reason: reasons({ not_monotonic: 1, already_completed: 1 }) },
        rewards_paid: rewards(2, 30, 2),
        enrolled_and_completed: 2,
        completion_rate: 0.5,
      },
      {
        mission_key: "play-2",
        title: "Play twice",
        active: true,
        progress_source: "self_reported",
        revision: 1,
        target: 2,
        enrollments: 1,
        completions: 0,
        events: { accepted: 1, accepted_units: 1, refused: 1, refused_by_reason: reasons({ rate_limited: 1 }) },
        rewards_paid: rewards(0, 0, 0),
        enrolled_and_completed: 0,
        completion_rate: 0,
      },
    ]);
    // today only: the day-2 slice; play-2 had nothing today, so no rate.
    const today = await get("/api/messenger/admin/missions/comparison?preset=today&limit=1");
    expect(today.body).toMatchObject({ window: { from: "2026-01-02", to: "2026-01-02", label: "today" }, count: 1, has_more: true });
    expect(today.body.missions[0]).toMatchObject({
      enrollments: 2,
      completions: 1,
      rewards_paid: rewards(1, 20, 1),
      enrolled_and_completed: 0,
      completion_rate: 0,
    });
    const both = await get("/api/messenger/admin/missions/comparison?days=2&preset=today");
    expect([both.status, both.body.error]).toEqual([400, "invalid_query"]);
    for (const q of ["days=0", "days=367", "days=1.5", "preset=fortnight", "limit=0"]) {
      const res = await get(`/api/messenger/admin/missions/comparison?${q}`);
      expect([q, res.status, res.body.error]).toEqual([q, 400, "invalid_query"]);
    }
  });

  test("GET /api/messenger/admin/missions/{mission_key}/analytics: one row per day, exact", async () => {
    await scenario();
    const res = await get("/api/messenger/admin/missions/quiz-3/analytics?days=3");
    expect(res.status).toBe(200);
    expect(res.body.window).toEqual({ from: "2025-12-31", to: "2026-01-02", days: 3, label: "last_3d" });
    const zero = {
      enrollments: 0,
      completions: 0,
      events: { accepted: 0, accepted_units: 0, refused: 0, refused_by_reason: reasons({}) },
      rewards_paid: rewards(0, 0, 0),
    };
    expect(res.body.series).toEqual([
      { day: "2025-12-31", ...zero },
      {
        day: "2026-01-01",
        enrollments: 2,
        completions: 1,
        events: { accepted: 3, accepted_units: 5, refused: 1, refused_by_reason: reasons({ not_monotonic: 1 }) },
        rewards_paid: rewards(1, 10, 1),
      },
      {
        day: "2026-01-02",
        enrollments: 2,
        completions: 1,
        events: { accepted: 2, accepted_units: 2, refused: 1, refused_by_reason: reasons({ already_completed: 1 }) },
        rewards_paid: rewards(1, 20, 1),
      },
    ]);
    expect(res.body.totals).toEqual({
      enrollments: 4,
      completions: 2,
      events: { accepted: 5, accepted_units: 7, refused: 2, refused_by_reason: reasons({ not_monotonic: 1, already_completed: 1 }) },
      rewards_paid: rewards(2, 30, 2),
    });
    const yesterday = await get("/api/messenger/admin/missions/play-2/analytics?preset=yesterday");
    expect(yesterday.body.series).toEqual([
      {
        day: "2026-01-01",
        enrollments: 1,
        completions: 0,
        events: { accepted: 1, accepted_units: 1, refused: 1, refused_by_reason: reasons({ rate_limited: 1 }) },
        rewards_paid: rewards(0, 0, 0),
      },
    ]);
    const unknown = await get("/api/messenger/admin/missions/nope/analytics");
    expect([unknown.status, unknown.body.error]).toEqual([404, "mission_not_found"]);
    const bad = await get("/api/messenger/admin/missions/quiz-3/analytics?days=1e308");
    expect([bad.status, bad.body.error, bad.body.details[0].field]).toEqual([400, "invalid_query", "query.days"]);
  });

  test("GET /api/messenger/admin/missions/{mission_key}/stats: funnel, median progress, all-time totals", async () => {
    await scenario();
    h.clock.set("2026-03-01T00:00:00.000Z"); // all-time figures do not depend on a window
    expect((await post("/api/messenger/admin/missions/quiz-3/deactivate")).status).toBe(200);
    const res = await get("/api/messenger/admin/missions/quiz-3/stats");
    expect(res.status).toBe(200);
    expect(res.body.mission).toMatchObject({ mission_key: "quiz-3", revision: 3, active: false, reward: { points: 20, missiles: 1, free_spins: 0 } });
    expect(res.body.funnel).toEqual({ enrolled: 4, started: 3, in_progress: 1, completed: 2 });
    expect(res.body.completion_rate).toBe(0.5);
    expect(res.body.median_progress).toBe(2); // progress 0, 1, 3, 3
    expect(res.body.events).toEqual({ accepted: 5, accepted_units: 7, refused: 2, refused_by_reason: reasons({ not_monotonic: 1, already_completed: 1 }) });
    expect(res.body.rewards_paid).toEqual(rewards(2, 30, 2));
    expect([res.body.first_enrolled_at, res.body.last_event_at]).toEqual(["2026-01-01T10:00:00.000Z", "2026-01-02T09:00:00.000Z"]);
    const play = await get("/api/messenger/admin/missions/play-2/stats");
    expect([play.body.funnel, play.body.median_progress, play.body.completion_rate]).toEqual([{ enrolled: 1, started: 1, in_progress: 1, completed: 0 }, 1, 0]);
    const unknown = await get("/api/messenger/admin/missions/nope/stats");
    expect([unknown.status, unknown.body.error]).toEqual([404, "mission_not_found"]);
  });

  test("salutes paid are summed exactly from what each completion credited (unpaid ones left out)", async () => {
    h = await openMessengerApp({ env: { MESSENGER_SALUTES_PARTNER: "Acme" } });
    admin = await createAdminToken(h);
    const key = await createKey(h, { partner: "Acme", mode: "live" });
    // A server mission (self-reported ones never pay salutes): each player spins once after enrolling.
    const spin1 = { ...quiz3, event_type: "spin_wheel.play", progress_source: undefined, target: 1, reward: { points: 1, salutes: "0.1" } };
    expect((await post("/api/messenger/admin/missions", spin1)).body.mission.progress_source).toBe("server");
    for (const id of [1, 2, 3]) {
      await player(id, "enroll", { mission_key: "quiz-3" });
      const spun = await h.json("/api/messenger/games/spin-wheel/play", tmaPost(initDataFor(h, { id }), { request_id: `spin-${id}-0001` }));
      expect(spun.status).toBe(200);
      if (id === 3) continue; // player 3 stays unlinked: its salutes are not paid
      const user = await signedJson(h, key, "POST", "/api/partner/users", { body: { external_id: `ext-${id}`, username: `linked${id}` } });
      expect((await post(`/api/messenger/admin/players/${id}/link`, { user_id: String(user.body.user.id), reason: "test" })).status).toBe(200);
    }
    expect((await progress(1, "quiz-3", "evt-1-00001", 1)).body.salutes).toMatchObject({ amount: "0.1", paid: true });
    expect((await patch("quiz-3", { reward: { salutes: "0.2" } }, 1)).status).toBe(200);
    expect((await progress(2, "quiz-3", "evt-2-00001", 1)).body.salutes).toMatchObject({ amount: "0.2", paid: true });
    expect((await progress(3, "quiz-3", "evt-3-00001", 1)).body.salutes).toMatchObject({ amount: "0.2", paid: false });
    const stats = await get("/api/messenger/admin/missions/quiz-3/stats");
    expect(stats.body.rewards_paid).toEqual({ completions_paid: 3, free_spins: 0, missiles: 0, points: 3, salutes: "0.3" });
    const cleared = await patch("quiz-3", { reward: { salutes: null } }, 2);
    expect([cleared.body.mission.reward_salutes, cleared.body.mission.revision]).toEqual([null, 3]);
  });

  test("every read of the comparison, analytics and stats walks a mission's slice of an index, never a whole table", async () => {
    await scenario();
    const store = h.ctx.store;
    const seen = new Set<string>();
    const [all, one] = [store.all.bind(store), store.get.bind(store)];
    const watch = (sql: string) => {
      if (/messenger_mission_(events|enrollments)/.test(sql)) seen.add(sql);
    };
    store.all = ((sql: string, params?: Param[]) => (watch(sql), all(sql, params))) as typeof store.all;
    store.get = ((sql: string, params?: Param[]) => (watch(sql), one(sql, params))) as typeof store.get;
    try {
      for (const p of ["comparison?days=90", "quiz-3/analytics?days=90", "quiz-3/stats"])
        expect((await get(`/api/messenger/admin/missions/${p}`)).status).toBe(200);
      // The window's reads run in the read worker (missionWindowTask): their statements, run here in place.
      for (const byDay of [true, false]) await missionWindowTask.run(store, { key: "quiz-3", since: "2026-01-01", until: "2026-12-31", byDay });
    } finally {
      store.all = all;
      store.get = one;
    }
    expect(seen.size).toBeGreaterThanOrEqual(10);
    // The plans are SQLite's (EXPLAIN QUERY PLAN); PostgreSQL's planner picks sequential scans on tables this small.
    if (store.dialect !== "sqlite") return;
    for (const sql of seen) {
      const params = (sql.match(/\?/g) ?? []).length;
      const plan = (
        await store.all<{ detail: string }>(
          `EXPLAIN QUERY PLAN ${sql}`,
          Array.from({ length: params }, () => "x"),
        )
      ).map((r) => r.detail);
      expect([sql, plan.filter((d) => /^SCAN messenger_mission/.test(d))]).toEqual([sql, []]);
      expect([
        sql,
        plan.some((d) => /USING (COVERING )?INDEX messenger_mission_(events_mission|enrollments_mission|enrollments_progress)_idx/.test(d)),
      ]).toEqual([sql, true]);
    }
  });

  test("a mission nobody enrolled in: zeros, null rate and median", async () => {
    await setup();
    await post("/api/messenger/admin/missions", quiz3);
    const stats = await get("/api/messenger/admin/missions/quiz-3/stats");
    expect(stats.body).toMatchObject({
      funnel: { enrolled: 0, started: 0, in_progress: 0, completed: 0 },
      completion_rate: null,
      median_progress: null,
      last_event_at: null,
    });
    const cmp = await get("/api/messenger/admin/missions/comparison");
    expect(cmp.body.window.days).toBe(30);
    expect(cmp.body.missions[0]).toMatchObject({ enrollments: 0, completion_rate: null });
  });
});

describe("access", () => {
  const routes: Array<[string, string]> = [
    ["GET", "/api/messenger/admin/missions"],
    ["POST", "/api/messenger/admin/missions"],
    ["GET", "/api/messenger/admin/missions/comparison"],
    ["PATCH", "/api/messenger/admin/missions/quiz-3"],
    ["POST", "/api/messenger/admin/missions/quiz-3/activate"],
    ["POST", "/api/messenger/admin/missions/quiz-3/deactivate"],
    ["GET", "/api/messenger/admin/missions/quiz-3/analytics"],
    ["GET", "/api/messenger/admin/missions/quiz-3/stats"],
  ];

  test("every route is 403 without the admin token (and with a player's init data), and changes nothing", async () => {
    await setup();
    await post("/api/messenger/admin/missions", quiz3);
    for (const [method, path] of routes) {
      const body =
        method === "GET" ? undefined : JSON.stringify(method === "PATCH" ? { title: "x" } : method === "POST" && path.endsWith("missions") ? quiz3 : {});
      const headers = { "content-type": "application/json", "x-expected-revision": "1" };
      const none = await h.json(path, { method, headers, body });
      expect([method, path, none.status, none.body.error]).toEqual([method, path, 403, "forbidden"]);
      const tma = await h.json(path, { method, headers: { ...headers, authorization: `tma ${initDataFor(h, { id: 1 })}` }, body });
      expect([method, path, tma.status]).toEqual([method, path, 403]);
    }
    const m = (await get("/api/messenger/admin/missions")).body.missions[0];
    expect([m.title, m.revision, m.active]).toEqual(["Answer three quizzes", 1, true]);
    expect(await audit()).toHaveLength(1);
  });

  test("the routes answer 503 to an operator when the bot is not configured", async () => {
    h = await openMessengerApp({ env: { MESSENGER_BOT_TOKEN: "" } });
    admin = await createAdminToken(h);
    const res = await get("/api/messenger/admin/missions/comparison");
    expect([res.status, res.body.error]).toEqual([503, "messenger_not_configured"]);
  });
});
