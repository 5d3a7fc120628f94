// Promos and missions (issue 18): operator-made (audited), claimed / progressed by players with the abuse
// limits — once per player, total cap, expiry, audience group; replayed events, monotonic progress, per-minute
// and daily caps, and a completion that pays once. Mission progress on what the server observes is the server's
// own count, never the client's number; anything else must be declared self-reported (issue 30, item 3).
import { afterEach, describe, expect, test } from "bun:test";
import { applyAction } from "../../src/messenger/ledger";
import { jsonInit, type TestApp } from "../support/app";
import { createAdminToken } from "../support/partner";
import { openMessengerApp, initDataFor, startFakeBotApi, textUpdate, tmaPost, webhookPost } from "./support";

let h: TestApp;
let admin: string;
afterEach(async () => {
  await h?.close();
});

const setup = async (env: Record<string, string> = {}) => {
  h = await openMessengerApp({ env });
  admin = await createAdminToken(h);
};
const as = (id: number, path: string, body: Record<string, unknown> = {}, user: Record<string, unknown> = {}) =>
  h.json(path, tmaPost(initDataFor(h, { id, ...user }), body));
const adminPost = (path: string, body: unknown) => h.json(path, jsonInit("POST", body, { authorization: `Bearer ${admin}` }));
let seq = 0;
const rid = () => `promo-req-${++seq}`;

describe("promos", () => {
  test("once per player, total cap, expiry and audience group each refuse with their code", async () => {
    await setup();
    const created = await adminPost("/api/messenger/admin/games/promos", { code: "SPRING", reward: { points: 40, free_spins: 1 }, max_claims: 2 });
    expect(created.status).toBe(200);
    expect(created.body.promo).toMatchObject({ code: "SPRING", claims: 0, audience_group: "all" });
    expect((await adminPost("/api/messenger/admin/games/promos", { code: "SPRING", reward: {}, max_claims: 1 })).status).toBe(409);
    const audit = await h.ctx.store.all("SELECT action, target FROM admin_audit WHERE action LIKE 'messenger.%'");
    expect(audit).toEqual([{ action: "messenger.promo.create", target: "SPRING" }]);
    const one = await as(1, "/api/messenger/games/promos/claim", { request_id: rid(), code: "SPRING" });
    expect(one.status).toBe(200);
    expect(one.body.balances).toEqual({ free_spin_balance: 1, missile_balance: 0, points_balance: 40 });
    const twice = await as(1, "/api/messenger/games/promos/claim", { request_id: rid(), code: "SPRING" });
    expect([twice.status, twice.body.error]).toEqual([409, "promo_already_claimed"]);
    expect((await as(2, "/api/messenger/games/promos/claim", { request_id: rid(), code: "SPRING" })).status).toBe(200);
    const capped = await as(3, "/api/messenger/games/promos/claim", { request_id: rid(), code: "SPRING" });
    expect([capped.status, capped.body.error]).toEqual([409, "promo_exhausted"]);
    const unknown = await as(3, "/api/messenger/games/promos/claim", { request_id: rid(), code: "NOPE1" });
    expect([unknown.status, unknown.body.error]).toEqual([404, "promo_not_found"]);

    await adminPost("/api/messenger/admin/games/promos", {
      code: "SOON",
      reward: { points: 1 },
      max_claims: 10,
      expires_at: new Date(h.clock.now().getTime() + 60_000).toISOString(),
    });
    h.clock.advanceSeconds(61);
    const expired = await as(3, "/api/messenger/games/promos/claim", { request_id: rid(), code: "SOON" });
    expect([expired.status, expired.body.error]).toEqual([410, "promo_expired"]);

    await adminPost("/api/messenger/admin/games/promos", { code: "VIP", reward: { missiles: 3 }, max_claims: 10, audience_group: "premium" });
    const plain = await as(4, "/api/messenger/games/promos/claim", { request_id: rid(), code: "VIP" });
    expect([plain.status, plain.body.error, plain.body.details]).toEqual([403, "promo_not_eligible", { audience_group: "premium" }]);
    expect((await as(5, "/api/messenger/games/promos/claim", { request_id: rid(), code: "VIP" }, { is_premium: true })).status).toBe(200);
    const listed = await h.json("/api/messenger/admin/games/promos", { headers: { authorization: `Bearer ${admin}` } });
    expect(listed.body.promos.find((p: any) => p.code === "SPRING").claims).toBe(2);
  });

  test("concurrent claims of the last slots never exceed the cap", async () => {
    await setup();
    await adminPost("/api/messenger/admin/games/promos", { code: "RUSH", reward: { points: 5 }, max_claims: 3 });
    const answers = await Promise.all(
      Array.from({ length: 12 }, (_, i) => as(100 + i, "/api/messenger/games/promos/claim", { request_id: rid(), code: "RUSH" })),
    );
    expect(answers.filter((a) => a.status === 200)).toHaveLength(3);
    expect(answers.filter((a) => a.body.error === "promo_exhausted")).toHaveLength(9);
    expect(await h.ctx.store.get("SELECT claims FROM messenger_promos WHERE code = 'RUSH'")).toEqual({ claims: 3 });
  });

  test("/start promo_<CODE> claims the promo from the bot", async () => {
    const api = startFakeBotApi();
    try {
      await setup({ MESSENGER_BOT_API_BASE: api.url });
      await adminPost("/api/messenger/admin/games/promos", { code: "BOTPROMO", reward: { points: 7 }, max_claims: 5 });
      await h.json("/api/messenger/webhook", webhookPost(textUpdate("/start promo_BOTPROMO", { id: 55, first_name: "Bo" })));
      await h.json("/api/messenger/webhook", webhookPost(textUpdate("/start promo_BOTPROMO", { id: 55, first_name: "Bo" })));
      await h.ctx.jobs.runNow("messenger-bot-outbox");
      const texts = api.calls.map((c) => c.body.text as string);
      expect(texts.filter((t) => t.startsWith("Promo BOTPROMO applied: +0 free spins, +0 missiles, +7 points."))).toHaveLength(1);
      expect(texts.filter((t) => t.startsWith("Promo BOTPROMO was already applied"))).toHaveLength(1);
      expect(await h.ctx.store.get("SELECT points_balance FROM messenger_players WHERE telegram_user_id = 55")).toEqual({ points_balance: 7 });
      // One of each reads as one: "+1 free spin, +1 missile, +1 point", never "+1 points".
      await adminPost("/api/messenger/admin/games/promos", { code: "ONEEACH", reward: { free_spins: 1, missiles: 1, points: 1 }, max_claims: 5 });
      await h.json("/api/messenger/webhook", webhookPost(textUpdate("/start promo_ONEEACH", { id: 55, first_name: "Bo" })));
      await h.ctx.jobs.runNow("messenger-bot-outbox");
      expect(api.calls.map((c) => c.body.text as string).filter((t) => t.startsWith("Promo ONEEACH"))).toEqual([
        "Promo ONEEACH applied: +1 free spin, +1 missile, +1 point.",
      ]);
    } finally {
      api.stop();
    }
  });
});

