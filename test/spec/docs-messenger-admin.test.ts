// Docs audit: docs/messenger-admin-analytics.md, docs/messenger-admin-missions.md and docs/messenger-admin-bot.md
// (windows, defaults, manual grant, revisions) against the real app.
import { afterEach, describe, expect, test } from "bun:test";
import { jsonInit, type TestApp } from "../support/app";
import { createAdminToken } from "../support/partner";
import { initDataFor, openMessengerApp, tmaPost } from "../messenger/support";

let h: TestApp;
afterEach(async () => {
  await h?.close();
  h = undefined as unknown as TestApp;
});
const A = "/api/messenger/admin";
async function admin() {
  h = await openMessengerApp();
  h.clock.set("2026-03-10T12:00:00.000Z");
  return { authorization: `Bearer ${await createAdminToken(h)}` };
}

describe("docs/messenger-admin-analytics.md", () => {
  // docs/messenger-admin-analytics.md:11-24 and each route's default days
  test("windows: defaults per route, presets, both at once 400, bounds 1–366, games", async () => {
    const auth = await admin();
    for (const [path, days] of [
      ["/games/overview", 30],
      ["/games/spin-wheel", 7],
      ["/games/recon-grid", 7],
      ["/games/rollout-checklist", 7],
      ["/missions/comparison", 30],
    ] as const) {
      const r = await h.json(`${A}${path}`, { headers: auth });
      expect([path, r.status]).toEqual([path, 200]);
      expect([path, r.body.window.days, r.body.window.label]).toEqual([path, days, `last_${days}d`]);
      expect(r.body.window.to).toBe("2026-03-10");
      // docs/messenger-admin-analytics.md:20-21 (since/until); docs/messenger-admin-missions.md:65 ({from, to, days, label})
      if (path.startsWith("/games/")) expect(r.body.window.until).toBe("2026-03-11T00:00:00.000Z");
    }
    const w = (await h.json(`${A}/games/overview?preset=last_month`, { headers: auth })).body.window;
    expect(w).toMatchObject({
      from: "2026-02-01",
      to: "2026-02-28",
      days: 28,
      label: "last_month",
      since: "2026-02-01T00:00:00.000Z",
      until: "2026-03-01T00:00:00.000Z",
    });
    const wk = (await h.json(`${A}/games/overview?preset=this_week`, { headers: auth })).body.window;
    expect([wk.from, wk.to]).toEqual(["2026-03-09", "2026-03-10"]);
    const both = await h.json(`${A}/games/overview?days=7&preset=today`, { headers: auth });
    expect(both.status).toBe(400);
    expect(both.body.error).toBe("invalid_query");
    expect(both.body.message).toContain("query.days");
    expect(both.body.message).toContain("query.preset");
    expect((await h.json(`${A}/games/overview?days=366`, { headers: auth })).status).toBe(200);
    expect((await h.json(`${A}/games/overview?days=367`, { headers: auth })).status).toBe(400);
    expect((await h.json(`${A}/games/overview?preset=last_year`, { headers: auth })).status).toBe(400);
    expect((await h.json(`${A}/games/overview?games=spin_wheel,recon_grid`, { headers: auth })).status).toBe(200);
    const g = await h.json(`${A}/games/overview?games=poker`, { headers: auth });
    expect([g.status, g.body.details?.[0]?.field]).toEqual([400, "query.games"]);
    expect((await h.json(`${A}/games/overview?games=`, { headers: auth })).status).toBe(200);
  });

  // docs/messenger-admin-analytics.md:105-134 — export format csv default, json
  test("overview export: csv by default, json on request", async () => {
    const auth = await admin();
    const csv = await h.request(`${A}/games/overview/export?preset=last_7d`, { headers: auth });
    expect(csv.status).toBe(200);
    expect(csv.headers.get("content-type")).toContain("text/csv");
    const json = await h.json(`${A}/games/overview/export?format=json&preset=last_7d`, { headers: auth });
    expect(json.status).toBe(200);
    expect((await h.json(`${A}/games/overview/export?format=xml`, { headers: auth })).status).toBe(400);
  });

  // docs/messenger-admin-analytics.md:244-312 — user-activity and user-profiles: limit 1–200 default 50, sort, linked
  test("user-activity and user-profiles lists", async () => {
    const auth = await admin();
    await h.request("/api/messenger/init/verify", tmaPost(initDataFor(h, { id: 4242, username: "ada" })));
    const ua = await h.json(`${A}/games/user-activity/4242`, { headers: auth });
    expect(ua.status).toBe(200);
    expect(ua.body.query).toEqual({ limit: 50, offset: 0, cursor: null });
    expect((await h.json(`${A}/games/user-activity/4242?limit=201`, { headers: auth })).status).toBe(400);
    const up = await h.json(`${A}/games/user-profiles`, { headers: auth });
    expect(up.body.query).toEqual({ limit: 50, offset: 0, cursor: null, sort: "points_earned", linked: null });
    expect(up.body).toMatchObject({ total: 1, total_capped: false });
    for (const s of ["last_seen", "telegram_user_id"]) expect((await h.json(`${A}/games/user-profiles?sort=${s}`, { headers: auth })).status).toBe(200);
    expect((await h.json(`${A}/games/user-profiles?sort=name`, { headers: auth })).status).toBe(400);
    expect((await h.json(`${A}/games/user-profiles?linked=true`, { headers: auth })).status).toBe(200);
  });

  // docs/messenger-admin-analytics.md:314-346 — manual grant
  test("manual grant: answer, replay, reuse 422, unknown player 404, bounds", async () => {
    const auth = await admin();
    await h.request("/api/messenger/init/verify", tmaPost(initDataFor(h, { id: 4242 })));
    const body = { telegram_user_id: 4242, missiles: 5, reason: "compensation for the 7 Jan outage", request_id: "grant-0001" };
    const g = await h.json(`${A}/games/recon-grid/manual-grant`, jsonInit("POST", body, auth));
    expect(g.status).toBe(200);
    expect(g.body).toMatchObject({ grant: { ...body, granted_at: "2026-03-10T12:00:00.000Z" }, replayed: false, balances: { missile_balance: 5 } });
    const again = await h.json(`${A}/games/recon-grid/manual-grant`, jsonInit("POST", body, auth));
    expect([again.status, again.body.replayed, again.body.balances.missile_balance]).toEqual([200, true, 5]);
    const other = await h.json(`${A}/games/recon-grid/manual-grant`, jsonInit("POST", { ...body, missiles: 6 }, auth));
    expect([other.status, other.body.error]).toEqual([422, "request_id_reused"]);
    const nf = await h.json(`${A}/games/recon-grid/manual-grant`, jsonInit("POST", { ...body, telegram_user_id: 999, request_id: "grant-2" }, auth));
    expect([nf.status, nf.body.error]).toEqual([404, "player_not_found"]);
    for (const bad of [{ missiles: 0 }, { missiles: 1001 }, { reason: "   " }, { reason: "x".repeat(501) }, { request_id: "bad id" }]) {
      const r = await h.json(`${A}/games/recon-grid/manual-grant`, jsonInit("POST", { ...body, request_id: "g-b", ...bad }, auth));
      expect([JSON.stringify(bad), r.status]).toEqual([JSON.stringify(bad), 400]);
    }
  });
});

