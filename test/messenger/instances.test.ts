// The messenger with two instances on ONE database (issue 28): two contexts with their own stores (connections or
// pools), caches and rngs, as two processes behind one address would have — on SQLite and, with
// HERALD_TEST_ENGINE=postgres, on PostgreSQL, where their transactions really run at the same time. Plays from
// both never overspend and every balance stays the sum of its ledger; an update and a bot reply are handled once;
// the stats fold counts each ledger row once; a promo's cap and a grant's request id hold across instances; and
// the caches each instance keeps notice the other's writes within a second (VERSION_POLL_MS) of the fake clock.
import { afterEach, describe, expect, test } from "bun:test";
import { sendDueBotCalls } from "../../src/messenger/bot/outbox";
import { foldLedger } from "../../src/messenger/daily-stats";
import { gridStatus, revealCell, startGrid } from "../../src/messenger/games/recon-grid";
import { playWheel } from "../../src/messenger/games/wheel";
import { applyAction } from "../../src/messenger/ledger";
import { purchaseItem } from "../../src/messenger/service";
import { VERSION_POLL_MS } from "../../src/messenger/version-watch";
import { AppError } from "../../src/http/errors/errors";
import { jsonInit, type TestApp } from "../support/app";
import { createAdminToken } from "../support/partner";
import { initDataFor, openMessengerApp, siblingOf, startFakeBotApi, textUpdate, tmaPost, webhookPost } from "./support";

let apps: TestApp[] = [];
afterEach(async () => {
  // The second instance first: on SQLite the first owns the file and its folder.
  for (const x of apps.reverse()) await x.close();
  apps = [];
});

async function twoInstances(env: Record<string, string> = {}): Promise<{ a: TestApp; b: TestApp }> {
  const a = await openMessengerApp({ env });
  apps.push(a);
  const b = await siblingOf(a, { env });
  apps.push(b);
  return { a, b };
}

/** Credits a player through the ledger (so balance = Σ ledger holds from the start). */
const credit = (h: TestApp, id: number, deltas: { freeSpins: number; missiles: number; points: number }) =>
  applyAction(h.ctx, { telegramUserId: id, requestId: `seed-${id}`, action: "test.credit", inputs: deltas, gameKey: null }, async () => ({
    deltas,
    result: {},
  }));

/** The outcome of a game verb: "ok", or the refusal's error code (anything else fails the test). */
async function outcome(p: Promise<unknown>): Promise<string> {
  try {
    await p;
    return "ok";
  } catch (err) {
    if (err instanceof AppError) return err.code;
    throw err;
  }
}

/** Balances and the ledger chain of one player: every row's balances are the previous row's plus its deltas. */
async function expectLedgerConsistent(h: TestApp, id: number) {
  const rows = await h.ctx.store.all<Record<string, number>>(
    `SELECT free_spin_delta AS fd, missile_delta AS md, points_delta AS pd, free_spin_after AS fa, missile_after AS ma, points_after AS pa
     FROM messenger_ledger WHERE telegram_user_id = ? ORDER BY id`,
    [id],
  );
  let [f, m, p] = [0, 0, 0];
  for (const r of rows) {
    [f, m, p] = [f + r.fd!, m + r.md!, p + r.pd!];
    expect([r.fa, r.ma, r.pa]).toEqual([f, m, p]);
    expect(f >= 0 && m >= 0 && p >= 0).toBe(true);
  }
  const player = await h.ctx.store.get(
    "SELECT free_spin_balance AS f, missile_balance AS m, points_balance AS p FROM messenger_players WHERE telegram_user_id = ?",
    [id],
  );
  expect(player).toEqual({ f, m, p });
  return rows.length;
}

