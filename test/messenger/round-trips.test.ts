// Issue 49, "PostgreSQL at speed": what one spin-wheel play costs the database — its statements (both engines), and
// the round trips they take on PostgreSQL, where statements issued together in a transaction share one: counted
// here at the transaction's handle (round-trip-counter.ts) and by the engine itself (store.health.counts). The
// play's transaction is issued in three dependent steps (the ledger, src/messenger/ledger.ts, and the wheel's effect):
//   1. the player's row lock (the row made if missing: one upsert) | the request id's claim | the active seed's next
//      nonce (read and taken: one UPDATE; the wheel's early statement, rolled back with a replay or a refusal)
//   2. the last free spin's time (when the daily one pays) | the spin | mission progress | the balances
//   3. the ledger row's outcome
// On PostgreSQL the nonce's statement also takes the spin's id from its sequence, so the answer is known before step
// 2 is answered: the spin, the mission progress, the balances' move and the ledger row's outcome are one statement
// there (data-modifying CTEs), sent in step 2 with the COMMIT — two round trips, three statements fewer.
// Before, each statement waited for the one before it: 11 statements in 11 round trips (10 with a spin in hand),
// plus BEGIN and COMMIT, the hourly counter among them. Outside the transaction the hourly counter is written just
// after the commit (src/messenger/counters.ts); the identity step reads the player only when this instance does not
// know it unchanged (KnownPlayers, src/messenger/players.ts), so a steady play sends one statement outside.
import { afterEach, describe, expect, test } from "bun:test";
import { inOrder } from "../../src/db/in-order";
import { flushCounts } from "../../src/messenger/counters";
import { applyAction } from "../../src/messenger/ledger";
import type { TestApp } from "../support/app";
import { describeOn } from "../support/skipped";
import { countStatements, type StatementCounter } from "./round-trip-counter";
import { initDataFor, openMessengerApp, tmaPost } from "./support";

const FILE = "test/messenger/round-trips.test.ts";

let h: TestApp;
let counter: StatementCounter | undefined;
afterEach(async () => {
  counter?.restore();
  counter = undefined;
  await h?.close();
});

const PLAYER = 4949;
let seq = 0;
const rid = () => `rt-${++seq}`;
const post = (path: string, body: Record<string, unknown> = {}) => h.json(path, tmaPost(initDataFor(h, { id: PLAYER, username: "ada" }), body));
const play = (requestId: string) => post("/api/messenger/games/spin-wheel/play", { request_id: requestId });

/** The engine's own counters (PostgreSQL counts; SQLite leaves them at 0). */
const engineCounts = () => ({ statements: h.ctx.store.health.counts.statements, roundTrips: h.ctx.store.health.counts.roundTrips });

/** Runs `act` with both counts on: the handle's, per transaction, and the engine's difference over it. */
async function counted(act: () => Promise<void>) {
  counter = countStatements(h.ctx.store);
  const before = engineCounts();
  await act();
  await flushCounts(h.ctx); // the hourly counter, written behind the play's commit
  const after = engineCounts();
  const c = counter;
  counter.restore();
  counter = undefined;
  return {
    transactions: c.transactions,
    outside: c.outside,
    engine: { statements: after.statements - before.statements, roundTrips: after.roundTrips - before.roundTrips },
  };
}

/** A steady play: the player, the seed and the games configuration exist (the status read makes them). */
async function steadyPlay(paidWith: "daily_free_spin" | "free_spin_balance") {
  h = await openMessengerApp();
  expect((await post("/api/messenger/games/spin-wheel/status")).status).toBe(200);
  if (paidWith === "free_spin_balance") {
    expect((await play(rid())).status).toBe(200);
    await applyAction(h.ctx, { telegramUserId: PLAYER, requestId: rid(), action: "test.credit", inputs: {}, gameKey: null }, async () => ({
      deltas: { freeSpins: 3, missiles: 0, points: 0 },
      result: {},
    }));
  }
  return counted(async () => {
    const r = await play(rid());
    expect(r.status).toBe(200);
    expect(r.body.spin.paid_with).toBe(paidWith);
  });
}

async function replayedPlay() {
  h = await openMessengerApp();
  const id = rid();
  const first = await play(id);
  expect(first.status).toBe(200);
  return counted(async () => {
    expect((await play(id)).body).toEqual({ ...first.body, replayed: true });
  });
}

/** A first play of a player who never read the status: the play makes the seed pair. */
async function firstPlay() {
  h = await openMessengerApp();
  return counted(async () => {
    const r = await play(rid());
    expect(r.status).toBe(200);
    expect(r.body.spin.fairness.nonce).toBe(0);
  });
}

