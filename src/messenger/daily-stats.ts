// The game ledger's daily aggregates (messenger_daily_stats, messenger_daily_players), kept in the ledger row's
// own transaction by applyAction: the operators' overview and analytics sum a few rows per day and action instead
// of scanning the ledger. Days are UTC dates (YYYY-MM-DD), the prefix of the ledger row's created_at.
import type { Database } from "bun:sqlite";

const pos = (n: number) => (n > 0 ? n : 0);
const neg = (n: number) => (n < 0 ? -n : 0);

/** Adds one ledger row to its day's aggregates: the action's totals, and the player's activity (per game and overall). */
export function recordDailyStats(
  db: Database,
  row: { createdAt: string; action: string; gameKey: string | null; telegramUserId: number; deltas: { freeSpins: number; missiles: number; points: number } },
): void {
  const day = row.createdAt.slice(0, 10);
  const game = row.gameKey ?? "";
  const d = row.deltas;
  db.query(
    `INSERT INTO messenger_daily_stats (day, action, game_key, entries, free_spins_granted, free_spins_spent, missiles_granted, missiles_spent, points_granted, points_spent)
     VALUES (?1, ?2, ?3, 1, ?4, ?5, ?6, ?7, ?8, ?9)
     ON CONFLICT (day, action, game_key) DO UPDATE SET entries = entries + 1,
       free_spins_granted = free_spins_granted + excluded.free_spins_granted, free_spins_spent = free_spins_spent + excluded.free_spins_spent,
       missiles_granted = missiles_granted + excluded.missiles_granted, missiles_spent = missiles_spent + excluded.missiles_spent,
       points_granted = points_granted + excluded.points_granted, points_spent = points_spent + excluded.points_spent`,
  ).run(day, row.action, game, pos(d.freeSpins), neg(d.freeSpins), pos(d.missiles), neg(d.missiles), pos(d.points), neg(d.points));
  const player = db.query(
    `INSERT INTO messenger_daily_players (day, game_key, telegram_user_id, entries) VALUES (?1, ?2, ?3, 1)
     ON CONFLICT (day, game_key, telegram_user_id) DO UPDATE SET entries = entries + 1`,
  );
  player.run(day, "", row.telegramUserId);
  if (game !== "") player.run(day, game, row.telegramUserId);
}