describe("two instances on one database", () => {
  test("spins, reveals and purchases from both never overspend; every balance is the sum of its ledger", async () => {
    const { a, b } = await twoInstances();
    const P = 7001;
    await credit(a, P, { freeSpins: 4, missiles: 6, points: 120 });
    // The daily free spin is used: only spins in hand (and those won or bought meanwhile) pay.
    await a.ctx.store.run("UPDATE messenger_players SET last_free_spin_at = ? WHERE telegram_user_id = ?", [a.clock.now().toISOString(), P]);
    await gridStatus(a.ctx, P);
    const grid = (await startGrid(b.ctx, P, {})).grid;
    const on = (i: number) => (i % 2 === 0 ? a : b);
    const spins = Array.from({ length: 20 }, (_, i) => outcome(playWheel(on(i).ctx, P, `spin-${i}-xxxx`)));
    const reveals = Array.from({ length: 25 }, (_, cell) =>
      outcome(revealCell(on(cell + 1).ctx, P, { request_id: `reveal-${cell}-xxxx`, grid_id: grid.grid_id, cell })),
    );
    const buys = Array.from({ length: 8 }, (_, i) => outcome(purchaseItem(on(i).ctx, P, { request_id: `buy-${i}-xxxx`, item_key: "spin_play", quantity: 1 })));
    const [spun, revealed, bought] = await Promise.all([Promise.all(spins), Promise.all(reveals), Promise.all(buys)]);
    // Every refusal is one the rules give (no spin, no missile, grid over), never a lost race or a 5xx.
    for (const o of spun) expect(["ok", "game_cooldown"]).toContain(o);
    for (const o of revealed) expect(["ok", "game_balance_insufficient", "game_state_conflict"]).toContain(o);
    for (const o of bought) expect(["ok", "game_balance_insufficient"]).toContain(o);
    const ok = (list: string[]) => list.filter((o) => o === "ok").length;
    const rows = await expectLedgerConsistent(a, P);
    expect(rows).toBe(1 + ok(spun) + ok(revealed) + ok(bought));
    expect((await a.ctx.store.get("SELECT count(*) AS n FROM messenger_spins"))!.n).toBe(ok(spun));
    // Each cell revealed once, by the reveal that succeeded.
    const g = (await a.ctx.store.get<{ revealed: string }>("SELECT revealed FROM messenger_grids WHERE id = ?", [grid.grid_id]))!;
    const cells = JSON.parse(g.revealed) as number[];
    expect(cells.length).toBe(ok(revealed));
    expect(new Set(cells).size).toBe(cells.length);
    expect(cells.sort((x, y) => x - y)).toEqual(revealed.flatMap((o, cell) => (o === "ok" ? [cell] : [])));
    // Spent at least what was credited: the balances were the limit, not a lucky schedule.
    expect(ok(spun) + ok(revealed)).toBeGreaterThanOrEqual(4 + 6);
  }, 60_000);

  test("the same request id sent to both is applied once; its answer replays on either", async () => {
    const { a, b } = await twoInstances();
    const P = 7002;
    await credit(a, P, { freeSpins: 3, missiles: 0, points: 0 });
    const [x, y] = await Promise.all([playWheel(a.ctx, P, "same-request-1"), playWheel(b.ctx, P, "same-request-1")]);
    expect([x.replayed, y.replayed].sort()).toEqual([false, true]);
    expect(x.spin).toEqual(y.spin);
    expect((await a.ctx.store.get("SELECT count(*) AS n FROM messenger_spins"))!.n).toBe(1);
    expect(await expectLedgerConsistent(b, P)).toBe(2);
  });

  test("one bot update delivered to both instances is handled once: one answer, one set of replies", async () => {
    const { a, b } = await twoInstances();
    const update = textUpdate("/start", { id: 8101, first_name: "Bo", username: "bo" }, 990_101);
    const [x, y] = await Promise.all([a.json("/api/messenger/webhook", webhookPost(update)), b.json("/api/messenger/webhook", webhookPost(update))]);
    expect([x.status, y.status]).toEqual([200, 200]);
    expect([x.body.duplicate, y.body.duplicate].sort()).toEqual([false, true]);
    const handled = x.body.duplicate ? y.body : x.body;
    expect(handled.replies_queued).toBeGreaterThanOrEqual(1);
    expect((await a.ctx.store.get("SELECT count(*) AS n FROM messenger_updates WHERE update_id = 990101"))!.n).toBe(1);
    expect((await a.ctx.store.get("SELECT count(*) AS n FROM messenger_bot_outbox WHERE update_id = 990101"))!.n).toBe(handled.replies_queued);
    expect((await a.ctx.store.get("SELECT count(*) AS n FROM messenger_players WHERE telegram_user_id = 8101"))!.n).toBe(1);
    const counts = await a.ctx.store.all(
      "SELECT metric, SUM(count) AS n FROM messenger_counters WHERE metric LIKE 'updates_%' GROUP BY metric ORDER BY metric",
    );
    expect(counts).toEqual([
      { metric: "updates_received", n: 1 },
      { metric: "updates_replayed", n: 1 },
    ]);
  });

  test("both instances draining the bot outbox at once send each reply once", async () => {
    const api = startFakeBotApi();
    try {
      const { a, b } = await twoInstances({ MESSENGER_BOT_API_BASE: api.url });
      for (let i = 0; i < 12; i++) expect((await a.json("/api/messenger/webhook", webhookPost(textUpdate("/help", { id: 8200 + i })))).status).toBe(200);
      const queued = (await a.ctx.store.get<{ n: number }>("SELECT count(*) AS n FROM messenger_bot_outbox"))!.n;
      let sent = 0;
      for (let round = 0; round < 5 && sent < queued; round++) {
        const [x, y] = await Promise.all([sendDueBotCalls(a.ctx), sendDueBotCalls(b.ctx)]);
        sent += x.sent + y.sent;
      }
      expect(sent).toBe(queued);
      expect(api.calls).toHaveLength(queued);
      expect(new Set(api.calls.map((c) => c.body.chat_id)).size).toBe(12);
      expect(await a.ctx.store.all("SELECT DISTINCT status FROM messenger_bot_outbox")).toEqual([{ status: "sent" }]);
      expect((await a.ctx.store.get("SELECT SUM(count) AS n FROM messenger_counters WHERE metric = 'bot_messages_sent'"))!.n).toBe(queued);
    } finally {
      api.stop();
    }
  });

  test("folds on both instances, while plays go on, count each ledger row exactly once", async () => {
    const { a, b } = await twoInstances();
    for (const id of [7101, 7102, 7103]) await credit(a, id, { freeSpins: 30, missiles: 0, points: 0 });
    let n = 0;
    for (let round = 0; round < 4; round++) {
      const plays = [7101, 7102, 7103].flatMap((id) => [playWheel(a.ctx, id, `fold-${round}-${++n}-x`), playWheel(b.ctx, id, `fold-${round}-${++n}-y`)]);
      await Promise.all([...plays, foldLedger(a.ctx), foldLedger(b.ctx), foldLedger(a.ctx, 2), foldLedger(b.ctx, 3)]);
      if (round === 1) a.clock.advance(24 * 3_600_000);
    }
    await Promise.all([foldLedger(a.ctx), foldLedger(b.ctx)]);
    expect((await a.ctx.store.get("SELECT count(*) AS n FROM messenger_ledger WHERE folded = 0"))!.n).toBe(0);
    const folded = await a.ctx.store.all(
      "SELECT day, action, game_key, entries, free_spins_granted, free_spins_spent, points_granted FROM messenger_daily_stats ORDER BY day, action, game_key",
    );
    const expected = await a.ctx.store.all(
      `SELECT substr(created_at, 1, 10) AS day, action, coalesce(game_key, '') AS game_key, count(*) AS entries,
         sum(CASE WHEN free_spin_delta > 0 THEN free_spin_delta ELSE 0 END) AS free_spins_granted,
         sum(CASE WHEN free_spin_delta < 0 THEN -free_spin_delta ELSE 0 END) AS free_spins_spent,
         sum(CASE WHEN points_delta > 0 THEN points_delta ELSE 0 END) AS points_granted
       FROM messenger_ledger GROUP BY substr(created_at, 1, 10), action, coalesce(game_key, '')
       ORDER BY substr(created_at, 1, 10), action, coalesce(game_key, '')`,
    );
    expect(folded).toEqual(expected);
    const players = await a.ctx.store.get<{ n: number }>("SELECT SUM(entries) AS n FROM messenger_daily_players WHERE game_key = ''");
    expect(players!.n).toBe((await a.ctx.store.get<{ n: number }>("SELECT count(*) AS n FROM messenger_ledger"))!.n);
  }, 60_000);

  test("a promo's cap and a manual grant's request id hold across instances", async () => {
    const { a, b } = await twoInstances();
    const token = await createAdminToken(a);
    const auth = { authorization: `Bearer ${token}` };
    const promo = await a.json("/api/messenger/admin/games/promos", jsonInit("POST", { code: "ONLYONE", reward: { points: 5 }, max_claims: 1 }, auth));
    expect(promo.status).toBe(200);
    const claim = (h: TestApp, id: number) =>
      h.json("/api/messenger/games/promos/claim", tmaPost(initDataFor(h, { id }), { request_id: `claim-${id}-xx`, code: "ONLYONE" }));
    const claims = await Promise.all([claim(a, 7301), claim(b, 7302)]);
    expect(claims.map((c) => c.status).sort()).toEqual([200, 409]);
    expect(claims.find((c) => c.status === 409)!.body.error).toBe("promo_exhausted");
    expect(await a.ctx.store.get("SELECT claims FROM messenger_promos WHERE code = 'ONLYONE'")).toEqual({ claims: 1 });

    const grant = (h: TestApp, id: number) =>
      h.json(
        "/api/messenger/admin/games/recon-grid/manual-grant",
        jsonInit("POST", { telegram_user_id: id, missiles: 3, reason: "support", request_id: "grant-0001" }, auth),
      );
    const grants = await Promise.all([grant(a, 7301), grant(b, 7302)]);
    expect(grants.map((g) => g.status).sort()).toEqual([200, 422]);
    expect(grants.find((g) => g.status === 422)!.body.error).toBe("request_id_reused");
    expect((await a.ctx.store.get("SELECT count(*) AS n FROM messenger_ledger WHERE action = 'admin.manual_grant'"))!.n).toBe(1);
  });

  test("two overlapping wheel campaigns saved on the two instances at once: one is saved, the other is 409", async () => {
    const { a, b } = await twoInstances();
    const token = await createAdminToken(a);
    const save = (h: TestApp, key: string) =>
      h.json(
        "/api/messenger/admin/games/wheel-campaigns",
        jsonInit(
          "POST",
          { campaign_key: key, title: key, audience_group: "all", cooldown_seconds: 3600, segments: [{ label: "1", weight: 1, reward: { points: 1 } }] },
          { authorization: `Bearer ${token}` },
        ),
      );
    const saved = await Promise.all([save(a, "left"), save(b, "right")]);
    expect(saved.map((s) => s.status).sort()).toEqual([200, 409]);
    expect(saved.find((s) => s.status === 409)!.body.error).toBe("campaign_overlap");
    expect((await a.ctx.store.get("SELECT count(*) AS n FROM messenger_wheel_campaigns"))!.n).toBe(1);
    expect((await a.ctx.store.get("SELECT count(*) AS n FROM admin_audit WHERE action = 'messenger.wheel_campaign.create'"))!.n).toBe(1);
  });

  test("a wheel campaign saved on one instance reaches the other's cached configuration within a second", async () => {
    const { a, b } = await twoInstances();
    const token = await createAdminToken(a);
    const status = async (h: TestApp) =>
      (await h.json("/api/messenger/games/spin-wheel/status", tmaPost(initDataFor(h, { id: 7401 }), {}))).body.campaign.campaign_key as string;
    expect(await status(b)).toBe("wheel-default"); // b now holds the configuration in memory
    const saved = await a.json(
      "/api/messenger/admin/games/wheel-campaigns",
      jsonInit(
        "POST",
        {
          campaign_key: "spring",
          title: "Spring",
          audience_group: "all",
          cooldown_seconds: 3600,
          segments: [{ label: "10", weight: 1, reward: { points: 10 } }],
        },
        { authorization: `Bearer ${token}` },
      ),
    );
    expect(saved.status).toBe(200);
    expect(await status(a)).toBe("spring"); // the writer's own copy was dropped at the commit
    expect(await status(b)).toBe("wheel-default"); // the other serves its copy until its next version check …
    a.clock.advance(VERSION_POLL_MS);
    expect(await status(b)).toBe("spring"); // … at most a second later
  });

  test("a late fold into a closed day reaches the other instance's players window within a second", async () => {
    const { a, b } = await twoInstances();
    const token = await createAdminToken(a);
    const players = async (h: TestApp) =>
      (await h.json("/api/messenger/admin/games/overview?days=7", { headers: { authorization: `Bearer ${token}` } })).body.total.players as number;
    await credit(a, 7501, { freeSpins: 5, missiles: 0, points: 0 });
    await playWheel(a.ctx, 7501, "yesterday-play-1");
    a.clock.advance(24 * 3_600_000);
    expect(await players(b)).toBe(1); // b caches yesterday as a closed day
    // A play of yesterday that only now reaches the aggregates (committed late, or folded after midnight).
    const yesterday = new Date(a.clock.now().getTime() - 3_600_000).toISOString();
    await a.ctx.store.run(
      `INSERT INTO messenger_ledger (telegram_user_id, request_id, action, fingerprint, free_spin_delta, missile_delta, points_delta,
         free_spin_after, missile_after, points_after, game_key, result, created_at)
       VALUES (7502, 'late-1', 'spin_wheel.play', 'x', 0, 0, 0, 0, 0, 0, 'spin_wheel', '{}', ?)`,
      [yesterday],
    );
    expect(await foldLedger(a.ctx)).toBe(1);
    a.clock.advance(VERSION_POLL_MS);
    expect(await players(b)).toBe(2);
  });
});
