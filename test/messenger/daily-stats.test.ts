// The game ledger's daily aggregates are folded in from the ledger (src/messenger/daily-stats.ts): in batches,
// exactly once per row — a flag per row, never a watermark over ids — and equal to a GROUP BY over the ledger
// whatever the batch size, or the order in which ledger ids commit. On SQLite and (HERALD_TEST_ENGINE=postgres)
// PostgreSQL.
import { afterEach, expect, test } from "bun:test";
import { FOLD_BATCH_ROWS, foldLedger } from "../../src/messenger/daily-stats";
import { playWheel } from "../../src/messenger/games/wheel";
import { purchaseItem } from "../../src/messenger/service";
import type { TestApp } from "../support/app";
import { openMessengerApp } from "./support";
import { testOn } from "../support/skipped";

let h: TestApp;
afterEach(async () => {
  await h?.close();
});

const stats = () => h.ctx.store.all("SELECT * FROM messenger_daily_stats ORDER BY day, action, game_key");
const players = () => h.ctx.store.all("SELECT * FROM messenger_daily_players ORDER BY day, game_key, telegram_user_id");
const expectedStats = () =>
  h.ctx.store.all(
    `SELECT substr(created_at, 1, 10) AS day, action, coalesce(game_key, '') AS game_key, count(*) AS entries,
       sum(CASE WHEN free_spin_delta > 0 THEN free_spin_delta ELSE 0 END) AS free_spins_granted,
       sum(CASE WHEN free_spin_delta < 0 THEN -free_spin_delta ELSE 0 END) AS free_spins_spent,
       sum(CASE WHEN missile_delta > 0 THEN missile_delta ELSE 0 END) AS missiles_granted,
       sum(CASE WHEN missile_delta < 0 THEN -missile_delta ELSE 0 END) AS missiles_spent,
       sum(CASE WHEN points_delta > 0 THEN points_delta ELSE 0 END) AS points_granted,
       sum(CASE WHEN points_delta < 0 THEN -points_delta ELSE 0 END) AS points_spent
     FROM messenger_ledger GROUP BY substr(created_at, 1, 10), action, coalesce(game_key, '')
     ORDER BY substr(created_at, 1, 10), action, coalesce(game_key, '')`,
  );
const expectedPlayers = () =>
  h.ctx.store.all(
    `SELECT day, game_key, telegram_user_id, entries FROM (
       SELECT substr(created_at, 1, 10) AS day, game_key, telegram_user_id, count(*) AS entries FROM messenger_ledger WHERE game_key IS NOT NULL
         GROUP BY substr(created_at, 1, 10), game_key, telegram_user_id
       UNION ALL SELECT substr(created_at, 1, 10), '', telegram_user_id, count(*) FROM messenger_ledger GROUP BY substr(created_at, 1, 10), telegram_user_id) e
     ORDER BY day, game_key, telegram_user_id`,
  );
const unfolded = async () => (await h.ctx.store.get<{ n: number }>("SELECT count(*) AS n FROM messenger_ledger WHERE folded = 0"))!.n;

async function seedPlayer(id: number, freeSpins: number, points: number) {
  const at = h.clock.now().toISOString();
  await h.ctx.store.run(
    "INSERT INTO messenger_players (telegram_user_id, created_at, last_seen_at, free_spin_balance, points_balance) VALUES (?, ?, ?, ?, ?)",
    [id, at, at, freeSpins, points],
  );
}

test("plays leave the aggregates alone; a fold in small batches counts every ledger row once, across days", async () => {
  h = await openMessengerApp();
  for (const id of [11, 12, 13]) await seedPlayer(id, 50, 500);
  for (let day = 0; day < 3; day++) {
    for (const id of [11, 12, 13]) for (let i = 0; i <= id - 11 + day; i++) await playWheel(h.ctx, id, `d${day}-p${id}-${i}`);
    await purchaseItem(h.ctx, 12, { request_id: `buy-${day}`, item_key: "missile", quantity: 2 });
    h.clock.advance(24 * 3_600_000);
  }
  const ledgerRows = (await h.ctx.store.get<{ n: number }>("SELECT count(*) AS n FROM messenger_ledger"))!.n;
  expect(ledgerRows).toBe(3 * 3 + (0 + 1 + 2) * 3 + 3 * 3 + 3); // plays per day: 1+2+3, 2+3+4, 3+4+5; 3 purchases
  expect(await stats()).toEqual([]); // nothing folded yet: the job and the operator reads fold
  expect(await unfolded()).toBe(ledgerRows);
  expect(await foldLedger(h.ctx, 4)).toBe(ledgerRows);
  expect(await stats()).toEqual(await expectedStats());
  expect(await players()).toEqual(await expectedPlayers());
  expect(new Set((await stats()).map((r) => r.day)).size).toBe(3);
  // Folding again changes nothing; new rows are folded on top.
  expect(await foldLedger(h.ctx)).toBe(0);
  await playWheel(h.ctx, 11, "late-play");
  expect(await foldLedger(h.ctx)).toBe(1);
  expect(await stats()).toEqual(await expectedStats());
  expect(await players()).toEqual(await expectedPlayers());
  // Every row is marked folded, by the fold that counted it.
  expect(await unfolded()).toBe(0);
  expect(FOLD_BATCH_ROWS).toBeGreaterThan(1000);
  // A fold transaction holds SQLite's one thread: 2,000 rows ~7 ms, 50,000 ~330 ms (issue 71).
  expect(FOLD_BATCH_ROWS).toBeLessThanOrEqual(2_000);
});

