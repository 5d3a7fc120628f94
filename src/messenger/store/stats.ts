import { placeholders, type Queryable } from "../../db/port";
import type { RowOf } from "../../db/rows";
import type { messengerDailyPlayers, messengerDailyStats } from "../tables";

// The game ledger's daily aggregates (messenger_daily_stats, messenger_daily_players): the only SQL that touches
// them. Written only by the fold (src/messenger/daily-stats.ts), which adds what it sums in TypeScript; read by the
// operators' analytics.

export type StatsRow = RowOf<typeof messengerDailyStats>;
type PlayersRow = RowOf<typeof messengerDailyPlayers>;

/** Rows per multi-row INSERT: far below either engine's limit on parameters (SQLite 32,766; PostgreSQL 65,535). */
const CHUNK = 200;

function chunks<T>(rows: T[]): T[][] {
  const out: T[][] = [];
  for (let i = 0; i < rows.length; i += CHUNK) out.push(rows.slice(i, i + CHUNK));
  return out;
}

const tuples = (n: number, width: number) => Array.from({ length: n }, () => `(${placeholders(width)})`).join(", ");

/** The summed columns of messenger_daily_stats, after its key (day, action, game_key). */
const SUMMED = [
  "entries",
  "free_spins_granted",
  "free_spins_spent",
  "missiles_granted",
  "missiles_spent",
  "points_granted",
  "points_spent",
] as const satisfies ReadonlyArray<keyof StatsRow>;

/** Adds the sums to the day's rows (made on first use). Keys are unique within `rows`: one upsert per key. */
export async function addDailyStats(t: Queryable, rows: StatsRow[]): Promise<void> {
  for (const part of chunks(rows)) {
    await t.run(
      `INSERT INTO messenger_daily_stats (day, action, game_key, ${SUMMED.join(", ")})
       VALUES ${tuples(part.length, 3 + SUMMED.length)}
       ON CONFLICT (day, action, game_key) DO UPDATE SET ${SUMMED.map((c) => `${c} = messenger_daily_stats.${c} + excluded.${c}`).join(", ")}`,
      part.flatMap((r) => [r.day, r.action, r.game_key, ...SUMMED.map((c) => r[c])]),
    );
  }
}

/** Adds entries per day, game and player. Keys are unique within `rows`. */
export async function addDailyPlayers(t: Queryable, rows: PlayersRow[]): Promise<void> {
  for (const part of chunks(rows)) {
    await t.run(
      `INSERT INTO messenger_daily_players (day, game_key, telegram_user_id, entries) VALUES ${tuples(part.length, 4)}
       ON CONFLICT (day, game_key, telegram_user_id) DO UPDATE SET entries = messenger_daily_players.entries + excluded.entries`,
      part.flatMap((r) => [r.day, r.game_key, r.telegram_user_id, r.entries]),
    );
  }
}

/** The aggregates of the days [from, to]: the primary key (day, action, game_key) serves the range. */
export const statsRows = (q: Queryable, from: string, to: string) =>
  q.all<StatsRow>("SELECT * FROM messenger_daily_stats WHERE day >= ? AND day <= ? ORDER BY day, action, game_key", [from, to]);

/** Distinct players of the days [from, to] in one game, sorted by id: the players window searches them by halves. */
export async function playerIdsBetween(q: Queryable, from: string, to: string, game: string): Promise<number[]> {
  const rows = await q.all<Pick<PlayersRow, "telegram_user_id">>(
    "SELECT DISTINCT telegram_user_id FROM messenger_daily_players WHERE day >= ? AND day <= ? AND game_key = ? ORDER BY telegram_user_id",
    [from, to, game],
  );
  return rows.map((r) => r.telegram_user_id);
}

/** One day's players in some games (a primary-key prefix: day, game_key); a player may come once per game. */
export async function playerIdsOfDay(q: Queryable, day: string, games: string[]): Promise<number[]> {
  const rows = await q.all<Pick<PlayersRow, "telegram_user_id">>(
    `SELECT telegram_user_id FROM messenger_daily_players WHERE day = ? AND game_key IN (${placeholders(games.length)})`,
    [day, ...games],
  );
  return rows.map((r) => r.telegram_user_id);
}

export const playersPerDayBetween = (q: Queryable, from: string, to: string, games: string[]) =>
  q.all<Pick<PlayersRow, "day"> & { n: number }>(
    `SELECT day, COUNT(DISTINCT telegram_user_id) AS n FROM messenger_daily_players WHERE day >= ? AND day <= ? AND game_key IN (${placeholders(games.length)})
     GROUP BY day`,
    [from, to, ...games],
  );

/** Per player (of a page) and game: entries, active days and the last one (messenger_daily_players_player_idx). */
export const activityOfPlayers = (q: Queryable, ids: number[]) =>
  q.all<Pick<PlayersRow, "telegram_user_id" | "game_key" | "entries"> & { days: number; last_day: string }>(
    `SELECT telegram_user_id, game_key, SUM(entries) AS entries, COUNT(*) AS days, MAX(day) AS last_day FROM messenger_daily_players
     WHERE telegram_user_id IN (${placeholders(ids.length)}) GROUP BY telegram_user_id, game_key`,
    ids,
  );
