// The operators' games analytics, player views and manual grant (issue 19): real plays through the mini-app
// routes, then every figure checked exactly against what those plays answered.
import { afterEach, describe, expect, test } from "bun:test";
import { parse } from "csv-parse/sync";
import { ITEMS } from "../../src/messenger/catalog";
import { jsonInit, type TestApp } from "../support/app";
import { createAdminToken } from "../support/partner";
import { openMessengerApp, initDataFor, tmaPost } from "./support";

let h: TestApp;
let admin: string;
afterEach(async () => {
  await h?.close();
});

const setup = async () => {
  h = await openMessengerApp();
  admin = await createAdminToken(h);
};
const bearer = () => ({ authorization: `Bearer ${admin}` });
const get = (path: string) => h.json(path, { headers: bearer() });
const adminPost = (path: string, body: unknown) => h.json(path, jsonInit("POST", body, bearer()));
const as = (id: number, path: string, body: Record<string, unknown> = {}) => h.json(path, tmaPost(initDataFor(h, { id }), body));
let seq = 0;
const rid = () => `analytics-req-${++seq}`;

interface Amounts {
  free_spins: number;
  missiles: number;
  points: number;
}
const zero = (): Amounts => ({ free_spins: 0, missiles: 0, points: 0 });
const value = (a: Amounts) => a.points + a.free_spins * ITEMS.spin_play.price_points + a.missiles * ITEMS.missile.price_points;

/** Expected figures, computed from the play answers by the documented definitions. */
class Expect {
  plays = 0;
  payout = zero();
  cost = zero();
  players = new Set<number>();
  wheel(id: number, spin: { reward: Amounts; paid_with: string }) {
    this.plays++;
    this.players.add(id);
    const net = spin.reward.free_spins - (spin.paid_with === "free_spin_balance" ? 1 : 0);
    this.payout.free_spins += Math.max(net, 0);
    this.cost.free_spins += Math.max(-net, 0);
    this.payout.missiles += spin.reward.missiles;
    this.payout.points += spin.reward.points;
  }
  reveal(id: number, reward: Amounts) {
    this.plays++;
    this.players.add(id);
    this.cost.missiles += 1;
    this.payout.free_spins += reward.free_spins;
    this.payout.missiles += reward.missiles;
    this.payout.points += reward.points;
  }
  rtp() {
    return value(this.cost) > 0 ? Math.round((value(this.payout) / value(this.cost)) * 10_000) / 100 : null;
  }
}

/** Player 1 and 2 claim a points promo, buy spins and spin; player 3 gets missiles granted and reveals cells. */
async function playSome() {
  const wheel = new Expect();
  const grid = new Expect();
  const created = await adminPost("/api/messenger/admin/games/promos", { code: "STARTER", reward: { points: 400 }, max_claims: 10 });
  expect(created.status).toBe(200);
  for (const id of [1, 2]) {
    expect((await as(id, "/api/messenger/games/promos/claim", { request_id: rid(), code: "STARTER" })).status).toBe(200);
    expect((await as(id, "/api/messenger/games/items/purchase", { request_id: rid(), item_key: "spin_play", quantity: 3 })).status).toBe(200);
    for (let i = 0; i < 4; i++) {
      const play = await as(id, "/api/messenger/games/spin-wheel/play", { request_id: rid() });
      expect(play.status).toBe(200);
      wheel.wheel(id, play.body.spin);
    }
  }
  const granted = await adminPost("/api/messenger/admin/games/recon-grid/manual-grant", {
    telegram_user_id: 3,
    missiles: 6,
    reason: "support ticket 12",
    request_id: rid(),
  });
  // Player 3 does not exist yet: grants go to known players only.
  expect([granted.status, granted.body.error]).toEqual([404, "player_not_found"]);
  expect((await as(3, "/api/messenger/games/recon-grid/status")).status).toBe(200);
  const ok = await adminPost("/api/messenger/admin/games/recon-grid/manual-grant", {
    telegram_user_id: 3,
    missiles: 6,
    reason: "support ticket 12",
    request_id: rid(),
  });
  expect(ok.status).toBe(200);
  const start = await as(3, "/api/messenger/games/recon-grid/start", {});
  expect(start.status).toBe(200);
  for (const cell of [0, 1, 2, 3, 4]) {
    const r = await as(3, "/api/messenger/games/recon-grid/reveal", { request_id: rid(), grid_id: start.body.grid.grid_id, cell });
    expect(r.status).toBe(200);
    grid.reveal(3, r.body.reward);
  }
  return { wheel, grid };
}

