// Docs audit (second batch): docs/messenger.md's mission abuse controls and payouts against the real app.
import { afterEach, describe, expect, test } from "bun:test";
import { jsonInit, type TestApp } from "../support/app";
import { createAdminToken } from "../support/partner";
import { initDataFor, openMessengerApp, tmaPost } from "../messenger/support";

let h: TestApp;
afterEach(async () => {
  await h?.close();
  h = undefined as unknown as TestApp;
});
const M = "/api/messenger";
async function call(path: string, body: unknown = {}, id = 4242) {
  const r = await h.request(`${M}${path}`, tmaPost(initDataFor(h, { id }), body));
  return { status: r.status, body: (await r.json()) as any };
}

describe("docs/messenger.md (second batch)", () => {
  // docs/messenger.md:742-764 — self-reported: absolute progress, not_monotonic, per-minute cap, daily cap, completion pays once
  test("self-reported mission controls", async () => {
    h = await openMessengerApp();
    const admin = { authorization: `Bearer ${await createAdminToken(h)}` };
    const c = await h.json(
      `${M}/admin/missions`,
      jsonInit(
        "POST",
        {
          mission_key: "quiz-3",
          title: "Answer three quizzes",
          event_type: "quiz.answer",
          progress_source: "self_reported",
          target: 3,
          reward: { points: 300 },
          daily_cap: 3,
          per_minute_cap: 1,
        },
        admin,
      ),
    );
    expect([200, 201]).toContain(c.status);
    await call("/missions/enroll", { mission_key: "quiz-3" });
    const a = await call("/missions/progress", { mission_key: "quiz-3", client_event_id: "e1", progress: 1 });
    expect(a.body).toMatchObject({ accepted: true, progress: 1, completed: false });
    const rl = await call("/missions/progress", { mission_key: "quiz-3", client_event_id: "e2", progress: 2 });
    expect(rl.body).toMatchObject({ accepted: false, reason: "rate_limited" });
    h.clock.advanceSeconds(61);
    const nm = await call("/missions/progress", { mission_key: "quiz-3", client_event_id: "e3", progress: 1 });
    expect(nm.body).toMatchObject({ accepted: false, reason: "not_monotonic" });
    h.clock.advanceSeconds(61);
    const done = await call("/missions/progress", { mission_key: "quiz-3", client_event_id: "e4", progress: 7 });
    expect(done.body).toMatchObject({ accepted: true, progress: 3, completed: true });
    expect(done.body.reward_paid).toBeTruthy();
    const bal1 = (await call("/init/verify")).body.balances.points_balance;
    expect(bal1).toBe(300);
    h.clock.advanceSeconds(61);
    const after = await call("/missions/progress", { mission_key: "quiz-3", client_event_id: "e5", progress: 8 });
    expect(after.body).toMatchObject({ accepted: false, reason: "already_completed" });
    const rep = await call("/missions/progress", { mission_key: "quiz-3", client_event_id: "e4", progress: 7 });
    expect(rep.body).toMatchObject({ replayed: true, completed: true });
    expect((await call("/init/verify")).body.balances.points_balance).toBe(300);
  });

  // docs/messenger.md:742-750 — a server mission follows the server's count of spins, at most daily_cap a day
  test("server mission follows observed spins", async () => {
    h = await openMessengerApp();
    const admin = { authorization: `Bearer ${await createAdminToken(h)}` };
    await h.json(
      `${M}/admin/missions`,
      jsonInit(
        "POST",
        {
          mission_key: "spin-5",
          title: "Spin five times",
          event_type: "spin_wheel.play",
          target: 5,
          reward: { points: 100, missiles: 2 },
          daily_cap: 4,
          per_minute_cap: 2,
        },
        admin,
      ),
    );
    await call("/missions/enroll", { mission_key: "spin-5" });
    await call("/games/spin-wheel/play", { request_id: "s1" });
    const p = await call("/missions/progress", { mission_key: "spin-5", client_event_id: "evt-00001", progress: 4 });
    expect(p.body).toMatchObject({ accepted: true, progress: 1, observed: 1, progress_source: "server" });
    const e = await call("/missions/enroll", { mission_key: "spin-5" });
    expect(e.body.enrollment.observed).toBe(1);
  });

  // docs/messenger.md:60-66 — init data failures: malformed, future-dated with details
  test("init data refusals", async () => {
    h = await openMessengerApp();
    const now = Math.floor(h.clock.now().getTime() / 1000);
    const fut = initDataFor(h, { id: 1 }, {}, now + 61);
    const r = await h.request(`${M}/init/verify`, tmaPost(fut));
    const b = (await r.json()) as any;
    expect([r.status, b.error]).toEqual([401, "init_data_future_dated"]);
    expect(b.details).toEqual({ auth_date: now + 61, server_time: now, max_future_skew_seconds: 60 });
    const ok60 = await h.request(`${M}/init/verify`, tmaPost(initDataFor(h, { id: 1 }, {}, now + 60)));
    expect(ok60.status).toBe(200);
    const old = await h.request(`${M}/init/verify`, tmaPost(initDataFor(h, { id: 1 }, {}, now - 86401)));
    const ob = (await old.json()) as any;
    expect([old.status, ob.error, ob.details]).toEqual([401, "init_data_expired", { auth_date: now - 86401, max_age_seconds: 86400 }]);
    const mal = await h.request(`${M}/init/verify`, tmaPost("not=init"));
    expect(((await mal.json()) as any).error).toBe("init_data_malformed");
  });

  // docs/messenger.md:11 — without MESSENGER_BOT_TOKEN: 503 messenger_not_configured once the credential is in order
  test("not configured", async () => {
    const { openTestApp } = await import("../support/app");
    h = await openTestApp();
    const admin = { authorization: `Bearer ${await createAdminToken(h)}` };
    const op = await h.json(`${M}/admin/missions`, { headers: admin });
    expect([op.status, op.body.error]).toEqual([503, "messenger_not_configured"]);
    expect((await h.json(`${M}/admin/missions`)).status).toBe(403);
    const pl = await h.json(`${M}/init/verify`, jsonInit("POST", {}));
    expect([pl.status, pl.body.error]).toEqual([401, "init_data_missing"]);
    const wh = await h.json(`${M}/webhook`, jsonInit("POST", { update_id: 1 }));
    expect([wh.status, wh.body.error]).toEqual([401, "webhook_secret_invalid"]);
  });
});
