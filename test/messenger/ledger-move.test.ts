// What a game action answers is what it stored (src/messenger/ledger.ts). On PostgreSQL an action whose answer is
// known before its balances move (every action; the wheel takes its spin's id with the nonce) moves them and writes
// the ledger row's outcome in ONE statement, from exactly the balances its row lock read; SQLite moves, reads and
// writes. Either way: the spin row under the answered id, the ledger row's deltas, balances after and stored answer,
// and the player's balances agree — and a move from balances the lock did not read is never recorded.
import { afterEach, describe, expect, test } from "bun:test";
import { purchaseItem } from "../../src/messenger/games/games";
import { playWheel } from "../../src/messenger/games/wheel";
import { applyAction } from "../../src/messenger/ledger";
import type { TxOptions } from "../../src/db/port";
import { jsonInit, type TestApp } from "../support/app";
import { createAdminToken } from "../support/partner";
import { describeOn } from "../support/skipped";
import { initDataFor, openMessengerApp, tmaPost } from "./support";

const FILE = "test/messenger/ledger-move.test.ts";

let h: TestApp;
afterEach(async () => {
  await h?.close();
});

const PLAYER = 6262;
const post = (path: string, body: Record<string, unknown> = {}) => h.json(path, tmaPost(initDataFor(h, { id: PLAYER, username: "ada" }), body));

/** The player with a seed pair (the status read) and `spins` spins in hand, as a credit through the ledger. */
async function readyPlayer(spins: number) {
  h = await openMessengerApp();
  expect((await post("/api/messenger/games/spin-wheel/status")).status).toBe(200);
  await applyAction(h.ctx, { telegramUserId: PLAYER, requestId: "grant", action: "test.credit", inputs: {}, gameKey: null }, async () => ({
    deltas: { freeSpins: spins, missiles: 0, points: 0 },
    result: {},
  }));
}

const balancesNow = async () =>
  (await h.ctx.store.get<{ free_spin_balance: number; missile_balance: number; points_balance: number }>(
    "SELECT free_spin_balance, missile_balance, points_balance FROM messenger_players WHERE telegram_user_id = ?",
    [PLAYER],
  ))!;

describe("a game action answers what it stored", () => {
  test("each play: its spin row under the answered id, its ledger row's outcome and balances, the player's balances", async () => {
    await readyPlayer(10);
    let last: Record<string, any> = {};
    const ids: number[] = [];
    for (let i = 0; i < 6; i++) {
      const r = await post("/api/messenger/games/spin-wheel/play", { request_id: `p-${i}` });
      expect(r.status).toBe(200);
      last = r.body;
      const spin = r.body.spin;
      ids.push(spin.id);
      const row = await h.ctx.store.get<Record<string, unknown>>(
        "SELECT telegram_user_id, nonce, segment_index, paid_with, campaign_key, created_at FROM messenger_spins WHERE id = ?",
        [spin.id],
      );
      expect(row).toEqual({
        telegram_user_id: PLAYER,
        nonce: spin.fairness.nonce,
        segment_index: spin.segment_index,
        paid_with: spin.paid_with,
        campaign_key: spin.campaign_key,
        created_at: spin.created_at,
      });
      const entry = (await h.ctx.store.get<Record<string, any>>(
        "SELECT free_spin_delta, missile_delta, points_delta, free_spin_after, missile_after, points_after, result FROM messenger_ledger WHERE id = ?",
        [r.body.ledger_entry_id],
      ))!;
      const { success: _s, replayed: _r, ledger_entry_id: _l, ...answer } = r.body;
      expect(JSON.parse(entry.result)).toEqual(answer);
      expect([entry.free_spin_after, entry.missile_after, entry.points_after]).toEqual([
        r.body.balances.free_spin_balance,
        r.body.balances.missile_balance,
        r.body.balances.points_balance,
      ]);
      expect([entry.free_spin_delta, entry.missile_delta, entry.points_delta]).toEqual([
        spin.reward.free_spins - (spin.paid_with === "free_spin_balance" ? 1 : 0),
        spin.reward.missiles,
        spin.reward.points,
      ]);
    }
    expect(await balancesNow()).toEqual(last.balances);
    expect(ids).toEqual([...ids].sort((a, b) => a - b));
    expect(new Set(ids).size).toBe(ids.length);
  });

  test("a replay answers the same spin; the next play gets a new id, above it", async () => {
    await readyPlayer(5);
    const first = await post("/api/messenger/games/spin-wheel/play", { request_id: "same" });
    expect(first.status).toBe(200);
    const again = await post("/api/messenger/games/spin-wheel/play", { request_id: "same" });
    expect(again.body).toEqual({ ...first.body, replayed: true });
    const next = await post("/api/messenger/games/spin-wheel/play", { request_id: "next" });
    expect(next.status).toBe(200);
    expect(next.body.spin.id).toBeGreaterThan(first.body.spin.id);
    expect((await h.ctx.store.get<{ n: number }>("SELECT COUNT(*) AS n FROM messenger_spins"))!.n).toBe(2);
  });
});

