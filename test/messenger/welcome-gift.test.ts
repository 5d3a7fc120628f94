// The welcome gift (docs/messenger.md "Economy"): with the default catalog a newcomer holds nothing but the daily
// free spin, so the gift is what puts the recon grid within reach on day one. Once per player, in their first
// days, one ledger row; opening it again (in turn or at once) answers the first answer and credits nothing more.
import { afterEach, describe, expect, test } from "bun:test";
import { WELCOME_GIFT } from "../../src/messenger/catalog";
import type { TestApp } from "../support/app";
import { initDataFor, openMessengerApp, tmaPost } from "./support";

let h: TestApp;
afterEach(async () => {
  await h?.close();
});

const open = (player: number, body: Record<string, unknown> = {}) =>
  h.json("/api/messenger/games/welcome-gift/open", tmaPost(initDataFor(h, { id: player }), body));
const catalog = (player: number) => h.json("/api/messenger/games/catalog", tmaPost(initDataFor(h, { id: player })));
const ledgerRows = (player: number) =>
  h.ctx.store.all<{ action: string; missile_delta: number; points_delta: number; missile_after: number; points_after: number }>(
    "SELECT action, missile_delta, points_delta, missile_after, points_after FROM messenger_ledger WHERE telegram_user_id = ? ORDER BY id",
    [player],
  );

describe("the welcome gift", () => {
  test("the default gift is 5 missiles and 50 points, open for the first 7 days", () => {
    expect(WELCOME_GIFT).toEqual({ reward: { free_spins: 0, missiles: 5, points: 50 }, open_for_seconds: 604_800 });
  });

  test("a newcomer sees it in the catalog, opens it once, and then reaches the grid: a reveal paid with its missile", async () => {
    h = await openMessengerApp();
    const before = await catalog(501);
    expect(before.status).toBe(200);
    const created = Date.parse(before.body.welcome_gift.open_until) - 7 * 86_400_000;
    expect(before.body.welcome_gift).toEqual({
      reward: { free_spins: 0, missiles: 5, points: 50 },
      available: true,
      open_until: new Date(created + 7 * 86_400_000).toISOString(),
    });
    expect(created).toBe(h.clock.now().getTime());
    const opened = await open(501);
    expect(opened.status).toBe(200);
    expect(opened.body).toMatchObject({
      welcome_gift: { reward: { free_spins: 0, missiles: 5, points: 50 }, opened_at: h.clock.now().toISOString() },
      replayed: false,
      balances: { free_spin_balance: 0, missile_balance: 5, points_balance: 50 },
    });
    expect(await ledgerRows(501)).toEqual([{ action: "welcome_gift.open", missile_delta: 5, points_delta: 50, missile_after: 5, points_after: 50 }]);
    const after = await catalog(501);
    expect(after.body.welcome_gift.available).toBe(false);
    expect(after.body.balances).toEqual({ free_spin_balance: 0, missile_balance: 5, points_balance: 50 });
    // Its points count as earned (the leaderboard's figure), like a promo's.
    expect((await h.ctx.store.get<{ e: number }>("SELECT points_earned AS e FROM messenger_players WHERE telegram_user_id = 501"))!.e).toBe(50);

    // The grid on day one: start, reveal with a missile from the gift.
    const post = (path: string, body: unknown) => h.json(`/api/messenger/games/recon-grid/${path}`, tmaPost(initDataFor(h, { id: 501 }), body));
    expect((await post("status", {})).status).toBe(200);
    const started = await post("start", {});
    expect(started.status).toBe(200);
    const reveal = await post("reveal", { request_id: "r-1", grid_id: started.body.grid.grid_id, cell: 0 });
    expect(reveal.status).toBe(200);
    expect(reveal.body.balances.missile_balance).toBe(4 + reveal.body.reward.missiles);
  });

  test("opened again, in turn or five at once: the first answer replayed, one ledger row, credited once", async () => {
    h = await openMessengerApp();
    const first = await open(502);
    const again = await open(502);
    expect(again.status).toBe(200);
    expect(again.body).toMatchObject({ replayed: true, ledger_entry_id: first.body.ledger_entry_id, welcome_gift: first.body.welcome_gift });
    const racing = await Promise.all(Array.from({ length: 5 }, () => open(503)));
    expect(racing.map((r) => r.status)).toEqual([200, 200, 200, 200, 200]);
    expect(racing.filter((r) => r.body.replayed === false)).toHaveLength(1);
    for (const player of [502, 503]) {
      const rows = await ledgerRows(player);
      expect(rows).toHaveLength(1);
      expect(rows[0]).toMatchObject({ missile_after: 5, points_after: 50 });
    }
  });

  test("after the first 7 days it is gone: not offered, and opening it is refused with when it closed", async () => {
    h = await openMessengerApp();
    expect((await catalog(504)).status).toBe(200); // first contact: the player is made now
    h.clock.advanceSeconds(7 * 86_400 - 1);
    expect((await catalog(504)).body.welcome_gift.available).toBe(true);
    h.clock.advanceSeconds(1);
    const late = await catalog(504);
    expect(late.body.welcome_gift.available).toBe(false);
    const refused = await open(504);
    expect(refused.status).toBe(409);
    expect(refused.body).toMatchObject({ error: "game_state_conflict", details: { open_until: late.body.welcome_gift.open_until } });
    expect(await ledgerRows(504)).toEqual([]);
    expect(late.body.balances).toEqual({ free_spin_balance: 0, missile_balance: 0, points_balance: 0 });
  });

  test("no init data is 401; a field the route does not take is 400; a client cannot take the gift's request id", async () => {
    h = await openMessengerApp();
    const anonymous = await h.json("/api/messenger/games/welcome-gift/open", { method: "POST", headers: { "content-type": "application/json" }, body: "{}" });
    expect(anonymous.status).toBe(401);
    expect(anonymous.body.error).toBe("init_data_missing");
    expect((await open(505, { request_id: "x" })).status).toBe(400);
    // The gift's ledger request id has a space: the request id pattern of every spending route refuses it.
    const spoof = await h.json(
      "/api/messenger/games/items/purchase",
      tmaPost(initDataFor(h, { id: 505 }), { request_id: "welcome gift", item_key: "missile", quantity: 1 }),
    );
    expect(spoof.status).toBe(400);
    expect((await open(505)).body.replayed).toBe(false);
  });
});
