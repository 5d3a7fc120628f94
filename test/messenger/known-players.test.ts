// The mini-app routes that need only the caller's id (`messengerId: true`: the game actions, missions, wallet
// proofs) make or refresh the player's row as every verified route does, and skip reading it while this instance
// knows the stored profile unchanged (src/messenger/players.ts, KnownPlayers): a play sends no statement before
// its transaction. What the row holds must be what ensurePlayer would have left, on one instance or two.
import { afterEach, describe, expect, test } from "bun:test";
import { flushCounts } from "../../src/messenger/counters";
import type { InitDataIdentity } from "../../src/messenger/init-data";
import { KnownPlayers, type PlayerRow } from "../../src/messenger/players";
import type { TestApp } from "../support/app";
import { countStatements } from "./round-trip-counter";
import { type InitUser, initDataFor, openMessengerApp, siblingOf, tmaPost } from "./support";

let h: TestApp;
let sibling: TestApp | undefined;
afterEach(async () => {
  await sibling?.close();
  sibling = undefined;
  await h?.close();
});

const PLAYER = 5151;
let seq = 0;
const post = (app: TestApp, path: string, user: InitUser, body: Record<string, unknown> = {}) => app.json(path, tmaPost(initDataFor(app, user), body));
/** A mission catalog read: a `messengerId` route that writes nothing of its own. */
const missions = (app: TestApp, user: InitUser) => post(app, "/api/messenger/missions/catalog", user);
const row = async () => (await h.ctx.store.get<PlayerRow>("SELECT * FROM messenger_players WHERE telegram_user_id = ?", [PLAYER]))!;

/** Statements sent outside any transaction while `act` runs (the play's hourly counter flushed first). */
async function outsideDuring(act: () => Promise<void>): Promise<number> {
  await flushCounts(h.ctx);
  const counter = countStatements(h.ctx.store);
  try {
    await act();
    return counter.outside;
  } finally {
    counter.restore();
  }
}

describe("players of the id-only routes", () => {
  test("a first contact on such a route makes the player with the init data's profile", async () => {
    h = await openMessengerApp();
    const r = await post(
      h,
      "/api/messenger/games/spin-wheel/play",
      { id: PLAYER, username: "ada", language_code: "en", is_premium: true },
      { request_id: "k-1" },
    );
    expect(r.status).toBe(200);
    const p = await row();
    expect([p.username, p.first_name, p.language_code, p.is_premium]).toEqual(["ada", "Ada", "en", 1]);
    expect(p.created_at).toBe(h.clock.now().toISOString());
  });

  test("a known, unchanged player costs no statement before the route's own; a play then only its counter", async () => {
    h = await openMessengerApp();
    sibling = await siblingOf(h);
    const ada = { id: PLAYER, username: "ada" };
    expect((await post(h, "/api/messenger/init/verify", ada)).status).toBe(200); // a row-reading route remembers too
    // The sibling has never seen the player: the identity step reads the row there, not here.
    const here = await outsideDuring(async () => expect((await missions(h, ada)).status).toBe(200));
    const counter = countStatements(sibling.ctx.store);
    try {
      expect((await missions(sibling, ada)).status).toBe(200);
      expect(counter.outside).toBe(here + 1);
    } finally {
      counter.restore();
    }
    // A second play (the first loads the games configuration and makes the seed pair; spins in hand for both).
    await h.ctx.store.run("UPDATE messenger_players SET free_spin_balance = 5 WHERE telegram_user_id = ?", [PLAYER]);
    expect((await post(h, "/api/messenger/games/spin-wheel/play", ada, { request_id: `k-${++seq}` })).status).toBe(200);
    const play = await outsideDuring(async () => {
      expect((await post(h, "/api/messenger/games/spin-wheel/play", ada, { request_id: `k-${++seq}` })).status).toBe(200);
      await flushCounts(h.ctx);
    });
    expect(play).toBe(1); // the hourly counter, behind the commit
  });

  test("a changed profile is stored at once, on the next request of such a route", async () => {
    h = await openMessengerApp();
    expect((await missions(h, { id: PLAYER, username: "ada" })).status).toBe(200);
    expect((await missions(h, { id: PLAYER, username: "ada_l", first_name: "Augusta" })).status).toBe(200);
    const p = await row();
    expect([p.username, p.first_name]).toEqual(["ada_l", "Augusta"]);
  });

  test("last_seen_at is refreshed once ten minutes have passed, not before", async () => {
    h = await openMessengerApp();
    const ada = { id: PLAYER, username: "ada" };
    expect((await missions(h, ada)).status).toBe(200);
    const first = (await row()).last_seen_at;
    h.clock.advanceSeconds(9 * 60);
    expect((await missions(h, ada)).status).toBe(200);
    expect((await row()).last_seen_at).toBe(first);
    h.clock.advanceSeconds(2 * 60);
    expect((await missions(h, ada)).status).toBe(200);
    expect((await row()).last_seen_at).toBe(h.clock.now().toISOString());
  });

  test("a profile another instance stored is taken as stored: this one reads the row again, and writes only on a difference", async () => {
    h = await openMessengerApp();
    sibling = await siblingOf(h);
    expect((await missions(h, { id: PLAYER, username: "ada" })).status).toBe(200);
    expect((await missions(sibling, { id: PLAYER, username: "ada_l" })).status).toBe(200);
    expect((await row()).username).toBe("ada_l");
    // The first instance remembers "ada": the new name differs from it, so it makes ensurePlayer's read, finds the
    // row as the sibling left it, and writes nothing.
    const before = await row();
    expect((await missions(h, { id: PLAYER, username: "ada_l" })).status).toBe(200);
    expect(await row()).toEqual(before);
  });

  test("the memory is bounded: past its cap the player remembered longest ago is forgotten and read again", async () => {
    h = await openMessengerApp();
    const known = new KnownPlayers(2);
    const now = h.clock.now();
    const identity = (id: number): InitDataIdentity => ({
      telegramUserId: id,
      username: `p${id}`,
      firstName: "Ada",
      languageCode: null,
      isPremium: false,
      authDate: Math.floor(now.getTime() / 1000),
      startParam: null,
      scheme: "hmac",
    });
    for (const id of [1, 2, 3]) await known.ensure(h.ctx, identity(id), now);
    expect(known.size).toBe(2);
    const reads = async (id: number) => {
      const counter = countStatements(h.ctx.store);
      try {
        await known.ensure(h.ctx, identity(id), now);
        return counter.outside;
      } finally {
        counter.restore();
      }
    };
    expect(await reads(3)).toBe(0);
    expect(await reads(2)).toBe(0);
    expect(await reads(1)).toBe(1); // forgotten: read (found unchanged, nothing written), and remembered again
    expect(await reads(2)).toBe(1); // 2 was remembered longest ago when 1 came back
    expect(await reads(1)).toBe(0);
    expect(await reads(3)).toBe(1); // and then 3
  });
});