describe("the spin's id and the daily spin's time, one way on both engines", () => {
  test("the daily free spin's time is written with the move; a spin in hand leaves it", async () => {
    await readyPlayer(3);
    const lastFree = async () =>
      (await h.ctx.store.get<{ at: string | null }>("SELECT last_free_spin_at AS at FROM messenger_players WHERE telegram_user_id = ?", [PLAYER]))!.at;
    const free = await post("/api/messenger/games/spin-wheel/play", { request_id: "free" });
    expect([free.status, free.body.spin.paid_with]).toEqual([200, "daily_free_spin"]);
    expect(await lastFree()).toBe(free.body.spin.created_at);
    const inHand = await post("/api/messenger/games/spin-wheel/play", { request_id: "in-hand" });
    expect([inHand.status, inHand.body.spin.paid_with]).toEqual([200, "free_spin_balance"]);
    expect(await lastFree()).toBe(free.body.spin.created_at);
  });

  test("the id taken with the nonce is the one recorded; a refused or replayed play records none (on SQLite no id is lost: the next play takes it)", async () => {
    await readyPlayer(1);
    const first = await post("/api/messenger/games/spin-wheel/play", { request_id: "a" });
    const second = await post("/api/messenger/games/spin-wheel/play", { request_id: "b" });
    expect([first.status, second.status]).toEqual([200, 200]);
    // Take back whatever the two spins won: the next play is refused (no daily spin, none in hand).
    await h.ctx.store.run("UPDATE messenger_players SET free_spin_balance = 0 WHERE telegram_user_id = ?", [PLAYER]);
    const refused = await post("/api/messenger/games/spin-wheel/play", { request_id: "c" });
    expect([refused.status, refused.body.error]).toEqual([409, "game_cooldown"]);
    expect((await post("/api/messenger/games/spin-wheel/play", { request_id: "b" })).body.spin.id).toBe(second.body.spin.id);
    await h.ctx.store.run("UPDATE messenger_players SET free_spin_balance = 1 WHERE telegram_user_id = ?", [PLAYER]);
    const third = await post("/api/messenger/games/spin-wheel/play", { request_id: "d" });
    expect(third.status).toBe(200);
    const rows = await h.ctx.store.all<{ id: number }>("SELECT id FROM messenger_spins WHERE telegram_user_id = ? ORDER BY id", [PLAYER]);
    expect(rows.map((r) => r.id)).toEqual([first.body.spin.id, second.body.spin.id, third.body.spin.id]);
    expect(third.body.spin.id).toBeGreaterThan(second.body.spin.id);
    // PostgreSQL's sequence is not rolled back (the refused and replayed plays each took an id); SQLite's counter is.
    if (h.ctx.store.dialect === "sqlite") expect(third.body.spin.id).toBe(second.body.spin.id + 1);
  });
});