describe("games overview and export", () => {
  test("figures per game and in total equal what the plays answered; every day of the window is in the series", async () => {
    await setup();
    const { wheel, grid } = await playSome();
    const res = await get("/api/messenger/admin/games/overview?days=7");
    expect(res.status).toBe(200);
    const byKey = Object.fromEntries(res.body.games.map((g: any) => [g.game_key, g]));
    for (const [key, e] of [
      ["spin_wheel", wheel],
      ["recon_grid", grid],
    ] as const) {
      const g = byKey[key];
      expect({ plays: g.plays, players: g.players, payout: g.payout, cost: g.cost, rtp: g.rtp_percent }).toEqual({
        plays: e.plays,
        players: e.players.size,
        payout: e.payout,
        cost: e.cost,
        rtp: e.rtp(),
      });
      expect([g.payout_points_value, g.cost_points_value]).toEqual([value(e.payout), value(e.cost)]);
      expect(g.series).toHaveLength(7);
      const today = g.series[6];
      expect([today.day, today.plays, today.players]).toEqual([h.clock.now().toISOString().slice(0, 10), e.plays, e.players.size]);
    }
    expect(byKey.spin_wheel.purchases).toEqual({ entries: 2, points_spent: 2 * 3 * ITEMS.spin_play.price_points, free_spins_bought: 6, missiles_bought: 0 });
    expect(byKey.recon_grid.manual_grants).toEqual({ entries: 1, free_spins: 0, missiles: 6, points: 0 });
    expect(res.body.total.plays).toBe(wheel.plays + grid.plays);
    expect(res.body.total.players).toBe(3);
    expect(res.body.points_value).toEqual({ points: 1, free_spins: 50, missiles: 20 });

    const only = await get("/api/messenger/admin/games/overview?preset=today&games=recon_grid");
    expect(only.body.games.map((g: any) => g.game_key)).toEqual(["recon_grid"]);
    expect([only.body.window.label, only.body.total.plays, only.body.total.players]).toEqual(["today", grid.plays, 1]);

    // The next day: yesterday's players come from the closed-day cache, today's from the live rows.
    h.clock.advanceSeconds(86_400);
    const play = await as(1, "/api/messenger/games/spin-wheel/play", { request_id: rid() });
    expect(play.status).toBe(200);
    const next = await get("/api/messenger/admin/games/overview?days=2&games=spin_wheel");
    expect([next.body.total.plays, next.body.total.players]).toEqual([wheel.plays + 1, 2]);
    expect(next.body.total.series.map((p: any) => [p.plays, p.players])).toEqual([
      [wheel.plays, 2],
      [1, 1],
    ]);
    const yesterday = await get("/api/messenger/admin/games/overview?preset=yesterday");
    expect([yesterday.body.total.plays, yesterday.body.total.players]).toEqual([wheel.plays + grid.plays, 3]);
  });

  test("bad input: unknown game, days and preset together, days out of range", async () => {
    await setup();
    const unknown = await get("/api/messenger/admin/games/overview?games=spin_wheel,poker");
    expect([unknown.status, unknown.body.error, unknown.body.details]).toEqual([400, "invalid_query", [expect.objectContaining({ field: "query.games" })]]);
    expect(unknown.body.message).toContain("query.games");
    const both = await get("/api/messenger/admin/games/overview?days=7&preset=last_7d");
    expect([both.status, both.body.error]).toEqual([400, "invalid_query"]);
    expect((await get("/api/messenger/admin/games/overview?days=0")).status).toBe(400);
    expect((await get("/api/messenger/admin/games/overview?preset=forever")).status).toBe(400);
    const exp = await get("/api/messenger/admin/games/overview/export?format=xml");
    expect([exp.status, exp.body.error]).toEqual([400, "invalid_query"]);
  });

  test("the CSV export parses with csv-parse and equals its JSON twin row for row", async () => {
    await setup();
    await playSome();
    const json = await h.request("/api/messenger/admin/games/overview/export?format=json&days=3", { headers: bearer() });
    expect(json.status).toBe(200);
    expect(json.headers.get("content-disposition")).toMatch(/^attachment; filename="messenger-games-overview-\d{4}-\d{2}-\d{2}-\d{4}-\d{2}-\d{2}\.json"$/);
    const twin = (await json.json()) as { columns: string[]; rows: Array<Record<string, unknown>> };
    const csv = await h.request("/api/messenger/admin/games/overview/export?days=3", { headers: bearer() });
    expect(csv.status).toBe(200);
    expect(csv.headers.get("content-type")).toStartWith("text/csv");
    expect(csv.headers.get("content-disposition")).toMatch(/^attachment; filename=".+\.csv"$/);
    const records = parse(await csv.text(), { columns: true }) as Array<Record<string, string>>;
    // 3 window rows (2 games + total) and 3 days each.
    expect(records).toHaveLength(3 * 4);
    expect(Object.keys(records[0]!)).toEqual(twin.columns);
    expect(records).toEqual(twin.rows.map((r) => Object.fromEntries(twin.columns.map((c) => [c, r[c] === null ? "" : String(r[c])]))));
    const overview = await get("/api/messenger/admin/games/overview?days=3");
    const total = twin.rows.find((r) => r.row_type === "window" && r.game_key === "total")!;
    expect([total.plays, total.players, total.rtp_percent]).toEqual([overview.body.total.plays, overview.body.total.players, overview.body.total.rtp_percent]);
  });
});

