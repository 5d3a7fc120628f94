// Docs audit: docs/messenger-admin-missions.md against the real app — the create refusals (kinds, self-reported
// limits, payable salutes), the revision header's refusals, the target lowered under a player's progress, paging by
// cursor, deactivation with replays, and the figures read back from real enrollments and progress events.
// (List defaults, the PATCH/activate basics: test/spec/docs-messenger-admin.test.ts.)
import { afterEach, describe, expect, test } from "bun:test";
import { initDataFor, openMessengerApp, QUIZ3_MISSION, tmaPost } from "../messenger/support";
import { jsonInit, openTestApp, type TestApp } from "../support/app";
import { createAdminToken } from "../support/partner";

const A = "/api/messenger/admin";
const SPIN = {
  mission_key: "spin-5",
  title: "Spin five times",
  event_type: "spin_wheel.play",
  target: 5,
  reward: { points: 100, missiles: 2 },
  daily_cap: 4,
  per_minute_cap: 2,
};
let h: TestApp;
afterEach(async () => {
  await h?.close();
  h = undefined as unknown as TestApp;
});
async function admin() {
  h = await openMessengerApp();
  h.clock.set("2026-03-03T10:00:00.000Z");
  return { authorization: `Bearer ${await createAdminToken(h)}` };
}
const fieldOf = (r: { body: any }) => r.body.details?.[0]?.field;

