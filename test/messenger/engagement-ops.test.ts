// Engagement previews and GET /api/messenger/ops/health (issue 18).
import { afterEach, describe, expect, test } from "bun:test";
import { applyAction } from "../../src/messenger/ledger";
import { openTestApp, jsonInit, type TestApp } from "../support/app";
import { createAdminToken } from "../support/partner";
import { openMessengerApp, initDataFor, startFakeBotApi, textUpdate, tmaPost, webhookPost } from "./support";

let h: TestApp;
afterEach(async () => {
  await h?.close();
});
const earn = (id: number, points: number) =>
  applyAction(h.ctx, { telegramUserId: id, requestId: `earn-${id}-${points}`, action: "test.credit", inputs: {}, gameKey: null }, async () => ({
    deltas: { freeSpins: 0, missiles: 0, points },
    earnedPoints: points,
    result: {},
  }));

describe("engagement previews", () => {
  test("leaderboard: top players by points earned and the caller's rank", async () => {
    h = await openMessengerApp();
    await earn(1, 50);
    await earn(2, 300);
    await earn(3, 120);
    const init = initDataFor(h, { id: 3, first_name: "Cy" });
    const res = await h.json(`/api/messenger/engagement/leaderboard-preview?limit=2&init_data=${encodeURIComponent(init)}`);
    expect(res.status).toBe(200);
    expect(res.body.leaders.map((l: any) => [l.rank, l.points_earned, l.is_you])).toEqual([
      [1, 300, false],
      [2, 120, true],
    ]);
    expect(res.body.you).toEqual({ rank: 2, points_earned: 120 });
    // A "latest N" list: count, the query applied, and whether more players are ranked (no next page).
    expect(res.body).toMatchObject({
      count: 2,
      query: { limit: 2, offset: 0, cursor: null },
      pagination: { has_more: true, next_offset: null, next_cursor: null },
    });
    const all = await h.json(`/api/messenger/engagement/leaderboard-preview?limit=3&init_data=${encodeURIComponent(init)}`);
    expect(all.body).toMatchObject({ count: 3, pagination: { has_more: false } });
    const bad = await h.json(`/api/messenger/engagement/leaderboard-preview?limit=51&init_data=${encodeURIComponent(init)}`);
    expect([bad.status, bad.body.error]).toEqual([400, "invalid_query"]);
  });

  test("activity preview: totals and recent ledger rows, read-only", async () => {
    h = await openMessengerApp();
    const init = initDataFor(h, { id: 8 });
    await h.json("/api/messenger/games/spin-wheel/play", tmaPost(init, { request_id: "spin-00001" }));
    const res = await h.json("/api/messenger/engagement/activity-preview?limit=5", { headers: { authorization: `tma ${init}` } });
    expect(res.status).toBe(200);
    expect(res.body.totals).toMatchObject({ spins: 1, grids: 0 });
    expect(res.body.recent).toHaveLength(1);
    expect(res.body.recent[0].action).toBe("spin_wheel.play");
    expect(res.body).toMatchObject({
      count: 1,
      query: { limit: 5, offset: 0, cursor: null },
      pagination: { has_more: false, next_offset: null, next_cursor: null },
    });
    const rows = await h.ctx.store.get("SELECT COUNT(*) AS n FROM messenger_ledger");
    await h.json("/api/messenger/engagement/activity-preview", { headers: { authorization: `tma ${init}` } });
    expect(await h.ctx.store.get("SELECT COUNT(*) AS n FROM messenger_ledger")).toEqual(rows);
  });

  test("a newcomer's previews write nothing: no player row is made, zeros are answered", async () => {
    h = await openMessengerApp();
    await earn(1, 40);
    const players = () => h.ctx.store.all("SELECT telegram_user_id, username, last_seen_at FROM messenger_players ORDER BY telegram_user_id");
    const before = await players();
    const init = initDataFor(h, { id: 14001, username: "newcomer" });
    const activity = await h.json("/api/messenger/engagement/activity-preview", { headers: { authorization: `tma ${init}` } });
    expect(activity.status).toBe(200);
    expect(activity.body).toMatchObject({
      totals: { spins: 0, grids: 0, missions_completed: 0, promos_claimed: 0, points_earned: 0 },
      recent: [],
      balances: { free_spin_balance: 0, missile_balance: 0, points_balance: 0 },
    });
    const board = await h.json(`/api/messenger/engagement/leaderboard-preview?init_data=${encodeURIComponent(init)}`);
    expect(board.status).toBe(200);
    expect(board.body.you).toEqual({ rank: null, points_earned: 0 });
    expect(board.body.leaders.map((l: any) => l.is_you)).toEqual([false]);
    // A known player's profile is not refreshed by a preview either (a changed username, a day later).
    h.clock.advanceSeconds(86_400);
    const known = initDataFor(h, { id: 1, username: "renamed" });
    expect((await h.json("/api/messenger/engagement/activity-preview", { headers: { authorization: `tma ${known}` } })).status).toBe(200);
    expect(await players()).toEqual(before);
    // Any other mini-app route makes the player as before.
    expect((await h.json("/api/messenger/games/spin-wheel/status", tmaPost(init, {}))).status).toBe(200);
    expect((await players()).map((p: any) => p.telegram_user_id)).toEqual([1, 14001]);
  });
});

