// The game ledger's daily aggregates are folded in from the ledger past a watermark (src/messenger/daily-stats.ts):
// in batches, exactly once per row, and equal to a GROUP BY over the ledger whatever the batch size.
import { afterEach, expect, test } from "bun:test";
import { FOLD_BATCH_ROWS, foldLedger } from "../../src/messenger/daily-stats";
import { purchaseItem } from "../../src/messenger/service";
import { playWheel } from "../../src/messenger/games/wheel";
import type { TestApp } from "../support/app";
import { createMessengerApp } from "./support";

let h: TestApp;
afterEach(() => h?.close());

const stats = () => h.ctx.db.sqlite.query("SELECT * FROM messenger_daily_stats ORDER BY day, action, game_key").all();
const players = () => h.ctx.db.sqlite.query("SELECT * FROM messenger_daily_players ORDER BY day, game_key, telegram_user_id").all();
const expectedStats = () =>
  h.ctx.db.sqlite
    .query(
      `SELECT substr(created_at, 1, 10) AS day, action, coalesce(game_key, '') AS game_key, count(*) AS entries,
         sum(CASE WHEN free_spin_delta > 0 THEN free_spin_delta ELSE 0 END) AS free_spins_granted,
         sum(CASE WHEN free_spin_delta < 0 THEN -free_spin_delta ELSE 0 END) AS free_spins_spent,
         sum(CASE WHEN missile_delta > 0 THEN missile_delta ELSE 0 END) AS missiles_granted,
         sum(CASE WHEN missile_delta < 0 THEN -missile_delta ELSE 0 END) AS missiles_spent,
         sum(CASE WHEN points_delta > 0 THEN points_delta ELSE 0 END) AS points_granted,
         sum(CASE WHEN points_delta < 0 THEN -points_delta ELSE 0 END) AS points_spent
       FROM messenger_ledger GROUP BY 1, 2, 3 ORDER BY 1, 2, 3`,
    )
    .all();
const expectedPlayers = () =>
  h.ctx.db.sqlite
    .query(
      `SELECT day, game_key, telegram_user_id, entries FROM (
         SELECT substr(created_at, 1, 10) AS day, game_key, telegram_user_id, count(*) AS entries FROM messenger_ledger WHERE game_key IS NOT NULL GROUP BY 1, 2, 3
         UNION ALL SELECT substr(created_at, 1, 10), '', telegram_user_id, count(*) FROM messenger_ledger GROUP BY 1, 3)
       ORDER BY day, game_key, telegram_user_id`,
    )
    .all();

test("plays leave the aggregates alone; a fold in small batches counts every ledger row once, across days", () => {
  h = createMessengerApp();
  const db = h.ctx.db.sqlite;
  for (const id of [11, 12, 13]) {
    db.query("INSERT INTO messenger_players (telegram_user_id, created_at, last_seen_at, free_spin_balance, points_balance) VALUES (?, ?, ?, 50, 500)").run(
      id,
      h.clock.now().toISOString(),
      h.clock.now().toISOString(),
    );
  }
  for (let day = 0; day < 3; day++) {
    for (const id of [11, 12, 13]) for (let i = 0; i <= id - 11 + day; i++) playWheel(h.ctx, id, `d${day}-p${id}-${i}`);
    purchaseItem(h.ctx, 12, { request_id: `buy-${day}`, item_key: "missile", quantity: 2 });
    h.clock.advance(24 * 3_600_000);
  }
  const ledgerRows = (db.query("SELECT count(*) AS n FROM messenger_ledger").get() as { n: number }).n;
  expect(ledgerRows).toBe(3 * 3 + (0 + 1 + 2) * 3 + 3 * 3 + 3); // plays per day: 1+2+3, 2+3+4, 3+4+5; 3 purchases
  expect(stats()).toEqual([]); // nothing folded yet: the job and the operator reads fold
  expect(foldLedger(db, h.clock.now().toISOString(), 4)).toBe(ledgerRows);
  expect(stats()).toEqual(expectedStats());
  expect(players()).toEqual(expectedPlayers());
  expect(new Set((stats() as Array<{ day: string }>).map((r) => r.day)).size).toBe(3);
  // Folding again changes nothing; new rows are folded on top.
  expect(foldLedger(db, h.clock.now().toISOString())).toBe(0);
  playWheel(h.ctx, 11, "late-play");
  expect(foldLedger(db, h.clock.now().toISOString())).toBe(1);
  expect(stats()).toEqual(expectedStats());
  expect(players()).toEqual(expectedPlayers());
  const mark = db.query("SELECT ledger_id FROM messenger_stats_fold WHERE id = 1").get() as { ledger_id: number };
  expect(mark.ledger_id).toBe((db.query("SELECT max(id) AS id FROM messenger_ledger").get() as { id: number }).id);
  expect(FOLD_BATCH_ROWS).toBeGreaterThan(1000);
});

test("the operators' overview counts a play committed a moment before it is read (a fold runs first)", async () => {
  h = createMessengerApp();
  const db = h.ctx.db.sqlite;
  db.query("INSERT INTO messenger_players (telegram_user_id, created_at, last_seen_at, free_spin_balance) VALUES (21, ?, ?, 5)").run(
    h.clock.now().toISOString(),
    h.clock.now().toISOString(),
  );
  playWheel(h.ctx, 21, "just-now");
  const { createAdminToken } = await import("../support/partner");
  const token = await createAdminToken(h);
  const res = await h.json("/api/messenger/admin/games/overview?days=1", { headers: { authorization: `Bearer ${token}` } });
  expect(res.status).toBe(200);
  expect(JSON.stringify(res.body)).toContain('"plays":1');
  expect(stats()).toEqual(expectedStats());
});
