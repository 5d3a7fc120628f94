// The game ledger's daily aggregates (messenger_daily_stats, messenger_daily_players). The ledger is the record;
// the aggregates are folded in from it, past a watermark (messenger_stats_fold), in one transaction per fold:
// by the messenger-stats-fold job every two seconds, and by every operator read of the aggregates first, so an
// answer always counts every committed play. Written in each play's own transaction, the three upserts cost
// ~58 µs over an empty transaction's ~11 µs in a loop (session 5); folded in batches they cost the plays nothing.
//
// Ledger ids are AUTOINCREMENT and SQLite has one writer at a time, so ids commit in order and `id > watermark`
// is exactly the unfolded rows. (A port to a database with concurrent writers needs a different watermark.)
// Days are UTC dates (YYYY-MM-DD), the prefix of the ledger row's created_at.
import type { Database } from "bun:sqlite";

/** At most this many ledger rows per fold transaction; a longer backlog is folded in several. */
export const FOLD_BATCH_ROWS = 50_000;

const watermarkOf = (db: Database) => db.query<{ ledger_id: number }, []>("SELECT ledger_id FROM messenger_stats_fold WHERE id = 1").get()?.ledger_id ?? 0;

const lastLedgerId = (db: Database) => db.query<{ id: number | null }, []>("SELECT max(id) AS id FROM messenger_ledger").get()?.id ?? 0;

/** Folds at most `maxRows` unfolded ledger rows into the aggregates, in one immediate transaction; how many. */
function foldBatch(db: Database, nowIso: string, maxRows: number): number {
  return db
    .transaction(() => {
      const from = watermarkOf(db);
      const top = db
        .query<{ id: number | null; n: number }, [number, number]>(
          "SELECT max(id) AS id, count(*) AS n FROM (SELECT id FROM messenger_ledger WHERE id > ? ORDER BY id LIMIT ?)",
        )
        .get(from, maxRows);
      if (!top || top.id === null) return 0;
      db.query(
        `INSERT INTO messenger_daily_stats (day, action, game_key, entries, free_spins_granted, free_spins_spent, missiles_granted, missiles_spent, points_granted, points_spent)
         SELECT substr(created_at, 1, 10), action, coalesce(game_key, ''), count(*),
           sum(CASE WHEN free_spin_delta > 0 THEN free_spin_delta ELSE 0 END), sum(CASE WHEN free_spin_delta < 0 THEN -free_spin_delta ELSE 0 END),
           sum(CASE WHEN missile_delta > 0 THEN missile_delta ELSE 0 END), sum(CASE WHEN missile_delta < 0 THEN -missile_delta ELSE 0 END),
           sum(CASE WHEN points_delta > 0 THEN points_delta ELSE 0 END), sum(CASE WHEN points_delta < 0 THEN -points_delta ELSE 0 END)
         FROM messenger_ledger WHERE id > ?1 AND id <= ?2 GROUP BY 1, 2, 3
         ON CONFLICT (day, action, game_key) DO UPDATE SET entries = entries + excluded.entries,
           free_spins_granted = free_spins_granted + excluded.free_spins_granted, free_spins_spent = free_spins_spent + excluded.free_spins_spent,
           missiles_granted = missiles_granted + excluded.missiles_granted, missiles_spent = missiles_spent + excluded.missiles_spent,
           points_granted = points_granted + excluded.points_granted, points_spent = points_spent + excluded.points_spent`,
      ).run(from, top.id);
      // Per game, and "" for every action (games or not).
      db.query(
        `INSERT INTO messenger_daily_players (day, game_key, telegram_user_id, entries)
         SELECT substr(created_at, 1, 10), game_key, telegram_user_id, count(*) FROM messenger_ledger
         WHERE id > ?1 AND id <= ?2 AND game_key IS NOT NULL GROUP BY 1, 2, 3
         ON CONFLICT (day, game_key, telegram_user_id) DO UPDATE SET entries = entries + excluded.entries`,
      ).run(from, top.id);
      db.query(
        `INSERT INTO messenger_daily_players (day, game_key, telegram_user_id, entries)
         SELECT substr(created_at, 1, 10), '', telegram_user_id, count(*) FROM messenger_ledger WHERE id > ?1 AND id <= ?2 GROUP BY 1, 3
         ON CONFLICT (day, game_key, telegram_user_id) DO UPDATE SET entries = entries + excluded.entries`,
      ).run(from, top.id);
      db.query(
        "INSERT INTO messenger_stats_fold (id, ledger_id, folded_at) VALUES (1, ?1, ?2) ON CONFLICT (id) DO UPDATE SET ledger_id = excluded.ledger_id, folded_at = excluded.folded_at",
      ).run(top.id, nowIso);
      return top.n;
    })
    .immediate();
}

/**
 * Brings the aggregates up to the last committed ledger row (in batches of FOLD_BATCH_ROWS). Nothing to fold
 * costs two indexed reads and no write lock. Returns how many ledger rows were folded.
 */
export function foldLedger(db: Database, nowIso: string, maxRows = FOLD_BATCH_ROWS): number {
  let folded = 0;
  while (lastLedgerId(db) > watermarkOf(db)) {
    const n = foldBatch(db, nowIso, maxRows);
    if (n === 0) break;
    folded += n;
  }
  return folded;
}