describe("GET /api/messenger/ops/health", () => {
  test("reports updates, replays, init-data failures, plays, the outbox backlog and Bot API errors", async () => {
    const api = startFakeBotApi();
    try {
      h = await openMessengerApp({ env: { MESSENGER_BOT_API_BASE: api.url } });
      const admin = await createAdminToken(h);
      const u = textUpdate("/help");
      await h.json("/api/messenger/webhook", webhookPost(u));
      await h.json("/api/messenger/webhook", webhookPost(u));
      await h.json("/api/messenger/webhook", webhookPost(textUpdate("/balance")));
      await h.json("/api/messenger/init/verify", tmaPost("auth_date=1&user=%7B%22id%22%3A1%7D&hash=" + "0".repeat(64)));
      await h.json("/api/messenger/games/spin-wheel/play", tmaPost(initDataFor(h, { id: 5 }), { request_id: "spin-00002" }));
      api.answer({ status: 500, body: { ok: false, description: "Internal" } });
      await h.ctx.jobs.runNow("messenger-bot-outbox");
      const res = await h.json("/api/messenger/ops/health?hours=1&limit=5", { headers: { authorization: `Bearer ${admin}` } });
      expect(res.status).toBe(200);
      expect(res.body.updates).toEqual({ received: 2, replays_suppressed: 1, by_kind: { message: 2 }, ignored: 0, ignored_by_reason: {} });
      expect(res.body.init_data_failures).toEqual({ total: 1, by_reason: { init_data_signature_invalid: 1 } });
      expect(res.body.plays).toEqual({ total: 1, by_game: { spin_wheel: 1 } });
      expect(res.body.bot_api).toMatchObject({ messages_sent: 1, errors: 1, errors_by_status: { "500": 1 } });
      expect(res.body.bot_api.recent_errors[0]).toMatchObject({ status: "pending", attempts: 1, last_error: "500 Internal" });
      expect(res.body.outbox).toMatchObject({ pending: 1, dead: 0 });
      const noToken = await h.json("/api/messenger/ops/health");
      expect(noToken.status).toBe(403);
      const badHours = await h.json("/api/messenger/ops/health?hours=0", { headers: { authorization: `Bearer ${admin}` } });
      expect(badHours.body.error).toBe("invalid_query");
    } finally {
      api.stop();
    }
  });

  test("plays are counted once each, after their commits: concurrent plays, their replays and refused plays", async () => {
    h = await openMessengerApp();
    const admin = await createAdminToken(h);
    const players = Array.from({ length: 12 }, (_, i) => 700 + i);
    const play = (id: number, requestId: string) => h.json("/api/messenger/games/spin-wheel/play", tmaPost(initDataFor(h, { id }), { request_id: requestId }));
    // Every player's daily free spin at once (on PostgreSQL several share a commit), each request sent twice.
    const first = await Promise.all(players.flatMap((id) => [play(id, `count-${id}`), play(id, `count-${id}`)]));
    expect(first.map((r) => r.status)).toEqual(first.map(() => 200));
    expect(first.filter((r) => r.body.replayed).length).toBe(players.length);
    // A second play each: no spin left (a segment may have paid spins: taken away), refused, not counted.
    await h.ctx.store.run("UPDATE messenger_players SET free_spin_balance = 0");
    const refused = await Promise.all(players.map((id) => play(id, `again-${id}`)));
    expect(refused.map((r) => r.body.error)).toEqual(players.map(() => "game_cooldown"));
    const res = await h.json("/api/messenger/ops/health?hours=1", { headers: { authorization: `Bearer ${admin}` } });
    expect(res.body.plays).toEqual({ total: players.length, by_game: { spin_wheel: players.length } });
    // All written: the stored rows say the same without this instance's help.
    const rows = await h.ctx.store.all<{ count: number }>("SELECT count FROM messenger_counters WHERE metric = 'plays'");
    expect(rows.reduce((a, r) => a + Number(r.count), 0)).toBe(players.length);
  });

  test("answers 503 messenger_not_configured without a bot token", async () => {
    h = await openTestApp({ env: { MESSENGER_WEBHOOK_SECRET: "hook-secret-0123456789" } });
    const admin = await createAdminToken(h);
    const res = await h.json("/api/messenger/ops/health", { headers: { authorization: `Bearer ${admin}` } });
    expect([res.status, res.body.error]).toEqual([503, "messenger_not_configured"]);
    // A caller without its credential learns nothing of the configuration: the webhook without the secret and a
    // player route without init data are 401 as on a configured service; with them, 503.
    const hook = await h.json("/api/messenger/webhook", jsonInit("POST", { update_id: 1 }));
    expect([hook.status, hook.body.error]).toEqual([401, "webhook_secret_invalid"]);
    const noInit = await h.json("/api/messenger/init/verify", jsonInit("POST", {}));
    expect([noInit.status, noInit.body.error]).toEqual([401, "init_data_missing"]);
    const withInit = await h.json("/api/messenger/init/verify", jsonInit("POST", {}, { authorization: "tma user=%7B%22id%22%3A1%7D&auth_date=1&hash=00" }));
    expect([withInit.status, withInit.body.error]).toEqual([503, "messenger_not_configured"]);
    const secret = { "x-telegram-bot-api-secret-token": "hook-secret-0123456789" };
    const withSecret = await h.json("/api/messenger/webhook", jsonInit("POST", { update_id: 1 }, secret));
    expect([withSecret.status, withSecret.body.error]).toEqual([503, "messenger_not_configured"]);
    const promos = await h.json("/api/messenger/admin/games/promos", { headers: { authorization: `Bearer ${admin}` } });
    expect([promos.status, promos.body.error]).toEqual([503, "messenger_not_configured"]);
    expect((await h.json("/api/messenger/admin/missions")).status).toBe(403); // the admin check still comes first
  });
});

