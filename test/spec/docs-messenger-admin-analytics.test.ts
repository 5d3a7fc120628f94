// Docs audit: docs/messenger-admin-analytics.md against the real app — a spin and a manual grant read back through
// the overview, its export, the wheel and grid reports, the checklist and the player routes; who may call them.
// (Windows, bounds and the grant's refusals: test/spec/docs-messenger-admin.test.ts.)
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { initDataFor, openMessengerApp, tmaPost } from "../messenger/support";
import { jsonInit, openTestApp, type TestApp } from "../support/app";
import { signedInCookie } from "../support/console";
import { createAdminToken } from "../support/partner";

const A = "/api/messenger/admin";
let h: TestApp;
let auth: Record<string, string>;
let token: string;
const get = (path: string) => h.json(`${A}${path}`, { headers: auth });

beforeAll(async () => {
  // One player's daily free spin (the seeded wheel lands on "2 missiles") and a grant of 5 missiles, today.
  h = await openMessengerApp();
  h.clock.set("2026-03-03T10:00:00.000Z");
  token = await createAdminToken(h);
  auth = { authorization: `Bearer ${token}` };
  const init = initDataFor(h, { id: 4242, username: "ada" });
  await h.request("/api/messenger/init/verify", tmaPost(init));
  const spin = await h.json("/api/messenger/games/spin-wheel/play", tmaPost(init, { request_id: "spin-0001" }));
  expect(spin.body.spin).toMatchObject({ paid_with: "daily_free_spin", reward: { free_spins: 0, missiles: 2, points: 0 } });
  const grant = { telegram_user_id: 4242, missiles: 5, reason: "compensation", request_id: "grant-0001" };
  expect((await h.json(`${A}/games/recon-grid/manual-grant`, jsonInit("POST", grant, auth))).status).toBe(200);
});
afterAll(async () => {
  await h?.close();
});

