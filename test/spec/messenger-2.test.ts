// Spec conformance (second audit): "Messenger mini-app operations" and "Authentication → Other" of the service
// interface — init data from the platform (header, init_data query, body), the webhook's secret header and replay
// suppression, the games and balances, and the operator-only telemetry.
import { afterEach, describe, expect, test } from "bun:test";
import { jsonInit, type TestApp } from "../support/app";
import { createKey, signedInit } from "../support/partner";
import { initDataFor, openMessengerApp, textUpdate, tmaPost, WEBHOOK_SECRET } from "../messenger/support";
import { createAdminToken } from "../support/partner";

let h: TestApp;
afterEach(async () => {
  await h?.close();
  h = undefined as unknown as TestApp;
});
const j = async (r: Response | Promise<Response>) => {
  const res = await r;
  return { status: res.status, body: (await res.json()) as any };
};

describe("init data", () => {
  test("accepted in the Authorization header, the init_data query parameter and the body; missing, tampered or expired is 401", async () => {
    h = await openMessengerApp();
    const init = initDataFor(h, { id: 4242, username: "ada" });
    for (const r of [
      h.request("/api/messenger/init/verify", tmaPost(init)),
      h.request(`/api/messenger/init/verify?init_data=${encodeURIComponent(init)}`, jsonInit("POST", {})),
      h.request("/api/messenger/init/verify", jsonInit("POST", { init_data: init })),
    ]) {
      const a = await j(r);
      expect(a.status).toBe(200);
      expect(a.body.identity.telegram_user_id).toBe(4242);
      expect(Object.keys(a.body.balances).sort()).toEqual(["free_spin_balance", "missile_balance", "points_balance"]);
    }
    const old = initDataFor(h, { id: 1 }, {}, Math.floor(h.clock.now().getTime() / 1000) - 86_401);
    for (const [init2, code] of [
      [null, "init_data_missing"],
      [init.replace("Ada", "Adb"), "init_data_signature_invalid"],
      [old, "init_data_expired"],
    ] as const) {
      const a = await j(h.request("/api/messenger/init/verify", init2 ? tmaPost(init2) : jsonInit("POST", {})));
      expect([a.status, a.body.error]).toEqual([401, code]);
    }
  });

  test("GET catalog and the read-only previews take init_data; without it 401", async () => {
    h = await openMessengerApp();
    const q = `init_data=${encodeURIComponent(initDataFor(h, { id: 7 }))}`;
    for (const p of ["/api/messenger/games/catalog", "/api/messenger/engagement/activity-preview", "/api/messenger/engagement/leaderboard-preview"]) {
      expect((await j(h.request(`${p}?${q}`))).status).toBe(200);
      expect((await j(h.request(p))).status).toBe(401);
    }
    const games = (await j(h.request(`/api/messenger/games/catalog?${q}`))).body.games.map((g: any) => g.game_key);
    expect(games).toEqual(expect.arrayContaining(["spin_wheel", "recon_grid"]));
  });
});

describe("games", () => {
  test("spin wheel status and play; a grid starts; number fields take JSON numbers only", async () => {
    h = await openMessengerApp();
    const init = initDataFor(h, { id: 99 });
    const st = await j(h.request("/api/messenger/games/spin-wheel/status", tmaPost(init)));
    expect(st.body).toMatchObject({ success: true, available: true, free_spin_available: true });
    const play = await j(h.request("/api/messenger/games/spin-wheel/play", tmaPost(init, { request_id: "r-1" })));
    expect(play.status).toBe(200);
    const after = await j(h.request("/api/messenger/games/spin-wheel/status", tmaPost(init)));
    expect(after.body.free_spin_available).toBe(false);
    // The grid commits a server seed on status first (provably fair), then starts.
    expect((await j(h.request("/api/messenger/games/recon-grid/start", tmaPost(init, {})))).body.error).toBe("game_state_conflict");
    expect((await j(h.request("/api/messenger/games/recon-grid/status", tmaPost(init)))).body.next_server_seed_hash).toMatch(/^[0-9a-f]{64}$/);
    const grid = await j(h.request("/api/messenger/games/recon-grid/start", tmaPost(init, {})));
    expect(grid.body.grid).toMatchObject({ status: "active", cells_total: 25 });
    const bad = await j(h.request("/api/messenger/games/items/purchase", tmaPost(init, { request_id: "r-2", item_key: "spin_play", quantity: "2" })));
    expect([bad.status, bad.body.error]).toEqual([400, "invalid_payload"]);
  });
});

describe("webhook and operator telemetry", () => {
  test("the webhook checks X-Messenger-Bot-Api-Secret-Token and suppresses a replayed update", async () => {
    h = await openMessengerApp();
    const up = textUpdate("/help");
    expect((await j(h.request("/api/messenger/webhook", jsonInit("POST", up)))).status).toBe(401);
    const hdr = { "X-Messenger-Bot-Api-Secret-Token": WEBHOOK_SECRET };
    expect((await j(h.request("/api/messenger/webhook", jsonInit("POST", up, hdr)))).body).toMatchObject({ duplicate: false, handled: true });
    expect((await j(h.request("/api/messenger/webhook", jsonInit("POST", up, hdr)))).body).toMatchObject({ duplicate: true, replies_queued: 0 });
  });

  test("GET /api/messenger/ops/health is operator-only (403 to anonymous and to a partner key) and bounds hours and limit", async () => {
    h = await openMessengerApp();
    expect((await j(h.request("/api/messenger/ops/health"))).status).toBe(403);
    const k = await createKey(h);
    expect((await j(h.request("/api/messenger/ops/health", signedInit(h, k, "GET", "/api/messenger/ops/health")))).status).toBe(403);
    const A = { authorization: `Bearer ${await createAdminToken(h)}` };
    const ok = await j(h.request("/api/messenger/ops/health?hours=24&limit=5", { headers: A }));
    expect(ok.body.window.hours).toBe(24);
    for (const q of ["hours=0", "limit=100000"]) expect((await j(h.request(`/api/messenger/ops/health?${q}`, { headers: A }))).status).toBe(400);
  });
});