describe("messenger-prune", () => {
  test("deletes old updates, finished bot replies and counters; keeps recent rows and pending replies", async () => {
    const api = startFakeBotApi();
    try {
      h = await openMessengerApp({ env: { MESSENGER_BOT_API_BASE: api.url } });
      const old = textUpdate("/help");
      await h.json("/api/messenger/webhook", webhookPost(old));
      await h.ctx.jobs.runNow("messenger-bot-outbox"); // sent
      api.answer({ status: 500, body: { ok: false } });
      await h.json("/api/messenger/webhook", webhookPost(textUpdate("/balance")));
      await h.ctx.jobs.runNow("messenger-bot-outbox"); // still pending after a 500
      h.clock.advanceSeconds(31 * 86_400);
      const recent = textUpdate("/help");
      await h.json("/api/messenger/webhook", webhookPost(recent));
      const run = await h.ctx.jobs.runNow("messenger-prune");
      expect(run.ok).toBe(true);
      const db = h.ctx.store;
      expect(await db.all("SELECT update_id FROM messenger_updates ORDER BY update_id")).toEqual([{ update_id: recent.update_id }]);
      expect(await db.all("SELECT status FROM messenger_bot_outbox ORDER BY id")).toEqual([{ status: "pending" }, { status: "pending" }]);
      expect(
        ((await db.get("SELECT MIN(hour) AS h FROM messenger_counters")) as { h: string }).h >=
          new Date(h.clock.now().getTime() - 90 * 86_400_000).toISOString(),
      ).toBe(true);
    } finally {
      api.stop();
    }
  });
});