describe("docs/messenger-admin-missions.md", () => {
  // docs/messenger-admin-missions.md:14-37, 127-128 — refusals at creation
  test("create: conflict, kinds, self-reported limits, payable salutes", async () => {
    const auth = await admin();
    const post = (b: unknown) => h.json(`${A}/missions`, jsonInit("POST", b, auth));
    expect((await post(SPIN)).body.mission).toMatchObject({ progress_source: "server", revision: 1, active: true, reward_salutes: null });
    const dup = await post(SPIN);
    expect([dup.status, dup.body.error]).toEqual([409, "conflict"]);
    const SR = { ...QUIZ3_MISSION, mission_key: "sr" };
    for (const [b, field] of [
      [{ ...SPIN, mission_key: "m1", event_type: "nope.nope" }, "body.event_type"],
      [{ ...SPIN, mission_key: "m2", progress_source: "self_reported" }, "body.progress_source"],
      [{ ...SR, daily_cap: 21 }, "body.daily_cap"],
      [{ ...SR, per_minute_cap: 6 }, "body.per_minute_cap"],
      [{ ...SR, reward: { points: 1001 } }, "body.reward.points"],
      [{ ...SR, reward: { missiles: 21 } }, "body.reward.missiles"],
      [{ ...SR, reward: { free_spins: 6 } }, "body.reward.free_spins"],
      [{ ...SR, reward: { points: 1, salutes: "1" } }, "body.reward.salutes"],
      [{ ...SPIN, mission_key: "m3", reward: { salutes: "0.125" } }, "body.reward.salutes"],
      [{ ...SPIN, mission_key: "m4", reward: { salutes: "1000000000.01" } }, "body.reward.salutes"],
    ] as const) {
      const r = await post(b);
      expect([JSON.stringify(b), r.status, r.body.error, fieldOf(r)]).toEqual([JSON.stringify(b), 400, "invalid_payload", field]);
    }
    expect((await post({ ...SR, daily_cap: 20, per_minute_cap: 5, reward: { free_spins: 5, missiles: 20, points: 1000 } })).status).toBe(200);
    expect((await post({ ...SPIN, mission_key: "m5", reward: { salutes: "1000000000" } })).body.mission.reward_salutes).toBe("1000000000");
  });

  // docs/messenger-admin-missions.md:44-56, 160-172 — the header's refusals; PATCH refusals and salutes: null
  test("PATCH: header, fields, salutes removed, target under a player's progress", async () => {
    const auth = await admin();
    await h.json(`${A}/missions`, jsonInit("POST", { ...SPIN, reward: { points: 1, salutes: "5" } }, auth));
    await h.json(`${A}/missions`, jsonInit("POST", QUIZ3_MISSION, auth));
    const patch = (key: string, body: unknown, rev: string) => h.json(`${A}/missions/${key}`, jsonInit("PATCH", body, { ...auth, "x-expected-revision": rev }));
    for (const v of ["two", "0", "1.5"]) {
      const r = await patch("spin-5", { target: 6 }, v);
      expect([v, r.status, r.body.error, fieldOf(r)]).toEqual([v, 400, "invalid_payload", "header.x-expected-revision"]);
    }
    for (const b of [{ active: false }, { progress_source: "self_reported" }, {}]) expect((await patch("spin-5", b, "1")).status).toBe(400);
    const rm = await patch("spin-5", { reward: { salutes: null } }, "1");
    expect([rm.status, rm.body.mission.reward_salutes, rm.body.changed_fields]).toEqual([200, null, ["reward.salutes"]]);
    expect(fieldOf(await patch("quiz-3", { event_type: "spin_wheel.play" }, "1"))).toBe("body.event_type");
    expect(fieldOf(await patch("quiz-3", { daily_cap: 21 }, "1"))).toBe("body.daily_cap");
    const nf = await patch("nope", { target: 3 }, "1");
    expect([nf.status, nf.body.error]).toEqual([404, "mission_not_found"]);
    // Two players at progress 1 and 2 of 3: the target may not go down to 2
    for (const id of [1, 2]) {
      const init = initDataFor(h, { id });
      await h.request("/api/messenger/init/verify", tmaPost(init));
      await h.json("/api/messenger/missions/enroll", tmaPost(init, { mission_key: "quiz-3" }));
      await h.json("/api/messenger/missions/progress", tmaPost(init, { mission_key: "quiz-3", client_event_id: `e${id}`, progress: id }));
    }
    const down = await patch("quiz-3", { target: 2 }, "1");
    expect([down.status, down.body.error, fieldOf(down)]).toEqual([409, "conflict", "body.target"]);
    expect((await patch("quiz-3", { target: 4 }, "1")).status).toBe(200);
  });

  // docs/messenger-admin-missions.md:84-92 — cursor paging: oldest first, ties by key, no repeat or skip
  test("list and comparison pages by cursor", async () => {
    const auth = await admin();
    for (const k of ["m-b", "m-a", "m-d", "m-c"]) await h.json(`${A}/missions`, jsonInit("POST", { ...SPIN, mission_key: k }, auth));
    h.clock.set("2026-03-03T10:00:01.000Z");
    await h.json(`${A}/missions`, jsonInit("POST", { ...SPIN, mission_key: "m-0" }, auth));
    for (const path of ["/missions", "/missions/comparison"]) {
      const keys: string[] = [];
      let cursor: string | null = null;
      for (let i = 0; i < 5; i++) {
        const r: any = (await h.json(`${A}${path}?limit=2${cursor ? `&cursor=${cursor}` : ""}`, { headers: auth })).body;
        keys.push(...r.missions.map((m: any) => m.mission_key));
        cursor = r.pagination.next_cursor;
        if (!cursor) break;
      }
      expect([path, keys]).toEqual([path, ["m-a", "m-b", "m-c", "m-d", "m-0"]]);
    }
    const first = (await h.json(`${A}/missions?limit=1`, { headers: auth })).body.pagination.next_cursor;
    const both = await h.json(`${A}/missions?limit=1&offset=1&cursor=${first}`, { headers: auth });
    expect([both.status, both.body.error]).toEqual([400, "invalid_query"]);
  });

  // docs/messenger-admin-missions.md:218-260, 74-82, 290-437 — deactivation keeps replays; rewards paid are what
  // completions recorded; the funnel, rates and figures
  test("deactivate, complete, then raise the reward: the figures", async () => {
    const auth = await admin();
    await h.json(`${A}/missions`, jsonInit("POST", QUIZ3_MISSION, auth));
    const init = initDataFor(h, { id: 7 });
    await h.request("/api/messenger/init/verify", tmaPost(init));
    await h.json("/api/messenger/missions/enroll", tmaPost(init, { mission_key: "quiz-3" }));
    const progress = (id: string, p: number) =>
      h.json("/api/messenger/missions/progress", tmaPost(init, { mission_key: "quiz-3", client_event_id: id, progress: p }));
    expect((await progress("e1", 1)).body.accepted).toBe(true);
    expect((await progress("e1b", 1)).body.reason).toBe("not_monotonic");
    expect((await h.json(`${A}/missions/quiz-3/deactivate`, { method: "POST", headers: auth })).body).toMatchObject({
      changed: true,
      mission: { revision: 2 },
    });
    const catalog = await h.json("/api/messenger/missions/catalog", tmaPost(init, {}));
    expect(JSON.stringify(catalog.body)).not.toContain("quiz-3");
    expect((await progress("e1", 1)).body.replayed).toBe(true);
    const inactive = await progress("e2", 2);
    expect([inactive.status, inactive.body.error]).toEqual([409, "mission_inactive"]);
    await h.json(`${A}/missions/quiz-3/activate`, { method: "POST", headers: auth });
    h.clock.set("2026-03-03T10:05:00.000Z");
    expect((await progress("e3", 3)).body).toMatchObject({ completed: true, reward_paid: { points: 10, missiles: 1 } });
    const raised = await h.json(`${A}/missions/quiz-3`, jsonInit("PATCH", { reward: { points: 500 } }, { ...auth, "x-expected-revision": "3" }));
    expect(raised.status).toBe(200);
    const paid = { completions_paid: 1, free_spins: 0, missiles: 1, points: 10, salutes: "0" };
    const st = (await h.json(`${A}/missions/quiz-3/stats`, { headers: auth })).body;
    expect(st).toMatchObject({
      funnel: { enrolled: 1, started: 1, in_progress: 0, completed: 1 },
      completion_rate: 1,
      median_progress: 3,
      rewards_paid: paid,
      first_enrolled_at: "2026-03-03T10:00:00.000Z",
      last_event_at: "2026-03-03T10:05:00.000Z",
    });
    expect(st.events).toMatchObject({ accepted: 2, accepted_units: 3, refused: 1, refused_by_reason: { not_monotonic: 1 } });
    const cmp = (await h.json(`${A}/missions/comparison?preset=today`, { headers: auth })).body;
    expect(cmp.missions[0]).toMatchObject({ enrollments: 1, completions: 1, enrolled_and_completed: 1, completion_rate: 1, rewards_paid: paid });
    expect(cmp.query).toEqual({ limit: 200, offset: 0, cursor: null, days: 1, preset: "today" });
    const an = (await h.json(`${A}/missions/quiz-3/analytics?days=2`, { headers: auth })).body;
    expect(an.window).toEqual({ from: "2026-03-02", to: "2026-03-03", days: 2, label: "last_2d" });
    expect(an.series.map((d: any) => [d.day, d.completions])).toEqual([
      ["2026-03-02", 0],
      ["2026-03-03", 1],
    ]);
  });

  // docs/messenger-admin-missions.md:160-165, 396-399 — without enrollments: rates and median null
  test("empty mission: null rates", async () => {
    const auth = await admin();
    await h.json(`${A}/missions`, jsonInit("POST", SPIN, auth));
    const st = (await h.json(`${A}/missions/spin-5/stats`, { headers: auth })).body;
    expect([st.completion_rate, st.median_progress, st.first_enrolled_at, st.last_event_at]).toEqual([null, null, null, null]);
    expect((await h.json(`${A}/missions/comparison`, { headers: auth })).body.missions[0].completion_rate).toBeNull();
  });
});

describe("docs/messenger-admin-missions.md without the bot", () => {
  // docs/messenger-admin-missions.md:4-8 — 503 messenger_not_configured, but a bad query or body first
  test("bad input before the 503", async () => {
    h = await openTestApp();
    const auth = { authorization: `Bearer ${await createAdminToken(h)}` };
    const r = await h.json(`${A}/missions`, { headers: auth });
    expect([r.status, r.body.error]).toEqual([503, "messenger_not_configured"]);
    expect((await h.json(`${A}/missions?limit=0`, { headers: auth })).body.error).toBe("invalid_query");
    expect((await h.json(`${A}/missions`, jsonInit("POST", { mission_key: 5 }, auth))).body.error).toBe("invalid_payload");
  });
});
