// Docs audit: the economy, games, promos, missions and previews of docs/messenger.md against the real app.
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
async function call(init: string, path: string, body: unknown = {}) {
  const r = await h.request(`${M}${path}`, tmaPost(init, body));
  return { status: r.status, headers: r.headers, body: (await r.json()) as any };
}

describe("docs/messenger.md", () => {
  // docs/messenger.md:350-376 — welcome gift: 5 missiles and 50 points, once, during the first 7 days
  test("welcome gift: reward, replay, and 409 after 7 days", async () => {
    h = await openMessengerApp();
    const init = initDataFor(h, { id: 4242, username: "ada" });
    const a = await call(init, "/games/welcome-gift/open");
    expect(a.status).toBe(200);
    expect(a.body).toMatchObject({
      success: true,
      welcome_gift: { reward: { free_spins: 0, missiles: 5, points: 50 }, opened_at: "2026-01-01T00:00:00.000Z" },
      replayed: false,
      balances: { free_spin_balance: 0, missile_balance: 5, points_balance: 50 },
    });
    const b = await call(init, "/games/welcome-gift/open");
    expect(b.body).toMatchObject({ replayed: true, balances: { missile_balance: 5, points_balance: 50 } });
    const other = initDataFor(h, { id: 5151 });
    const cat = await call(other, "/games/catalog");
    expect(cat.body.welcome_gift).toEqual({ reward: { free_spins: 0, missiles: 5, points: 50 }, available: true, open_until: "2026-01-08T00:00:00.000Z" });
    h.clock.advanceSeconds(7 * 86400 + 1);
    const late = await call(initDataFor(h, { id: 5151 }), "/games/welcome-gift/open");
    expect([late.status, late.body.error]).toEqual([409, "game_state_conflict"]);
    expect(late.body.details.open_until).toBe("2026-01-08T00:00:00.000Z");
  });

  // docs/messenger.md:352-357, 384-404, 406-419 — the catalog's items and games; a purchase of 2 spin plays
  test("catalog items and a purchase as in the example", async () => {
    h = await openMessengerApp();
    const init = initDataFor(h, { id: 4242 });
    const g = await h.request(`${M}/games/catalog?init_data=${encodeURIComponent(init)}`);
    const cat = (await g.json()) as any;
    expect(g.status).toBe(200);
    expect(cat.items).toEqual([
      { item_key: "spin_play", title: "Wheel spin", price_points: 50, grants: { free_spins: 1, missiles: 0, points: 0 } },
      { item_key: "missile", title: "Recon missile", price_points: 20, grants: { free_spins: 0, missiles: 1, points: 0 } },
    ]);
    expect(cat.games.map((x: any) => x.game_key)).toEqual(["spin_wheel", "recon_grid"]);
    expect(cat.games[0]).toMatchObject({
      audience_group: "all",
      campaign_id: null,
      available: true,
      open_to_you: true,
      cost: { kind: "free_spin", amount: 1 },
    });
    expect(cat.games[1]).toMatchObject({ available: true, cost: { kind: "missile", amount: 1 } });
    const poor = await call(init, "/games/items/purchase", { request_id: "buy-0", item_key: "spin_play", quantity: 1 });
    expect([poor.status, poor.body.error]).toEqual([409, "game_balance_insufficient"]);
    expect(Object.keys(poor.body.details).sort()).toEqual(["balance", "has", "required"]);
    await call(init, "/games/welcome-gift/open");
    h.ctx; // 50 points now
    const admin = { authorization: `Bearer ${await createAdminToken(h)}` };
    await h.request(`${M}/admin/games/promos`, jsonInit("POST", { code: "BIG", reward: { points: 80 }, max_claims: 10, audience_group: "all" }, admin));
    await call(init, "/games/promos/claim", { request_id: "claim-big", code: "BIG" });
    const p = await call(init, "/games/items/purchase", { request_id: "buy-2026-01-01-0001", item_key: "spin_play", quantity: 2 });
    expect(p.status).toBe(200);
    expect(p.body).toMatchObject({
      purchase: { item_key: "spin_play", quantity: 2, price_points: 50, total_points: 100, granted: { free_spins: 2, missiles: 0, points: 0 } },
      replayed: false,
      balances: { free_spin_balance: 2, missile_balance: 5, points_balance: 30 },
    });
    const again = await call(init, "/games/items/purchase", { request_id: "buy-2026-01-01-0001", item_key: "spin_play", quantity: 2 });
    expect([again.status, again.body.replayed, again.body.balances.points_balance]).toEqual([200, true, 30]);
    const reused = await call(init, "/games/items/purchase", { request_id: "buy-2026-01-01-0001", item_key: "missile", quantity: 1 });
    expect([reused.status, reused.body.error]).toEqual([422, "request_id_reused"]);
    const badId = await call(init, "/games/items/purchase", { request_id: "bad id!", item_key: "missile", quantity: 1 });
    expect([badId.status, badId.body.error]).toEqual([400, "invalid_payload"]);
    const longId = await call(init, "/games/items/purchase", { request_id: "x".repeat(65), item_key: "missile", quantity: 1 });
    expect(longId.status).toBe(400);
    const okId = await call(init, "/games/items/purchase", { request_id: "A-z_0.9:-".padEnd(64, "x"), item_key: "missile", quantity: 1 });
    expect(okId.status).toBe(200);
  });

  // docs/messenger.md:421-492 — wheel campaign segments; status fields; daily free spin then 409 game_cooldown with Retry-After
  test("spin wheel: segments, status fields, daily free spin then cooldown", async () => {
    h = await openMessengerApp();
    const init = initDataFor(h, { id: 4242 });
    const s = await call(init, "/games/spin-wheel/status");
    expect(s.status).toBe(200);
    expect(s.body).toMatchObject({ available: true, free_spin_available: true, cooldown_seconds_remaining: 0, free_spin_balance: 0 });
    expect(s.body.campaign).toMatchObject({ campaign_key: "wheel-default", title: "Daily wheel", cooldown_seconds: 86400 });
    expect(s.body.campaign.segments.map((x: any) => [x.label, x.weight])).toEqual([
      ["10 points", 40],
      ["25 points", 25],
      ["100 points", 5],
      ["2 missiles", 15],
      ["Free spin", 10],
      ["Try again", 5],
    ]);
    for (const f of ["server_seed_hash", "client_seed", "next_nonce", "committed_at", "client_seed_set_at", "next_server_seed_hash", "next_committed_at"])
      expect(Object.keys(s.body.fairness)).toContain(f);
    const p = await call(init, "/games/spin-wheel/play", { request_id: "spin-2026-01-01-0001" });
    expect(p.status).toBe(200);
    expect(p.body.spin).toMatchObject({ campaign_key: "wheel-default", paid_with: "daily_free_spin" });
    expect(p.body.spin.fairness.nonce).toBe(0);
    if (p.body.spin.reward.free_spins === 0) {
      const c = await call(init, "/games/spin-wheel/play", { request_id: "spin-2026-01-01-0002" });
      expect([c.status, c.body.error]).toEqual([409, "game_cooldown"]);
      expect(c.headers.get("retry-after")).toBe("86400");
      expect(c.body.details.available_at).toBe("2026-01-02T00:00:00.000Z");
    }
  });

  // docs/messenger.md:576-627 — recon grid: 25 cells, 10 prizes; start twice without abandon_active → 409 with active_grid_id
  test("recon grid", async () => {
    h = await openMessengerApp();
    const init = initDataFor(h, { id: 4242 });
    const st = await call(init, "/games/recon-grid/status");
    expect(st.status).toBe(200);
    expect(typeof st.body.next_server_seed_hash).toBe("string");
    const g = await call(init, "/games/recon-grid/start", { client_seed: "grid-seed", next_server_seed_hash: st.body.next_server_seed_hash });
    expect(g.status).toBe(200);
    expect(g.body.grid).toMatchObject({ status: "active", cells_total: 25, prizes_total: 10, prizes_found: 0, revealed_cells: [] });
    expect(g.body.abandoned_grid).toBeNull();
    const again = await call(init, "/games/recon-grid/start", {});
    expect([again.status, again.body.error]).toEqual([409, "game_state_conflict"]);
    expect(again.body.details.active_grid_id).toBe(g.body.grid.grid_id);
    const noMissile = await call(init, "/games/recon-grid/reveal", { request_id: "r-1", grid_id: g.body.grid.grid_id, cell: 12 });
    expect([noMissile.status, noMissile.body.error]).toEqual([409, "game_balance_insufficient"]);
    await call(init, "/games/welcome-gift/open");
    const r = await call(init, "/games/recon-grid/reveal", { request_id: "reveal-4-12-0001", grid_id: g.body.grid.grid_id, cell: 12 });
    expect(r.status).toBe(200);
    expect(r.body).toMatchObject({ cell: 12, replayed: false });
    expect(r.body.balances.missile_balance).toBe(4);
    const same = await call(init, "/games/recon-grid/reveal", { request_id: "reveal-4-12-0002", grid_id: g.body.grid.grid_id, cell: 12 });
    expect([same.status, same.body.error]).toEqual([409, "game_state_conflict"]);
    const bad = await call(init, "/games/recon-grid/reveal", { request_id: "reveal-x", grid_id: g.body.grid.grid_id, cell: 25 });
    expect(bad.status).toBe(400);
    const buy = await call(init, "/games/recon-grid/purchase", { request_id: "missiles-0001", quantity: 1 });
    expect(buy.body.purchase).toMatchObject({ item_key: "missile", quantity: 1, price_points: 20, total_points: 20 });
  });

  // docs/messenger.md:629-683 — promos: create answer, claim, refusals
  test("promos: create, claim and refusals", async () => {
    h = await openMessengerApp();
    const admin = { authorization: `Bearer ${await createAdminToken(h)}` };
    const c = await h.json(
      `${M}/admin/games/promos`,
      jsonInit(
        "POST",
        { code: "SPRING", reward: { points: 40, free_spins: 1, salutes: "2.5" }, max_claims: 1, audience_group: "all", expires_at: "2026-04-01T00:00:00Z" },
        admin,
      ),
    );
    expect([200, 201]).toContain(c.status);
    expect(c.body.promo).toMatchObject({
      code: "SPRING",
      reward: { free_spins: 1, missiles: 0, points: 40 },
      reward_salutes: "2.5",
      max_claims: 1,
      claims: 0,
      audience_group: "all",
      expires_at: "2026-04-01T00:00:00.000Z",
      enabled: true,
    });
    const init = initDataFor(h, { id: 4242 });
    const cl = await call(init, "/games/promos/claim", { request_id: "claim-spring-0001", code: "SPRING" });
    expect(cl.status).toBe(200);
    expect(cl.body).toMatchObject({
      promo: { code: "SPRING", reward: { free_spins: 1, missiles: 0, points: 40 } },
      replayed: false,
      balances: { free_spin_balance: 1, points_balance: 40 },
    });
    expect(cl.body.salutes).toMatchObject({ amount: "2.5", paid: false });
    const twice = await call(init, "/games/promos/claim", { request_id: "claim-spring-0002", code: "SPRING" });
    expect([twice.status, twice.body.error]).toEqual([409, "promo_already_claimed"]);
    const other = await call(initDataFor(h, { id: 5151 }), "/games/promos/claim", { request_id: "claim-spring-0003", code: "SPRING" });
    expect([other.status, other.body.error]).toEqual([409, "promo_exhausted"]);
    const nf = await call(init, "/games/promos/claim", { request_id: "claim-x", code: "NOPE" });
    expect([nf.status, nf.body.error]).toEqual([404, "promo_not_found"]);
    await h.json(
      `${M}/admin/games/promos`,
      jsonInit("POST", { code: "OLD", reward: { points: 1 }, max_claims: 5, audience_group: "all", expires_at: "2026-01-01T00:10:00Z" }, admin),
    );
    await h.json(`${M}/admin/games/promos`, jsonInit("POST", { code: "PREM", reward: { points: 1 }, max_claims: 5, audience_group: "premium" }, admin));
    const prem = await call(init, "/games/promos/claim", { request_id: "claim-p", code: "PREM" });
    expect([prem.status, prem.body.error]).toEqual([403, "promo_not_eligible"]);
    expect(prem.body.details.audience_group).toBe("premium");
    h.clock.advanceSeconds(3600);
    const exp = await call(initDataFor(h, { id: 4242 }), "/games/promos/claim", { request_id: "claim-old", code: "OLD" });
    expect([exp.status, exp.body.error]).toEqual([410, "promo_expired"]);
    const list = await h.json(`${M}/admin/games/promos`, { headers: admin });
    expect(list.body.query).toMatchObject({ include_disabled: false });
    expect(Object.keys(list.body.pagination)).toEqual(expect.arrayContaining(["limit", "offset", "has_more", "next_offset", "next_cursor"]));
    const badSal = await h.json(
      `${M}/admin/games/promos`,
      jsonInit("POST", { code: "SAL", reward: { salutes: "2.555" }, max_claims: 5, audience_group: "all" }, admin),
    );
    expect([badSal.status, badSal.body.error]).toEqual([400, "invalid_payload"]);
  });

  // docs/messenger.md:684-782 — missions: create, self-reported limits, enroll, progress, history and list defaults
  test("missions", async () => {
    h = await openMessengerApp();
    const admin = { authorization: `Bearer ${await createAdminToken(h)}` };
    const c = await h.json(
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
    expect([200, 201]).toContain(c.status);
    expect(c.body.mission).toMatchObject({ progress_source: "server", active: true });
    const unknownType = await h.json(
      `${M}/admin/missions`,
      jsonInit("POST", { mission_key: "q", title: "q", event_type: "quiz.answer", target: 3, reward: { points: 1 }, daily_cap: 3, per_minute_cap: 1 }, admin),
    );
    expect(unknownType.status).toBe(400);
    expect(unknownType.body.details[0].field).toBe("body.event_type");
    const sr = await h.json(
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
    expect([200, 201]).toContain(sr.status);
    const srBig = await h.json(
      `${M}/admin/missions`,
      jsonInit(
        "POST",
        {
          mission_key: "quiz-9",
          title: "q",
          event_type: "quiz.answer",
          progress_source: "self_reported",
          target: 3,
          reward: { points: 1001 },
          daily_cap: 3,
          per_minute_cap: 1,
        },
        admin,
      ),
    );
    expect(srBig.status).toBe(400);
    const srCap = await h.json(
      `${M}/admin/missions`,
      jsonInit(
        "POST",
        {
          mission_key: "quiz-8",
          title: "q",
          event_type: "quiz.answer",
          progress_source: "self_reported",
          target: 3,
          reward: { points: 1 },
          daily_cap: 21,
          per_minute_cap: 1,
        },
        admin,
      ),
    );
    expect(srCap.status).toBe(400);
    const srv = await h.json(
      `${M}/admin/missions`,
      jsonInit(
        "POST",
        {
          mission_key: "spin-x",
          title: "q",
          event_type: "spin_wheel.play",
          progress_source: "self_reported",
          target: 3,
          reward: { points: 1 },
          daily_cap: 3,
          per_minute_cap: 1,
        },
        admin,
      ),
    );
    expect(srv.body.details?.[0]?.field).toBe("body.progress_source");
    const init = initDataFor(h, { id: 4242 });
    const cat = await call(init, "/missions/catalog");
    expect(cat.body.missions.find((m: any) => m.mission_key === "spin-5")).toMatchObject({
      reward: { free_spins: 0, missiles: 2, points: 100 },
      reward_salutes: null,
      enrollment: null,
    });
    const e = await call(init, "/missions/enroll", { mission_key: "spin-5" });
    expect(e.body).toMatchObject({
      enrollment: { mission_key: "spin-5", progress: 0, observed: 0, target: 5, completed_at: null, completed: false },
      already_enrolled: false,
    });
    expect((await call(init, "/missions/enroll", { mission_key: "spin-5" })).body.already_enrolled).toBe(true);
    const p = await call(init, "/missions/progress", { mission_key: "spin-5", client_event_id: "evt-00001" });
    expect(p.body).toMatchObject({ accepted: false, reason: "not_observed", progress_source: "server" });
    const ne = await call(init, "/missions/progress", { mission_key: "quiz-3", client_event_id: "evt-q", progress: 1 });
    expect([ne.status, ne.body.error]).toEqual([409, "mission_not_enrolled"]);
    const nf = await call(init, "/missions/progress", { mission_key: "nope", client_event_id: "evt-n" });
    expect([nf.status, nf.body.error]).toEqual([404, "mission_not_found"]);
    h.clock.advanceSeconds(1);
    await call(initDataFor(h, { id: 4242 }), "/missions/enroll", { mission_key: "quiz-3" });
    const noProg = await call(init, "/missions/progress", { mission_key: "quiz-3", client_event_id: "evt-q2" });
    expect([noProg.status, noProg.body.details?.[0]?.field]).toEqual([400, "body.progress"]);
    const q1 = await call(init, "/missions/progress", { mission_key: "quiz-3", client_event_id: "evt-q3", progress: 1 });
    expect(q1.body).toMatchObject({ accepted: true, progress: 1, observed: null });
    const reuse = await call(init, "/missions/progress", { mission_key: "quiz-3", client_event_id: "evt-q3", progress: 2 });
    expect([reuse.status, reuse.body.error]).toEqual([422, "request_id_reused"]);
    const hist = await call(init, "/missions/history", {});
    expect(hist.body.query).toMatchObject({ limit: 50, offset: 0, cursor: null });
    expect((await call(init, "/missions/history", { limit: 201 })).status).toBe(400);
    expect((await call(init, "/missions/history", { offset: 100001 })).status).toBe(400);
    const list = await call(init, "/missions/list", {});
    expect(list.body.query).toEqual({ limit: 500, offset: 0, cursor: null });
    expect(list.body.enrollments.map((x: any) => x.mission_key)).toEqual(["spin-5", "quiz-3"]);
    expect((await call(init, "/missions/list", { limit: 501 })).status).toBe(400);
  });

  // docs/messenger.md:843-866 — previews: limit defaults 20 and 10, bounds 1–50; write nothing for a stranger
  test("engagement previews", async () => {
    h = await openMessengerApp();
    const init = initDataFor(h, { id: 4242 });
    const q = `init_data=${encodeURIComponent(init)}`;
    const a = (await h.json(`${M}/engagement/activity-preview?${q}`)).body;
    expect(a.query).toEqual({ limit: 20, offset: 0, cursor: null });
    expect(Object.keys(a.totals).sort()).toEqual(["grids", "missions_completed", "points_earned", "promos_claimed", "spins"]);
    const l = (await h.json(`${M}/engagement/leaderboard-preview?${q}`)).body;
    expect(l.query).toEqual({ limit: 10, offset: 0, cursor: null });
    expect(l.you).toMatchObject({ rank: null });
    expect((await h.json(`${M}/engagement/activity-preview?${q}&limit=51`)).status).toBe(400);
    expect((await h.json(`${M}/engagement/leaderboard-preview?${q}&limit=50`)).status).toBe(200);
  });

  // docs/messenger.md:868-884 — ops/health fields and defaults
  test("ops/health", async () => {
    h = await openMessengerApp();
    const admin = { authorization: `Bearer ${await createAdminToken(h)}` };
    const r = await h.json(`${M}/ops/health`, { headers: admin });
    expect(r.status).toBe(200);
    expect(r.body.configured).toEqual({ bot_token: true, webhook_secret: true, init_data_mode: "hmac" });
    expect(r.body.window).toEqual({ hours: 24, since_hour_utc: "2025-12-31T01:00:00.000Z" });
    for (const k of ["updates", "init_data_failures", "plays", "bot_api", "outbox"]) expect(r.body[k]).toBeDefined();
  });

  // docs/messenger.md:784-805 — wallet challenge: nonce valid 10 minutes, SIWS message
  test("wallet-proof challenge", async () => {
    h = await openMessengerApp();
    const init = initDataFor(h, { id: 4242 });
    const a = "9xQeWvG816bUx9EPjHmaT23yvVM2ZWbrrpZb9PusVFin";
    const c = await call(init, "/wallet-proof/challenge", { address: a });
    expect(c.status).toBe(200);
    expect(c.body.challenge).toMatchObject({
      address: a,
      issued_at: "2026-01-01T00:00:00.000Z",
      expires_at: "2026-01-01T00:10:00.000Z",
      domain: "localhost:3000",
    });
    expect(c.body.challenge.message).toContain(`Nonce: ${c.body.challenge.nonce}`);
    expect(c.body.challenge.message).toContain("Link this wallet to Telegram user 4242");
    const unk = await call(init, "/wallet-claim/verify", { address: a, nonce: "0".repeat(32), message: "x", signature: "5Vd7" });
    expect([unk.status, unk.body.error]).toEqual([404, "wallet_nonce_unknown"]);
    const mm = await call(init, "/wallet-claim/verify", { address: a, nonce: c.body.challenge.nonce, message: "x", signature: "5Vd7" });
    expect([mm.status, mm.body.error]).toEqual([400, "wallet_message_mismatch"]);
    const bs = await call(init, "/wallet-claim/verify", { address: a, nonce: c.body.challenge.nonce, message: c.body.challenge.message, signature: "5Vd7" });
    expect([bs.status, bs.body.error]).toEqual([401, "wallet_signature_invalid"]);
    h.clock.advanceSeconds(601);
    const exp = await call(initDataFor(h, { id: 4242 }), "/wallet-claim/verify", {
      address: a,
      nonce: c.body.challenge.nonce,
      message: c.body.challenge.message,
      signature: "5Vd7",
    });
    expect([exp.status, exp.body.error]).toEqual([410, "wallet_nonce_expired"]);
  });
});