describe("referrals", () => {
  test("/start ref_<id> records the inviter once, never the player itself or an unknown player", async () => {
    const api = startFakeBotApi();
    try {
      await setup({ MESSENGER_BOT_API_BASE: api.url });
      const start = (text: string, id: number, name: string) => h.json("/api/messenger/webhook", webhookPost(textUpdate(text, { id, first_name: name })));
      await start("/start", 10, "Inviter");
      await start("/start ref_10", 11, "Friend");
      await start("/start ref_12", 11, "Friend"); // already referred: unchanged
      await start("/start ref_13", 13, "Self"); // self-referral: ignored
      await start("/start ref_999", 14, "Nobody"); // unknown inviter: ignored
      const rows = await h.ctx.store.all("SELECT telegram_user_id AS id, referred_by FROM messenger_players ORDER BY id");
      expect(rows).toEqual([
        { id: 10, referred_by: null },
        { id: 11, referred_by: 10 },
        { id: 13, referred_by: null },
        { id: 14, referred_by: null },
      ]);
      await h.ctx.jobs.runNow("messenger-bot-outbox");
      expect(api.calls.filter((c) => c.body.text === "You were invited by Inviter.")).toHaveLength(1);
      const verified = await as(11, "/api/messenger/init/verify");
      expect(verified.body.player.referred_by).toBe(10);
    } finally {
      api.stop();
    }
  });
});