describe("per-game routes and the rollout checklist", () => {
  test("spin-wheel counts segments per campaign; recon-grid counts grids and reveals", async () => {
    await setup();
    const { wheel, grid } = await playSome();
    const spin = await get("/api/messenger/admin/games/spin-wheel");
    expect(spin.status).toBe(200);
    expect([spin.body.game.plays, spin.body.game.rtp_percent]).toEqual([wheel.plays, wheel.rtp()]);
    const [campaign] = spin.body.wheel.campaigns;
    expect([campaign.campaign_key, campaign.spins, campaign.paid_with]).toEqual(["wheel-default", 8, { daily_free_spin: 2, free_spin_balance: 6 }]);
    expect(campaign.segments.reduce((n: number, s: any) => n + s.count, 0)).toBe(8);
    expect(campaign.segments.reduce((n: number, s: any) => n + s.expected_share, 0)).toBeCloseTo(1, 6);
    expect(campaign.gross_payout.points).toBe(wheel.payout.points);
    expect(spin.body.wheel.scan).toEqual({ table: "messenger_spins", rows_examined: 8, limit: 200_000, bounded: false });

    const rg = await get("/api/messenger/admin/games/recon-grid?preset=last_7d");
    expect(rg.status).toBe(200);
    expect([rg.body.game.plays, rg.body.game.cost, rg.body.game.payout]).toEqual([grid.plays, grid.cost, grid.payout]);
    expect(rg.body.grids).toMatchObject({ started: 1, active: rg.body.grids.active, reveals_in_these_grids: 5, average_reveals_per_grid: 5 });
    expect((await get("/api/messenger/admin/games/recon-grid?days=1&preset=today")).status).toBe(400);
  });

  test("the checklist names every check with status, figure, threshold and a fix when not passing", async () => {
    await setup();
    const played = await playSome();
    const refused = await as(1, "/api/messenger/games/spin-wheel/play", { request_id: rid() });
    expect([refused.status, refused.body.error]).toEqual([409, "game_cooldown"]);
    // The request log records a request after its response is sent: wait (bounded) until the refusal is written.
    const logged = async () => {
      await h.ctx.requestLog.flush();
      return (await h.ctx.store.get("SELECT 1 FROM request_log WHERE error_code = 'game_cooldown'")) !== null;
    };
    for (let i = 0; i < 200 && !(await logged()); i++) await Bun.sleep(5);
    const res = await get("/api/messenger/admin/games/rollout-checklist?days=1");
    expect(res.status).toBe(200);
    const names = res.body.checks.map((c: any) => `${c.name}${c.game_key ? `:${c.game_key}` : ""}`);
    expect(names).toEqual([
      "rtp_band:spin_wheel",
      "rtp_band:recon_grid",
      "players_in_window",
      "refusal_share",
      "init_data_failure_rate",
      "bot_api_error_rate",
      "bot_outbox_backlog",
      "bot_outbox_dead",
      "wheel_segment_drift:spin_wheel",
    ]);
    const by = Object.fromEntries(res.body.checks.map((c: any) => [`${c.name}${c.game_key ? `:${c.game_key}` : ""}`, c]));
    // Three players: below the warn threshold of 20.
    expect([by.players_in_window.status, by.players_in_window.figure]).toEqual(["fail", 3]);
    expect(by.players_in_window.fix).toBeString();
    // 1 refused of 16 play, reveal and purchase requests.
    expect([by.refusal_share.status, by.refusal_share.figure]).toEqual(["pass", 6.25]);
    expect([by.bot_outbox_dead.status, by.bot_outbox_dead.figure, by.bot_outbox_dead.fix]).toEqual(["pass", 0, null]);
    expect(by["wheel_segment_drift:spin_wheel"].status).toBe("warn"); // 8 spins: too few to judge
    // Messages count in words, the singular for one.
    expect(by["wheel_segment_drift:spin_wheel"].message).toMatch(/ over 8 spins \(GET /);
    expect(by["rtp_band:recon_grid"].message).toMatch(/^paid [\d,]+ points? of value for [\d,]+ spent over \d+ plays?$/);
    expect(by["rtp_band:recon_grid"].message).toEndWith(` over ${played.grid.plays} ${played.grid.plays === 1 ? "play" : "plays"}`);
    expect(by.init_data_failure_rate.message).toStartWith("0 init-data verifications failed against ");
    for (const c of res.body.checks) expect(c.message).not.toMatch(/\b1 (plays|points|spins|init-data verifications)\b/);
    expect(res.body.overall).toBe("fail");
    expect(res.body.counts.pass + res.body.counts.warn + res.body.counts.fail).toBe(9);
    const grid = await get("/api/messenger/admin/games/rollout-checklist?games=recon_grid");
    expect(grid.body.checks.some((c: any) => c.name === "wheel_segment_drift")).toBe(false);
    expect((await get("/api/messenger/admin/games/rollout-checklist?games=nope")).body.error).toBe("invalid_query");
  });
});

describe("players and the manual grant", () => {
  test("user-activity pages the ledger newest first; unknown player 404; bad id 400", async () => {
    await setup();
    await playSome();
    const first = await get("/api/messenger/admin/games/user-activity/1?limit=3");
    expect(first.status).toBe(200);
    expect(first.body.player).toMatchObject({ telegram_user_id: 1, linked: false, balances: first.body.ledger[0].balances_after });
    expect(first.body.activity).toMatchObject({ ledger_entries: 6, active_days: 1, spins: 4, promos_claimed: 1, entries_by_game: { spin_wheel: 5 } });
    expect(first.body.ledger.map((e: any) => e.action)).toEqual(["spin_wheel.play", "spin_wheel.play", "spin_wheel.play"]);
    expect(first.body.pagination.has_more).toBe(true);
    const next = await get(`/api/messenger/admin/games/user-activity/1?limit=3&cursor=${first.body.pagination.next_cursor}`);
    expect(next.body.ledger.map((e: any) => e.action)).toEqual(["spin_wheel.play", "items.purchase", "promo.claim"]);
    expect(next.body.pagination.has_more).toBe(false);
    const byOffset = await get("/api/messenger/admin/games/user-activity/1?limit=3&offset=3");
    expect(byOffset.body.ledger).toEqual(next.body.ledger);
    const badLimit = await get("/api/messenger/admin/games/user-activity/1?limit=1.5");
    expect([badLimit.status, badLimit.body.error, badLimit.body.details]).toEqual([400, "invalid_query", [expect.objectContaining({ field: "query.limit" })]]);
    const unknown = await get("/api/messenger/admin/games/user-activity/999");
    expect([unknown.status, unknown.body.error]).toEqual([404, "player_not_found"]);
    const bad = await get("/api/messenger/admin/games/user-activity/abc");
    expect([bad.status, bad.body.error, bad.body.details[0].field]).toEqual([400, "invalid_query", "path.telegram_user_id"]);
  });

  test("user-profiles lists players with balances, link state and activity, sorted and paginated", async () => {
    await setup();
    const { grid } = await playSome();
    const res = await get("/api/messenger/admin/games/user-profiles?limit=2");
    expect(res.status).toBe(200);
    expect(res.body.total).toBe(3);
    expect(res.body.players).toHaveLength(2);
    const earned = res.body.players.map((p: any) => p.points_earned);
    expect(earned[0]).toBeGreaterThanOrEqual(earned[1]);
    expect(res.body.pagination).toEqual({ has_more: true, next_offset: 2, next_cursor: null });
    expect(res.body.query).toEqual({ limit: 2, offset: 0, cursor: null, sort: "points_earned", linked: null });
    const all = await get("/api/messenger/admin/games/user-profiles?sort=telegram_user_id");
    expect(all.body.players.map((p: any) => p.telegram_user_id)).toEqual([1, 2, 3]);
    expect(all.body.players[2].activity).toMatchObject({ ledger_entries: 6, entries_by_game: { recon_grid: 6 } });
    // 6 granted, 5 spent on reveals, plus the missiles the revealed cells paid.
    expect(all.body.players[2].balances.missile_balance).toBe(6 - 5 + grid.payout.missiles);
    expect((await get("/api/messenger/admin/games/user-profiles?sort=name")).status).toBe(400);
    expect((await get("/api/messenger/admin/games/user-profiles?limit=201")).status).toBe(400);
  });

  test("manual grant: through the ledger with an audit row in the same transaction; idempotent by request_id", async () => {
    await setup();
    expect((await as(7, "/api/messenger/games/recon-grid/status")).status).toBe(200);
    const body = { telegram_user_id: 7, missiles: 5, reason: "compensation for outage", request_id: "grant-0001" };
    const first = await adminPost("/api/messenger/admin/games/recon-grid/manual-grant", body);
    expect(first.status).toBe(200);
    expect(first.body).toMatchObject({
      grant: { telegram_user_id: 7, missiles: 5, reason: "compensation for outage", request_id: "grant-0001" },
      replayed: false,
    });
    expect(first.body.balances.missile_balance).toBe(5);
    const again = await adminPost("/api/messenger/admin/games/recon-grid/manual-grant", body);
    expect(again.status).toBe(200);
    expect({ ...again.body, replayed: false } as unknown).toEqual(first.body);
    expect(again.body.replayed).toBe(true);
    const other = await adminPost("/api/messenger/admin/games/recon-grid/manual-grant", { ...body, missiles: 6 });
    expect([other.status, other.body.error]).toEqual([422, "request_id_reused"]);
    expect((await as(8, "/api/messenger/games/recon-grid/status")).status).toBe(200);
    const otherPlayer = await adminPost("/api/messenger/admin/games/recon-grid/manual-grant", { ...body, telegram_user_id: 8 });
    expect([otherPlayer.status, otherPlayer.body.error]).toEqual([422, "request_id_reused"]);

    const db = h.ctx.store;
    expect(await db.all("SELECT missile_balance FROM messenger_players WHERE telegram_user_id IN (7, 8) ORDER BY telegram_user_id")).toEqual([
      { missile_balance: 5 },
      { missile_balance: 0 },
    ]);
    expect(await db.all("SELECT action, game_key, missile_delta FROM messenger_ledger WHERE telegram_user_id = 7")).toEqual([
      { action: "admin.manual_grant", game_key: "recon_grid", missile_delta: 5 },
    ]);
    const audit = (await db.all("SELECT action, target, details FROM admin_audit WHERE action LIKE 'messenger.recon_grid%'")) as any[];
    expect(audit).toHaveLength(1);
    expect([audit[0].target, JSON.parse(audit[0].details)]).toEqual([
      "7",
      expect.objectContaining({ missiles: 5, reason: "compensation for outage", request_id: "grant-0001", missile_balance_before: 0 }),
    ]);
    for (const bad of [
      { ...body, missiles: 0 },
      { ...body, missiles: 1001 },
      { ...body, reason: "" },
      { ...body, reason: "   ", request_id: "grant-0002" },
      { ...body, request_id: "has space" },
      { telegram_user_id: 7, missiles: 1, request_id: "grant-0003" },
    ]) {
      const r = await adminPost("/api/messenger/admin/games/recon-grid/manual-grant", bad);
      expect([r.status, r.body.error]).toEqual([400, "invalid_payload"]);
    }
    const stranger = await adminPost("/api/messenger/admin/games/recon-grid/manual-grant", { ...body, telegram_user_id: 4040, request_id: "grant-0004" });
    expect([stranger.status, stranger.body.error]).toEqual([404, "player_not_found"]);
    expect(await db.get("SELECT COUNT(*) AS n FROM admin_audit WHERE action LIKE 'messenger.recon_grid%'")).toEqual({ n: 1 });
    // A one-character request id is an id like any other.
    const short = await adminPost("/api/messenger/admin/games/recon-grid/manual-grant", { ...body, missiles: 1, request_id: "g" });
    expect([short.status, short.body.grant.request_id]).toEqual([200, "g"]);
  });
});

describe("authorisation and configuration", () => {
  const routes: Array<[string, string]> = [
    ["GET", "/api/messenger/admin/games/overview"],
    ["GET", "/api/messenger/admin/games/overview/export"],
    ["GET", "/api/messenger/admin/games/spin-wheel"],
    ["GET", "/api/messenger/admin/games/recon-grid"],
    ["GET", "/api/messenger/admin/games/rollout-checklist"],
    ["GET", "/api/messenger/admin/games/user-activity/1"],
    ["GET", "/api/messenger/admin/games/user-profiles"],
    ["POST", "/api/messenger/admin/games/recon-grid/manual-grant"],
  ];
  const grant = { telegram_user_id: 1, missiles: 1, reason: "x", request_id: "grant-auth-1" };

  test("every route is 403 without the admin token (and with a player's init data)", async () => {
    await setup();
    for (const [method, path] of routes) {
      const none = await h.json(path, method === "POST" ? jsonInit("POST", grant) : {});
      expect([path, none.status, none.body.error]).toEqual([path, 403, "forbidden"]);
      const player = await h.json(
        path,
        method === "POST" ? tmaPost(initDataFor(h, { id: 1 }), grant) : { headers: { authorization: `tma ${initDataFor(h, { id: 1 })}` } },
      );
      expect([path, player.status]).toEqual([path, 403]);
    }
    expect(await h.ctx.store.get("SELECT COUNT(*) AS n FROM messenger_ledger")).toEqual({ n: 0 });
  });

  test("an operator gets 503 when the bot is not configured", async () => {
    h = await openMessengerApp({ env: { MESSENGER_BOT_TOKEN: "" } });
    admin = await createAdminToken(h);
    for (const [method, path] of routes) {
      const res = await h.json(path, method === "POST" ? jsonInit("POST", grant, bearer()) : { headers: bearer() });
      expect([path, res.status, res.body.error]).toEqual([path, 503, "messenger_not_configured"]);
    }
  });
});