describe("different players' actions at once (on PostgreSQL run together in their batches)", () => {
  test("every play answers its own spin and stored outcome, every player's balances are their ledger's sum; a refusal among them is refused alone", async () => {
    h = await openMessengerApp();
    const players = Array.from({ length: 12 }, (_, i) => 7100 + i);
    const POOR = 7199;
    for (const uid of [...players, POOR]) {
      const status = await h.json("/api/messenger/games/spin-wheel/status", tmaPost(initDataFor(h, { id: uid, username: `p${uid}` }), {}));
      expect(status.status).toBe(200);
    }
    for (const uid of players) {
      await applyAction(h.ctx, { telegramUserId: uid, requestId: "grant", action: "test.credit", inputs: {}, gameKey: null }, async () => ({
        deltas: { freeSpins: 10, missiles: 0, points: 0 },
        result: {},
      }));
    }
    const together = h.ctx.store.health.counts.together;
    // Two plays of each player, and a purchase the poor player cannot pay, all at once.
    const plays = players.flatMap((uid) => [playWheel(h.ctx, uid, `a-${uid}`), playWheel(h.ctx, uid, `b-${uid}`)]);
    const refused = purchaseItem(h.ctx, POOR, { request_id: "too-dear", item_key: "missile", quantity: 100 });
    const [answers, refusal] = await Promise.all([
      Promise.all(plays),
      refused.then(
        () => null,
        (e: { code?: string }) => e.code,
      ),
    ]);
    expect(refusal).toBe("game_balance_insufficient");
    for (const [i, a] of answers.entries()) {
      const uid = players[Math.floor(i / 2)]!;
      const stored = (await h.ctx.store.get<{ result: string; telegram_user_id: number }>(
        "SELECT result, telegram_user_id FROM messenger_ledger WHERE id = ?",
        [a.ledger_entry_id],
      ))!;
      const { replayed: _r, ledger_entry_id: _l, ...answer } = a;
      expect(stored.telegram_user_id).toBe(uid);
      expect(JSON.parse(stored.result)).toEqual(answer);
      const spin = await h.ctx.store.get<{ telegram_user_id: number; nonce: number }>("SELECT telegram_user_id, nonce FROM messenger_spins WHERE id = ?", [
        a.spin.id,
      ]);
      expect(spin).toEqual({ telegram_user_id: uid, nonce: a.spin.fairness.nonce });
    }
    for (const [p, uid] of players.entries()) {
      // The player's two plays took two nonces of one pair and left the balances the ledger sums.
      expect(new Set([answers[2 * p]!.spin.fairness.nonce, answers[2 * p + 1]!.spin.fairness.nonce]).size).toBe(2);
      const sums = (await h.ctx.store.get<Record<string, number>>(
        "SELECT SUM(free_spin_delta) AS f, SUM(missile_delta) AS m, SUM(points_delta) AS p FROM messenger_ledger WHERE telegram_user_id = ?",
        [uid],
      ))!;
      const now = (await h.ctx.store.get<{ f: number; m: number; p: number }>(
        "SELECT free_spin_balance AS f, missile_balance AS m, points_balance AS p FROM messenger_players WHERE telegram_user_id = ?",
        [uid],
      ))!;
      expect([Number(sums.f), Number(sums.m), Number(sums.p)]).toEqual([now.f, now.m, now.p]);
    }
    expect((await h.ctx.store.get<{ n: number }>("SELECT COUNT(*) AS n FROM messenger_ledger WHERE telegram_user_id = ?", [POOR]))!.n).toBe(0);
    // PostgreSQL ran some of them together, several players' plays in one transaction (SQLite groups every commit).
    if (h.ctx.store.dialect === "postgres") expect(h.ctx.store.health.counts.together).toBeGreaterThan(together);
  });

  test("how each action shares a commit: plays, purchases and reveals beside other players' actions; a manual grant alone", async () => {
    h = await openMessengerApp();
    const admin = await createAdminToken(h);
    const uid = 7400;
    const as = (path: string, body: Record<string, unknown> = {}) => h.json(path, tmaPost(initDataFor(h, { id: uid, username: "g" }), body));
    expect((await as("/api/messenger/games/spin-wheel/status")).status).toBe(200);
    await applyAction(h.ctx, { telegramUserId: uid, requestId: "points", action: "test.credit", inputs: {}, gameKey: null }, async () => ({
      deltas: { freeSpins: 0, missiles: 0, points: 100 },
      result: {},
    }));
    // What each action asks of the store's transaction (the store's own method, wrapped to record its options).
    const asked: Array<TxOptions | undefined> = [];
    const tx = h.ctx.store.tx.bind(h.ctx.store);
    h.ctx.store.tx = ((fn, options) => (asked.push(options), tx(fn, options))) as typeof h.ctx.store.tx;
    const sharing = async (act: () => Promise<{ status: number }>) => {
      asked.length = 0;
      expect((await act()).status).toBe(200);
      // The action's own transaction (applyAction's: its COMMIT goes with its last statements); not the hourly counter's.
      return asked.filter((o) => o?.lastAnsweredWithCommit).map((o) => ({ group: o?.group, together: o?.together }));
    };
    const grant = { telegram_user_id: uid, missiles: 3, reason: "support ticket 7", request_id: "grant-1" };
    const granted = await sharing(() =>
      h.json("/api/messenger/admin/games/recon-grid/manual-grant", jsonInit("POST", grant, { authorization: `Bearer ${admin}` })),
    );
    const played = await sharing(() => as("/api/messenger/games/spin-wheel/play", { request_id: "p-1" }));
    const bought = await sharing(() => as("/api/messenger/games/items/purchase", { request_id: "b-1", item_key: "missile", quantity: 1 }));
    const mine = { group: `messenger:${uid}`, together: "beside other keys" as const };
    expect(granted).toEqual([{ group: undefined, together: undefined }]);
    expect(played).toEqual([mine]);
    expect(bought).toEqual([mine]);
  });

  test("a replayed play among other players' plays answers its stored answer once; the others play once each", async () => {
    h = await openMessengerApp();
    const players = Array.from({ length: 8 }, (_, i) => 7300 + i);
    for (const uid of players) {
      expect((await h.json("/api/messenger/games/spin-wheel/status", tmaPost(initDataFor(h, { id: uid, username: `p${uid}` }), {}))).status).toBe(200);
      await applyAction(h.ctx, { telegramUserId: uid, requestId: "grant", action: "test.credit", inputs: {}, gameKey: null }, async () => ({
        deltas: { freeSpins: 10, missiles: 0, points: 0 },
        result: {},
      }));
    }
    const first = await playWheel(h.ctx, players[0]!, "once");
    // Its replay, sent with a play of every other player (and a second of the first's): on PostgreSQL a batch run
    // together meets the replay, is rolled back and runs again one body at a time.
    const [replay, ...others] = await Promise.all([playWheel(h.ctx, players[0]!, "once"), ...players.map((uid) => playWheel(h.ctx, uid, `next-${uid}`))]);
    expect(replay).toEqual({ ...first, replayed: true });
    for (const [i, a] of others.entries()) {
      expect(a.replayed).toBe(false);
      const n = await h.ctx.store.get<{ n: number }>("SELECT COUNT(*) AS n FROM messenger_ledger WHERE telegram_user_id = ? AND request_id = ?", [
        players[i]!,
        `next-${players[i]}`,
      ]);
      expect(n!.n).toBe(1);
    }
    // One ledger row for "once", one spin per play: the replay wrote nothing.
    expect((await h.ctx.store.get<{ n: number }>("SELECT COUNT(*) AS n FROM messenger_spins"))!.n).toBe(1 + players.length);
    expect((await h.ctx.store.get<{ n: number }>("SELECT COUNT(*) AS n FROM messenger_ledger WHERE request_id = 'once'"))!.n).toBe(1);
  });
});