test("a row whose id is below rows already folded (ids committing out of order) is still counted, once", async () => {
  h = await openMessengerApp();
  await seedPlayer(31, 50, 500);
  for (let i = 0; i < 3; i++) await playWheel(h.ctx, 31, `first-${i}`);
  const ids = (await h.ctx.store.all<{ id: number }>("SELECT id FROM messenger_ledger ORDER BY id")).map((r) => r.id);
  expect(await foldLedger(h.ctx)).toBe(3);
  // A ledger row with an id BELOW every folded one appears only now: on PostgreSQL an id is drawn at insert, and a
  // slower transaction commits after faster ones with higher ids. Made here on either engine with an explicit id
  // (ids start at 1, so this one is 0).
  const late = Math.min(...ids) - 1;
  await h.ctx.store.run(
    `INSERT INTO messenger_ledger (id, telegram_user_id, request_id, action, fingerprint, free_spin_delta, missile_delta, points_delta,
       free_spin_after, missile_after, points_after, game_key, result, created_at)
     VALUES (?, 31, 'late-commit', 'spin_wheel.play', 'x', 0, 0, 10, 0, 0, 0, 'spin_wheel', '{}', ?)`,
    [late, h.clock.now().toISOString()],
  );
  expect(await foldLedger(h.ctx)).toBe(1);
  expect(await foldLedger(h.ctx)).toBe(0);
  expect(await stats()).toEqual(await expectedStats());
  expect(await players()).toEqual(await expectedPlayers());
  const spin = (await stats()).find((r) => r.action === "spin_wheel.play")!;
  expect(spin.entries).toBe(4);
});

// SQLite has one writer: its ids commit in order.
testOn("postgres", "test/messenger/daily-stats.test.ts")(
  "on PostgreSQL, a row committed after a fold ran past its id is counted by the next fold, once",
  async () => {
    h = await openMessengerApp();
    await seedPlayer(41, 50, 500);
    // Transaction A inserts a ledger row (its id drawn now) and stays open; B inserts and commits a higher id.
    let release!: () => void;
    const held = new Promise<void>((r) => {
      release = r;
    });
    let inserted!: () => void;
    const insertedA = new Promise<void>((r) => {
      inserted = r;
    });
    const insertRow = `INSERT INTO messenger_ledger (telegram_user_id, request_id, action, fingerprint, free_spin_delta, missile_delta, points_delta,
       free_spin_after, missile_after, points_after, game_key, result, created_at)
     VALUES (41, ?, 'spin_wheel.play', 'x', 0, 0, 10, 0, 0, 0, 'spin_wheel', '{}', ?) RETURNING id`;
    const at = h.clock.now().toISOString();
    // (A test may hold a PostgreSQL transaction open across an await; the service never does.)
    const a = h.ctx.store.tx(async (t) => {
      const row = await t.get<{ id: number }>(insertRow, ["slow-a", at]);
      inserted();
      await held;
      return row!.id;
    });
    await insertedA;
    const b = (await h.ctx.store.get<{ id: number }>(insertRow, ["fast-b", at]))!.id;
    expect(await foldLedger(h.ctx)).toBe(1); // B only: A is not committed
    release();
    const aId = await a;
    expect(aId).toBeLessThan(b);
    expect(await foldLedger(h.ctx)).toBe(1); // A now, though its id is below the one already folded
    expect(await foldLedger(h.ctx)).toBe(0);
    expect(await stats()).toEqual(await expectedStats());
    expect(await players()).toEqual(await expectedPlayers());
  },
);

test("the operators' overview counts a play committed a moment before it is read (a fold runs first)", async () => {
  h = await openMessengerApp();
  const at = h.clock.now().toISOString();
  await h.ctx.store.run("INSERT INTO messenger_players (telegram_user_id, created_at, last_seen_at, free_spin_balance) VALUES (21, ?, ?, 5)", [at, at]);
  await playWheel(h.ctx, 21, "just-now");
  const { createAdminToken } = await import("../support/partner");
  const token = await createAdminToken(h);
  const res = await h.json("/api/messenger/admin/games/overview?days=1", { headers: { authorization: `Bearer ${token}` } });
  expect(res.status).toBe(200);
  expect(JSON.stringify(res.body)).toContain('"plays":1');
  expect(await stats()).toEqual(await expectedStats());
});