/** A play with no spin available (the daily one taken, none in hand): refused after the lock and the claim. */
async function refusedPlay() {
  h = await openMessengerApp();
  expect((await post("/api/messenger/games/spin-wheel/status")).status).toBe(200);
  // The first spin pays the daily free spin; credit nothing, and take back any spin it won, so none is left.
  const first = await play(rid());
  expect(first.status).toBe(200);
  const won = first.body.balances.free_spin_balance as number;
  if (won > 0) await h.ctx.store.run("UPDATE messenger_players SET free_spin_balance = 0 WHERE telegram_user_id = ?", [PLAYER]);
  return counted(async () => {
    const r = await play(rid());
    expect([r.status, r.body.error]).toEqual([409, "game_cooldown"]);
  });
}

const statementsOf = (c: { transactions: Array<{ statements: number }> }) => c.transactions.map((t) => t.statements);

describe("statements of a spin-wheel play", () => {
  /** The spin, the mission progress, the move and the ledger row's outcome: four statements on SQLite, one on PostgreSQL. */
  const tail = () => (h.ctx.store.dialect === "postgres" ? 1 : 4);

  test("paid with the daily free spin: 7 in its transaction on SQLite, 4 on PostgreSQL (11 before issue 49; the spin's time is written with the move), 1 outside (the counter; the player is known: KnownPlayers)", async () => {
    const c = await steadyPlay("daily_free_spin");
    expect(statementsOf(c)).toEqual([3 + tail()]);
    expect(c.outside).toBe(1);
  });

  test("paid with a spin in hand: 7 on SQLite, 4 on PostgreSQL (10 before)", async () => {
    expect(statementsOf(await steadyPlay("free_spin_balance"))).toEqual([3 + tail()]);
  });

  test("a replayed request id: the lock, the claim, the nonce (rolled back), the stored answer — 4 (4 before)", async () => {
    expect(statementsOf(await replayedPlay())).toEqual([4]);
  });

  test("a first play that makes the player's seed pair: 9 on SQLite, 6 on PostgreSQL (12 before): the pair and its nonce, then as any play", async () => {
    expect(statementsOf(await firstPlay())).toEqual([3 + 2 + tail()]);
  });

  test("a refused play: the lock, the claim and the nonce, rolled back — 3 (3 before)", async () => {
    expect(statementsOf(await refusedPlay())).toEqual([3]);
  });
});

describeOn("postgres", FILE)("round trips of a spin-wheel play on PostgreSQL", () => {
  const roundTripsOf = (c: { transactions: Array<{ roundTrips: number }> }) => c.transactions.map((t) => t.roundTrips);

  test("paid with the daily free spin: 2 round trips in its transaction, the COMMIT with the last (11 before issue 49); 3 in all by the engine's count", async () => {
    const c = await steadyPlay("daily_free_spin");
    expect(roundTripsOf(c)).toEqual([2]);
    // The transaction's statements, BEGIN riding with the first and its COMMIT with the last
    // (TxOptions.lastAnsweredWithCommit); the counter. No identity read: the player is known (KnownPlayers).
    expect(c.engine).toEqual({ statements: 1 + 4 + 1 + 1, roundTrips: 2 + 1 });
  });

  test("paid with a spin in hand: 2 round trips (10 before)", async () => {
    const c = await steadyPlay("free_spin_balance");
    expect(roundTripsOf(c)).toEqual([2]);
    expect(c.engine).toEqual({ statements: 1 + 4 + 1 + 1, roundTrips: 2 + 1 });
  });

  test("a replayed request id: 2 round trips (4 before)", async () => {
    expect(roundTripsOf(await replayedPlay())).toEqual([2]);
  });

  test("a first play that makes the seed pair: 4 round trips (12 before)", async () => {
    expect(roundTripsOf(await firstPlay())).toEqual([4]);
  });

  test("a refused play: 1 round trip (3 before)", async () => {
    expect(roundTripsOf(await refusedPlay())).toEqual([1]);
  });
});

describe("inOrder (statements issued together)", () => {
  const later = <T>(ms: number, v: T, fail = false) =>
    new Promise<T>((resolve, reject) => setTimeout(() => (fail ? reject(new Error(String(v))) : resolve(v)), ms));

  test("answers in call order, whatever settles first; a value or undefined stands for a statement not issued", async () => {
    expect(await inOrder(later(20, "a"), later(1, "b"), undefined, 3)).toEqual(["a", "b", undefined, 3]);
  });

  test("the first failure in call order wins, even when a later one fails first; nothing is left unsettled", async () => {
    const last = later(30, "c");
    let settled = false;
    void last.then(() => (settled = true));
    await expect(inOrder(later(20, "a", true), later(1, "b", true), last)).rejects.toThrow("a");
    expect(settled).toBe(true);
  });
});