describeOn("postgres", FILE)("the move and the outcome in one statement (PostgreSQL)", () => {
  test("a move from balances other than the lock read fails the action: no ledger row, no spin, no move", async () => {
    await readyPlayer(3);
    const before = await balancesNow();
    const rows = async () => (await h.ctx.store.get<{ n: number }>("SELECT COUNT(*) AS n FROM messenger_ledger"))!.n;
    const ledgerBefore = await rows();
    // An effect that changes a balance behind the ledger's back (no action may): the lock's read is then stale.
    const action = applyAction(h.ctx, { telegramUserId: PLAYER, requestId: "sneaky", action: "test.sneaky", inputs: {}, gameKey: null }, async (_p, { t }) => {
      await t.run("UPDATE messenger_players SET points_balance = points_balance + 7 WHERE telegram_user_id = ?", [PLAYER]);
      return { deltas: { freeSpins: 1, missiles: 0, points: 0 }, result: { ok: true } };
    });
    await expect(action).rejects.toThrow();
    expect(await balancesNow()).toEqual(before);
    expect(await rows()).toBe(ledgerBefore);
    // The player plays on as before.
    const r = await post("/api/messenger/games/spin-wheel/play", { request_id: "after" });
    expect(r.status).toBe(200);
    expect(await balancesNow()).toEqual(r.body.balances);
  });

  test("plays of one player sent together each answer their own spin and stored outcome (one grouped commit)", async () => {
    await readyPlayer(40);
    const answers = await Promise.all(Array.from({ length: 24 }, (_, i) => playWheel(h.ctx, PLAYER, `g-${i}`)));
    const ids = answers.map((a) => a.spin.id);
    expect(new Set(ids).size).toBe(24);
    for (const a of answers) {
      const stored = (await h.ctx.store.get<{ result: string; points_after: number }>("SELECT result, points_after FROM messenger_ledger WHERE id = ?", [
        a.ledger_entry_id,
      ]))!;
      const { replayed: _r, ledger_entry_id: _l, ...answer } = a;
      expect(JSON.parse(stored.result)).toEqual(answer);
      expect(stored.points_after).toBe(a.balances.points_balance);
      expect((await h.ctx.store.get<{ n: number }>("SELECT COUNT(*) AS n FROM messenger_spins WHERE id = ?", [a.spin.id]))!.n).toBe(1);
    }
    // The last to commit left the player's balances; every balance is the sum of the ledger.
    const sums = (await h.ctx.store.get<Record<string, number>>(
      "SELECT SUM(free_spin_delta) AS f, SUM(missile_delta) AS m, SUM(points_delta) AS p FROM messenger_ledger WHERE telegram_user_id = ?",
      [PLAYER],
    ))!;
    const now = await balancesNow();
    expect([Number(sums.f), Number(sums.m), Number(sums.p)]).toEqual([now.free_spin_balance, now.missile_balance, now.points_balance]);
  });
});