describe("missions", () => {
  const mission = {
    mission_key: "quiz-5",
    title: "Answer five quizzes",
    event_type: "quiz.answer",
    progress_source: "self_reported",
    target: 5,
    reward: { points: 100, missiles: 2 },
    daily_cap: 4,
    per_minute_cap: 2,
  };
  const credit = (id: number, deltas: { freeSpins?: number; points?: number }) =>
    applyAction(h.ctx, { telegramUserId: id, requestId: rid(), action: "test.credit", inputs: deltas, gameKey: null }, async () => ({
      deltas: { freeSpins: deltas.freeSpins ?? 0, missiles: 0, points: deltas.points ?? 0 },
      result: {},
    }));
  const spin = async (id: number) => expect((await as(id, "/api/messenger/games/spin-wheel/play", { request_id: rid() })).status).toBe(200);
  const rewardRows = (id: number) =>
    h.ctx.store.get("SELECT COUNT(*) AS n, SUM(points_delta) AS p FROM messenger_ledger WHERE telegram_user_id = ? AND action = 'mission.reward'", [id]);

  test("an event type the server neither observes nor was told is self-reported is refused at creation, naming the field", async () => {
    await setup();
    const anything = await adminPost("/api/messenger/admin/missions", {
      mission_key: "free-300",
      title: "Anything",
      event_type: "anything.at.all",
      target: 3,
      reward: { points: 300 },
      daily_cap: 10,
      per_minute_cap: 10,
    });
    expect([anything.status, anything.body.error, anything.body.details[0].field]).toEqual([400, "invalid_payload", "body.event_type"]);
    expect(anything.body.message).toContain("spin_wheel.play");
    expect(anything.body.message).toContain('progress_source: "self_reported"');
    const selfSpin = await adminPost("/api/messenger/admin/missions", { ...mission, mission_key: "spin-self", event_type: "spin_wheel.play" });
    expect([selfSpin.status, selfSpin.body.details[0].field]).toEqual([400, "body.progress_source"]);
    // Self-reported missions keep tighter limits, and never pay salutes.
    for (const [patch, field] of [
      [{ daily_cap: 21 }, "body.daily_cap"],
      [{ per_minute_cap: 6 }, "body.per_minute_cap"],
      [{ reward: { points: 1001 } }, "body.reward.points"],
      [{ reward: { points: 10, salutes: "1" } }, "body.reward.salutes"],
    ] as const) {
      const res = await adminPost("/api/messenger/admin/missions", { ...mission, ...patch });
      expect([field, res.status, res.body.details?.[0]?.field]).toEqual([field, 400, field]);
    }
    expect(await h.ctx.store.get("SELECT COUNT(*) AS n FROM messenger_missions")).toEqual({ n: 0 });
    const ok = await adminPost("/api/messenger/admin/missions", mission);
    expect([ok.status, ok.body.mission.progress_source]).toEqual([200, "self_reported"]);
    const server = await adminPost("/api/messenger/admin/missions", {
      ...mission,
      mission_key: "spin-3",
      event_type: "spin_wheel.play",
      progress_source: undefined,
    });
    expect([server.status, server.body.mission.progress_source]).toEqual([200, "server"]);
  });

  test("a server mission's progress is the server's count of its own records: a reported number is not used", async () => {
    await setup();
    const spin3 = {
      mission_key: "spin-3",
      title: "Spin three times",
      event_type: "spin_wheel.play",
      target: 3,
      reward: { points: 100 },
      daily_cap: 10,
      per_minute_cap: 10,
    };
    expect((await adminPost("/api/messenger/admin/missions", spin3)).body.mission).toMatchObject({ progress_source: "server" });
    const P = 21;
    await credit(P, { freeSpins: 10 });
    await as(P, "/api/messenger/games/spin-wheel/status");
    await spin(P); // before enrolling: does not count
    await as(P, "/api/messenger/missions/enroll", { mission_key: "spin-3" });
    const progress = (id: string, body: Record<string, unknown> = {}) =>
      as(P, "/api/messenger/missions/progress", { mission_key: "spin-3", client_event_id: id, ...body });
    const claimed = await progress("evt-00001", { progress: 4 });
    expect(claimed.status).toBe(200);
    expect(claimed.body).toMatchObject({
      accepted: false,
      reason: "not_observed",
      progress: 0,
      observed: 0,
      completed: false,
      reward_paid: null,
      progress_source: "server",
    });
    expect(await rewardRows(P)).toEqual({ n: 0, p: null });

    await spin(P);
    await spin(P);
    const two = await progress("evt-00002", { progress: 99 });
    expect(two.body).toMatchObject({ accepted: true, progress: 2, observed: 2, completed: false, reward_paid: null });
    const list = await as(P, "/api/messenger/missions/list");
    expect(list.body.enrollments[0]).toMatchObject({ mission_key: "spin-3", progress: 2, observed: 2 });
    await spin(P);
    await spin(P); // past the target: progress stops at it
    const done = await progress("evt-00003");
    expect(done.body).toMatchObject({ accepted: true, progress: 3, observed: 4, completed: true, reward_paid: { points: 100, missiles: 0, free_spins: 0 } });
    expect((await progress("evt-00004")).body).toMatchObject({ accepted: false, reason: "already_completed" });
    expect(await rewardRows(P)).toEqual({ n: 1, p: 100 });
    // Nothing counts after completion.
    await spin(P);
    const row = await h.ctx.store.get("SELECT progress, observed FROM messenger_mission_enrollments WHERE telegram_user_id = ?", [P]);
    expect(row).toEqual({ progress: 3, observed: 4 });
  });

  test("a server mission moves to its count within the daily cap, the rest on a later day", async () => {
    await setup();
    await adminPost("/api/messenger/admin/missions", {
      mission_key: "buy-5",
      title: "Buy 5 items",
      event_type: "items.purchase",
      target: 5,
      reward: { points: 1 },
      daily_cap: 2,
      per_minute_cap: 10,
    });
    const P = 22;
    await as(P, "/api/messenger/missions/enroll", { mission_key: "buy-5" });
    await credit(P, { points: 1000 });
    // One unit per item bought.
    expect((await as(P, "/api/messenger/games/items/purchase", { request_id: rid(), item_key: "missile", quantity: 4 })).status).toBe(200);
    const progress = (id: string) => as(P, "/api/messenger/missions/progress", { mission_key: "buy-5", client_event_id: id });
    expect((await progress("evt-buy-0001")).body).toMatchObject({ accepted: true, progress: 2, observed: 4 });
    expect((await progress("evt-buy-0002")).body).toMatchObject({ accepted: false, reason: "daily_cap_reached", progress: 2 });
    h.clock.advanceSeconds(86_400);
    expect((await progress("evt-buy-0003")).body).toMatchObject({ accepted: true, progress: 4 });
    expect((await progress("evt-buy-0004")).body).toMatchObject({ accepted: false, reason: "not_observed", progress: 4, observed: 4 });
  });

  test("grid starts, reveals, promo claims are counted by the server", async () => {
    await setup();
    for (const [key, type] of [
      ["start-1", "recon_grid.start"],
      ["reveal-1", "recon_grid.reveal"],
      ["promo-1", "promo.claim"],
    ])
      await adminPost("/api/messenger/admin/missions", {
        mission_key: key,
        title: key,
        event_type: type,
        target: 1,
        reward: { points: 1 },
        daily_cap: 5,
        per_minute_cap: 5,
      });
    await adminPost("/api/messenger/admin/games/promos", { code: "COUNTED", reward: { missiles: 1 }, max_claims: 5 });
    const P = 23;
    for (const key of ["start-1", "reveal-1", "promo-1"]) await as(P, "/api/messenger/missions/enroll", { mission_key: key });
    await as(P, "/api/messenger/games/recon-grid/status");
    const grid = (await as(P, "/api/messenger/games/recon-grid/start")).body.grid;
    await as(P, "/api/messenger/games/promos/claim", { request_id: rid(), code: "COUNTED" });
    await as(P, "/api/messenger/games/recon-grid/reveal", { request_id: rid(), grid_id: grid.grid_id, cell: 0 });
    const catalog = await as(P, "/api/messenger/missions/catalog");
    expect(catalog.body.missions.map((m: any) => [m.mission_key, m.progress_source, m.enrollment.observed])).toEqual([
      ["promo-1", "server", 1],
      ["reveal-1", "server", 1],
      ["start-1", "server", 1],
    ]);
  });

  test("self-reported: enroll is idempotent; progress replays, refuses non-monotonic, rate and daily caps with a reason; completion pays once", async () => {
    await setup();
    expect((await adminPost("/api/messenger/admin/missions", mission)).status).toBe(200);
    const P = 9;
    const catalog = await as(P, "/api/messenger/missions/catalog");
    expect(catalog.body.missions).toHaveLength(1);
    expect(catalog.body.missions[0]).toMatchObject({ progress_source: "self_reported", enrollment: null });
    const notYet = await as(P, "/api/messenger/missions/progress", { mission_key: "quiz-5", client_event_id: "evt-00001", progress: 1 });
    expect([notYet.status, notYet.body.error]).toEqual([409, "mission_not_enrolled"]);
    const e1 = await as(P, "/api/messenger/missions/enroll", { mission_key: "quiz-5" });
    const e2 = await as(P, "/api/messenger/missions/enroll", { mission_key: "quiz-5" });
    expect([e1.body.already_enrolled, e2.body.already_enrolled, e1.body.enrollment.observed]).toEqual([false, true, null]);
    expect(e2.body.enrollment).toEqual(e1.body.enrollment);
    const missing = await as(P, "/api/messenger/missions/progress", { mission_key: "quiz-5", client_event_id: "evt-00000" });
    expect([missing.status, missing.body.error, missing.body.details[0].field]).toEqual([400, "invalid_payload", "body.progress"]);

    const progress = (id: string, value: number) => as(P, "/api/messenger/missions/progress", { mission_key: "quiz-5", client_event_id: id, progress: value });
    const a = await progress("evt-00001", 2);
    expect(a.body).toMatchObject({ accepted: true, progress: 2, completed: false, replayed: false, progress_source: "self_reported", observed: null });
    expect((await progress("evt-00001", 2)).body).toMatchObject({ accepted: true, progress: 2, replayed: true });
    // The same client_event_id with another payload is refused, as a reused request id is everywhere in the API.
    const reused = await progress("evt-00001", 5);
    expect([reused.status, reused.body.error]).toEqual([422, "request_id_reused"]);
    expect((await progress("evt-00002", 2)).body).toMatchObject({ accepted: false, reason: "not_monotonic", progress: 2 });
    expect((await progress("evt-00003", 3)).body).toMatchObject({ accepted: true, progress: 3 });
    expect((await progress("evt-00004", 4)).body).toMatchObject({ accepted: false, reason: "rate_limited" });
    h.clock.advanceSeconds(61);
    expect((await progress("evt-00005", 5)).body).toMatchObject({ accepted: false, reason: "daily_cap_reached", progress: 3 });
    expect((await progress("evt-00006", 4)).body).toMatchObject({ accepted: true, progress: 4 });
    h.clock.advanceSeconds(86_400);
    const done = await progress("evt-00007", 9);
    expect(done.body).toMatchObject({ accepted: true, progress: 5, completed: true, reward_paid: { points: 100, missiles: 2, free_spins: 0 } });
    expect((await progress("evt-00008", 6)).body).toMatchObject({ accepted: false, reason: "already_completed" });
    expect(await rewardRows(P)).toEqual({ n: 1, p: 100 });
    const history = await as(P, "/api/messenger/missions/history", { mission_key: "quiz-5", limit: 3 });
    expect(history.body.events.map((e: any) => [e.client_event_id, e.accepted, e.reason])).toEqual([
      ["evt-00008", false, "already_completed"],
      ["evt-00007", true, null],
      ["evt-00006", true, null],
    ]);
    // A list like every other (spec, "Common conventions"): count, the query it applied, and pagination by offset.
    expect(history.body).toMatchObject({
      count: 3,
      query: { limit: 3, offset: 0, cursor: null, mission_key: "quiz-5" },
      pagination: { has_more: true, next_offset: 3, next_cursor: null },
    });
    const rest = await as(P, "/api/messenger/missions/history", { mission_key: "quiz-5", limit: 3, offset: history.body.pagination.next_offset });
    const all = await as(P, "/api/messenger/missions/history", { mission_key: "quiz-5", limit: 200 });
    expect([...history.body.events, ...rest.body.events]).toEqual(all.body.events.slice(0, 3 + rest.body.count));
    expect(all.body).toMatchObject({ count: 8, pagination: { has_more: false, next_offset: null, next_cursor: null } });
    expect(rest.body.query).toEqual({ limit: 3, offset: 3, cursor: null, mission_key: "quiz-5" });
    for (const bad of [{ offset: -1 }, { offset: 1.5 }, { offset: 100_001 }, { limit: 0 }, { cursor: "x" }]) {
      expect((await as(P, "/api/messenger/missions/history", bad)).status).toBe(400);
    }
    const list = await as(P, "/api/messenger/missions/list");
    expect(list.body.enrollments).toEqual([expect.objectContaining({ mission_key: "quiz-5", progress: 5, completed: true, title: "Answer five quizzes" })]);
    expect(list.body).toMatchObject({
      count: 1,
      query: { limit: 500, offset: 0, cursor: null },
      pagination: { has_more: false, next_offset: null, next_cursor: null },
    });
    const skipped = await as(P, "/api/messenger/missions/list", { limit: 1, offset: 1 });
    expect(skipped.body).toMatchObject({ enrollments: [], count: 0, query: { limit: 1, offset: 1, cursor: null }, pagination: { has_more: false } });
    expect((await as(P, "/api/messenger/missions/list", { limit: 501 })).status).toBe(400);
    expect((await as(P, "/api/messenger/missions/enroll", { mission_key: "nope" })).body.error).toBe("mission_not_found");
  });

  test("admin routes need the admin token", async () => {
    await setup();
    const res = await h.json("/api/messenger/admin/missions", jsonInit("POST", mission));
    expect(res.status).toBe(403);
  });
});