describe("docs/messenger-admin-analytics.md", () => {
  // docs/messenger-admin-analytics.md:34-56, 80-103 — plays, players, payout, cost, rtp null when nothing spent,
  // grants beside the plays; the total counts a player once; a series point per day
  test("overview figures", async () => {
    const o = (await get("/games/overview?days=2")).body;
    expect(o.points_value).toEqual({ points: 1, free_spins: 50, missiles: 20 });
    const [wheel, grid] = o.games;
    expect(wheel).toMatchObject({
      game_key: "spin_wheel",
      plays: 1,
      players: 1,
      payout: { free_spins: 0, missiles: 2, points: 0 },
      cost: { free_spins: 0, missiles: 0, points: 0 },
      payout_points_value: 40,
      cost_points_value: 0,
      rtp_percent: null,
    });
    expect(grid).toMatchObject({ game_key: "recon_grid", plays: 0, players: 1, manual_grants: { entries: 1, missiles: 5 }, payout: { missiles: 0 } });
    expect(wheel.series.map((p: any) => [p.day, p.plays])).toEqual([
      ["2026-03-02", 0],
      ["2026-03-03", 1],
    ]);
    expect(o.total).toMatchObject({ game_key: "total", plays: 1, players: 1 });
  });

  // docs/messenger-admin-analytics.md:105-118 — the export: attachment names, columns, day rows' empty kinds
  test("overview export", async () => {
    const csv = await h.request(`${A}/games/overview/export?days=2&games=recon_grid`, { headers: auth });
    expect(csv.headers.get("content-disposition")).toBe('attachment; filename="messenger-games-overview-2026-03-02-2026-03-03.csv"');
    const lines = (await csv.text()).trim().split("\r\n");
    expect(lines[0]).toBe(
      "row_type,game_key,day,plays,players,payout_free_spins,payout_missiles,payout_points,cost_free_spins,cost_missiles,cost_points,payout_points_value,cost_points_value,rtp_percent,purchases,purchase_points_spent,manual_grants,manual_grant_missiles",
    );
    expect(lines).toContain("window,recon_grid,2026-03-02..2026-03-03,0,1,0,0,0,0,0,0,0,0,,0,0,1,5");
    expect(lines).toContain("day,recon_grid,2026-03-03,0,1,,,,,,,0,0,,,,,");
    const json = await h.request(`${A}/games/overview/export?days=2&format=json`, { headers: auth });
    expect(json.headers.get("content-disposition")).toBe('attachment; filename="messenger-games-overview-2026-03-02-2026-03-03.json"');
    const rows = ((await json.json()) as any).rows;
    expect(rows.find((r: any) => r.row_type === "day" && r.game_key === "total" && r.day === "2026-03-03")).toMatchObject({ plays: 1, payout_missiles: null });
  });

  // docs/messenger-admin-analytics.md:137-176, 180-202 — the wheel's campaigns and segments; the grid's counts
  test("spin-wheel and recon-grid reports", async () => {
    const w = (await get("/games/spin-wheel?days=2")).body;
    const c = w.wheel.campaigns[0];
    expect(c).toMatchObject({ campaign_key: "wheel-default", known_campaign: true, spins: 1, gross_payout: { missiles: 2, points_value: 40 } });
    expect(c.paid_with.daily_free_spin).toBe(1);
    const shares = c.segments.reduce((s: number, x: any) => s + x.expected_share, 0);
    expect(Math.abs(shares - 1)).toBeLessThan(1e-6);
    expect(w.wheel.scan).toEqual({ table: "messenger_spins", rows_examined: 1, limit: 200000, bounded: false });
    const g = (await get("/games/recon-grid?days=2")).body;
    expect(g.grids).toEqual({
      started: 0,
      completed: 0,
      abandoned: 0,
      active: 0,
      finished: 0,
      reveals_in_these_grids: 0,
      average_reveals_per_grid: null,
      average_reveals_per_finished_grid: null,
    });
    expect(g.scan).toMatchObject({ table: "messenger_grids", limit: 200000, bounded: false });
  });

  // docs/messenger-admin-analytics.md:204-242 — the checks, the worst status overall, fix null only on a pass
  test("rollout checklist", async () => {
    const r = (await get("/games/rollout-checklist?days=2&games=spin_wheel")).body;
    expect(r.checks.map((c: any) => c.name)).toEqual([
      "rtp_band",
      "players_in_window",
      "refusal_share",
      "init_data_failure_rate",
      "bot_api_error_rate",
      "bot_outbox_backlog",
      "bot_outbox_dead",
      "wheel_segment_drift",
    ]);
    const players = r.checks.find((c: any) => c.name === "players_in_window");
    expect(players).toMatchObject({ status: "fail", figure: 1, unit: "players", game_key: null });
    expect(r.overall).toBe("fail");
    expect(r.counts.pass + r.counts.warn + r.counts.fail).toBe(8);
    for (const c of r.checks) expect([c.name, c.fix === null]).toEqual([c.name, c.status === "pass"]);
  });

  // docs/messenger-admin-analytics.md:244-312 — the player's ledger newest first with its cursor; 404 and 400
  test("user-activity and user-profiles", async () => {
    const a = (await get("/games/user-activity/4242?limit=1")).body;
    expect(a.ledger[0]).toMatchObject({ action: "admin.manual_grant", game_key: "recon_grid", deltas: { missiles: 5 } });
    expect(a.activity).toMatchObject({ ledger_entries: 2, entries_by_game: { recon_grid: 1, spin_wheel: 1 }, spins: 1 });
    const next = (await get(`/games/user-activity/4242?limit=1&cursor=${a.pagination.next_cursor}`)).body;
    expect(next.ledger[0].action).toBe("spin_wheel.play");
    expect(next.pagination.has_more).toBe(false);
    const nf = await get("/games/user-activity/99");
    expect([nf.status, nf.body.error]).toEqual([404, "player_not_found"]);
    const bad = await get("/games/user-activity/abc");
    expect([bad.status, bad.body.error, bad.body.details[0].field]).toEqual([400, "invalid_query", "path.telegram_user_id"]);
    expect((await get("/games/user-profiles?linked=true")).body).toMatchObject({ count: 0, total: 0 });
    expect((await get("/games/user-profiles?linked=false")).body).toMatchObject({ count: 1, total: 1, total_capped: false });
  });

  // docs/messenger-admin-analytics.md:3-6 — the GET routes take the operator session; the grant takes the token only
  test("operator session: GET yes, the grant no", async () => {
    const cookie = await signedInCookie(h, token);
    expect((await h.json(`${A}/games/overview`, { headers: { cookie } })).status).toBe(200);
    const g = await h.json(
      `${A}/games/recon-grid/manual-grant`,
      jsonInit("POST", { telegram_user_id: 4242, missiles: 1, reason: "r", request_id: "grant-s" }, { cookie }),
    );
    expect([g.status, g.body.error]).toEqual([403, "forbidden"]);
  });
});

describe("docs/messenger-admin-analytics.md without the bot", () => {
  // docs/messenger-admin-analytics.md:5-6 — 503 messenger_not_configured to an operator; 403 to anyone else
  test("503 to an operator, 403 to others, bad input still 400", async () => {
    const u = await openTestApp();
    try {
      const a = { authorization: `Bearer ${await createAdminToken(u)}` };
      const r = await u.json(`${A}/games/overview`, { headers: a });
      expect([r.status, r.body.error]).toEqual([503, "messenger_not_configured"]);
      expect((await u.json(`${A}/games/overview`)).status).toBe(403);
      expect((await u.json(`${A}/games/overview?days=0`, { headers: a })).status).toBe(400);
    } finally {
      await u.close();
    }
  });
});