describe("docs/messenger-admin-missions.md", () => {
  // docs/messenger-admin-missions.md:84-300 — list defaults, PATCH with revisions, deactivate/activate idempotent
  test("missions list, PATCH revisions, deactivate and activate", async () => {
    const auth = await admin();
    const m = {
      mission_key: "spin-5",
      title: "Spin five times",
      event_type: "spin_wheel.play",
      target: 5,
      reward: { points: 100, missiles: 2 },
      daily_cap: 4,
      per_minute_cap: 2,
    };
    await h.json(`${A}/missions`, jsonInit("POST", m, auth));
    const l = await h.json(`${A}/missions`, { headers: auth });
    expect(l.body).toMatchObject({ count: 1, total: 1, query: { limit: 50, offset: 0, cursor: null } });
    expect(l.body.missions[0]).toMatchObject({ revision: 1, active: true });
    expect((await h.json(`${A}/missions?cursor=${"x".repeat(513)}`, { headers: auth })).status).toBe(400);
    expect((await h.json(`${A}/missions?cursor=abc`, { headers: auth })).status).toBe(400);
    const noRev = await h.json(`${A}/missions/spin-5`, jsonInit("PATCH", { target: 4 }, auth));
    expect([noRev.status, noRev.body.error]).toEqual([428, "revision_required"]);
    const p = await h.json(`${A}/missions/spin-5`, jsonInit("PATCH", { target: 4, reward: { points: 150 } }, { ...auth, "x-expected-revision": "1" }));
    expect(p.status).toBe(200);
    expect(p.body.mission).toMatchObject({ target: 4, reward: { free_spins: 0, missiles: 2, points: 150 }, revision: 2 });
    expect(p.body.changed_fields).toEqual(["target", "reward.points"]);
    const stale = await h.json(`${A}/missions/spin-5`, jsonInit("PATCH", { target: 4, reward: { points: 150 } }, { ...auth, "x-expected-revision": "1" }));
    expect([stale.status, stale.body.error]).toEqual([409, "revision_conflict"]);
    expect(stale.body.details).toEqual({ mission_key: "spin-5", expected_revision: 1, current_revision: 2 });
    const empty = await h.json(`${A}/missions/spin-5`, jsonInit("PATCH", { reward: {} }, { ...auth, "x-expected-revision": "2" }));
    expect([empty.status, empty.body.error]).toEqual([400, "invalid_payload"]);
    const d = await h.json(`${A}/missions/spin-5/deactivate`, { method: "POST", headers: { ...auth, "x-expected-revision": "2" } });
    expect(d.body).toMatchObject({ changed: true, mission: { active: false, revision: 3 } });
    const d2 = await h.json(`${A}/missions/spin-5/deactivate`, { method: "POST", headers: auth });
    expect(d2.body).toMatchObject({ changed: false, mission: { revision: 3 } });
    const d3 = await h.json(`${A}/missions/spin-5/deactivate`, { method: "POST", headers: { ...auth, "x-expected-revision": "2" } });
    expect([d3.status, d3.body.error]).toEqual([409, "revision_conflict"]);
    const en = await h.request("/api/messenger/missions/enroll", tmaPost(initDataFor(h, { id: 4242 }), { mission_key: "spin-5" }));
    const enb = (await en.json()) as any;
    expect([en.status, enb.error, enb.details]).toEqual([409, "mission_inactive", { mission_key: "spin-5" }]);
    const a = await h.json(`${A}/missions/spin-5/activate`, { method: "POST", headers: auth });
    expect(a.body).toMatchObject({ changed: true, mission: { active: true, revision: 4 } });
    const c = await h.json(`${A}/missions/comparison`, { headers: auth });
    expect(c.body.query).toMatchObject({ limit: 200 });
    expect((await h.json(`${A}/missions/spin-5/analytics`, { headers: auth })).status).toBe(200);
    expect((await h.json(`${A}/missions/spin-5/stats`, { headers: auth })).status).toBe(200);
  });
});

describe("docs/messenger-admin-bot.md", () => {
  // docs/messenger-admin-bot.md:152-160 — preview: hours 1–168 default 24, limit 1–100 default 20
  test("bot preview bounds; readiness and command helper answer", async () => {
    const auth = await admin();
    const p = await h.json(`${A}/bot/preview`, { headers: auth });
    expect(p.status).toBe(200);
    expect(JSON.stringify(p.body)).toMatch(/"hours":24/);
    expect((await h.json(`${A}/bot/preview?hours=168&limit=100`, { headers: auth })).status).toBe(200);
    expect((await h.json(`${A}/bot/preview?hours=169`, { headers: auth })).status).toBe(400);
    expect((await h.json(`${A}/bot/preview?limit=101`, { headers: auth })).status).toBe(400);
    expect((await h.json(`${A}/bot/bootstrap-readiness`, { headers: auth })).status).toBe(200);
    expect((await h.json(`${A}/bot/command-helper`, { headers: auth })).status).toBe(200);
  });
});
