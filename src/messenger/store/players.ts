import { changed, countOf, type Queryable, type Statement } from "../../db/port";
import type { RowOf } from "../../db/rows";
import type { messengerPlayers } from "../tables";

// messenger_players: the only SQL that touches it (docs/design.md §8a). Balances move by ONE conditional statement
// (moveBalances), never a read, a check in TypeScript and a write: two instances spending one player's balance at
// once cannot take it below zero. Game actions also take the player's row lock first (lockPlayer), so a player's
// game state (seeds, grids, missions) changes one action at a time on every engine.

export type PlayerRow = RowOf<typeof messengerPlayers>;

export const playerById = (q: Queryable, telegramUserId: number) =>
  q.get<PlayerRow>("SELECT * FROM messenger_players WHERE telegram_user_id = ?", [telegramUserId]);

/** Makes the player's row if there is none (a first action, a bot /start). */
export async function createPlayerIfMissing(q: Queryable, telegramUserId: number, at: string): Promise<void> {
  await q.run("INSERT INTO messenger_players (telegram_user_id, created_at, last_seen_at) VALUES (?, ?, ?) ON CONFLICT (telegram_user_id) DO NOTHING", [
    telegramUserId,
    at,
    at,
  ]);
}

export interface Profile {
  telegramUserId: number;
  username: string | null;
  firstName: string | null;
  languageCode: string | null;
  isPremium: number;
}

/** A player first seen through verified init data, with its profile; null when another request made it first. */
export function insertPlayerProfile(q: Queryable, p: Profile, at: string) {
  return q.get<PlayerRow>(
    `INSERT INTO messenger_players (telegram_user_id, username, first_name, language_code, is_premium, created_at, last_seen_at)
     VALUES (?, ?, ?, ?, ?, ?, ?) ON CONFLICT (telegram_user_id) DO NOTHING RETURNING *`,
    [p.telegramUserId, p.username, p.firstName, p.languageCode, p.isPremium, at, at],
  );
}

export async function refreshProfile(q: Queryable, p: Profile, at: string): Promise<void> {
  await q.run("UPDATE messenger_players SET username = ?, first_name = ?, language_code = ?, is_premium = ?, last_seen_at = ? WHERE telegram_user_id = ?", [
    p.username,
    p.firstName,
    p.languageCode,
    p.isPremium,
    at,
    p.telegramUserId,
  ]);
}

/** What a bot /start tells of the user: kept where Telegram sent nothing. */
export async function mergeBotProfile(
  q: Queryable,
  telegramUserId: number,
  f: { username: string | null; firstName: string | null; languageCode: string | null },
) {
  await q.run(
    "UPDATE messenger_players SET username = COALESCE(?, username), first_name = COALESCE(?, first_name), language_code = COALESCE(?, language_code) WHERE telegram_user_id = ?",
    [f.username, f.firstName, f.languageCode, telegramUserId],
  );
}

/**
 * Takes the player's row lock for the rest of the transaction `t` and returns the row as it is now: a no-op
 * UPDATE locks the row on PostgreSQL (SELECT … FOR UPDATE is not SQLite), and SQLite's one writer serializes
 * already. A second action of the same player, from any instance, waits here until the first commits.
 */
export const lockPlayer = (t: Queryable, telegramUserId: number) =>
  t.get<PlayerRow>("UPDATE messenger_players SET last_seen_at = last_seen_at WHERE telegram_user_id = ? RETURNING *", [telegramUserId]);

/**
 * createPlayerIfMissing then lockPlayer in ONE statement, on both engines (on PostgreSQL each statement is
 * a round trip, and every game action starts here): a missing row is inserted (and so held by this transaction), an
 * existing one takes the same no-op update as lockPlayer — ON CONFLICT DO UPDATE locks the row on PostgreSQL, also
 * one committed by another transaction after this one began — and either way the row as it is now comes back.
 */
export const lockOrCreatePlayer = (t: Queryable, telegramUserId: number, at: string) =>
  t.get<PlayerRow>(
    `INSERT INTO messenger_players (telegram_user_id, created_at, last_seen_at) VALUES (?, ?, ?)
     ON CONFLICT (telegram_user_id) DO UPDATE SET last_seen_at = messenger_players.last_seen_at RETURNING *`,
    [telegramUserId, at, at],
  );

export interface BalanceMove {
  freeSpins: number;
  missiles: number;
  points: number;
  /** Added to points_earned (never negative). */
  earned: number;
  /** The daily free spin taken at this time (the player's row changes once, in the move). */
  lastFreeSpinAt?: string;
}

export type BalancesAfter = Pick<PlayerRow, "free_spin_balance" | "missile_balance" | "points_balance">;

const MOVE = `UPDATE messenger_players SET free_spin_balance = free_spin_balance + ?, missile_balance = missile_balance + ?,
     points_balance = points_balance + ?, points_earned = points_earned + ?, last_free_spin_at = COALESCE(?, last_free_spin_at)`;
const MOVED = "RETURNING free_spin_balance, missile_balance, points_balance";
const moveParams = (m: BalanceMove) => [m.freeSpins, m.missiles, m.points, m.earned, m.lastFreeSpinAt ?? null];

/** Moves the three balances in one conditional statement; null (nothing written) when one would go below zero. */
export const moveBalances = (t: Queryable, telegramUserId: number, m: BalanceMove) =>
  t.get<BalancesAfter>(`${MOVE} WHERE telegram_user_id = ? AND free_spin_balance + ? >= 0 AND missile_balance + ? >= 0 AND points_balance + ? >= 0 ${MOVED}`, [
    ...moveParams(m),
    telegramUserId,
    m.freeSpins,
    m.missiles,
    m.points,
  ]);

/**
 * The same move from exactly the balances `from` (what the transaction's row lock read), as a statement for the
 * ledger's one statement on PostgreSQL (moveAndCompletePostgres, src/messenger/store/ledger.ts): it moves nothing
 * when the balances are not `from` any more.
 */
export const moveFromStatement = (telegramUserId: number, m: BalanceMove, from: BalancesAfter): Statement => ({
  sql: `${MOVE} WHERE telegram_user_id = ? AND free_spin_balance = ? AND missile_balance = ? AND points_balance = ? ${MOVED}`,
  params: [...moveParams(m), telegramUserId, from.free_spin_balance, from.missile_balance, from.points_balance],
});

export async function setLink(t: Queryable, telegramUserId: number, userId: number | null, by: string | null): Promise<void> {
  await t.run("UPDATE messenger_players SET linked_user_id = ?, linked_by = ? WHERE telegram_user_id = ?", [userId, by, telegramUserId]);
}

/** Who invited the player: set once (true), never over an earlier inviter (false). */
export async function setReferrer(t: Queryable, telegramUserId: number, referrer: number): Promise<boolean> {
  return changed(t, "UPDATE messenger_players SET referred_by = ? WHERE telegram_user_id = ? AND referred_by IS NULL", [referrer, telegramUserId]);
}

/** The leaderboard's top: an index walk of messenger_players_points_idx. */
export const topByPointsEarned = (q: Queryable, limit: number) =>
  q.all<Pick<PlayerRow, "telegram_user_id" | "first_name" | "username" | "points_earned">>(
    "SELECT telegram_user_id, first_name, username, points_earned FROM messenger_players WHERE points_earned > 0 ORDER BY points_earned DESC, telegram_user_id LIMIT ?",
    [limit],
  );

/**
 * Players strictly ahead of this one: two ranges of the same index, those with more points and those tied with a
 * smaller id (with an OR of the two, PostgreSQL walked all of the index). A rank is a count of the players ahead, so
 * it reads that many index entries: few for the players near the top, who look at it most.
 */
export async function playersAhead(q: Queryable, pointsEarned: number, telegramUserId: number): Promise<number> {
  const n = await countOf(
    q,
    `SELECT (SELECT COUNT(*) FROM messenger_players WHERE points_earned > ?)
       + (SELECT COUNT(*) FROM messenger_players WHERE points_earned = ? AND telegram_user_id < ?) AS n`,
    [pointsEarned, pointsEarned, telegramUserId],
  );
  return Number(n);
}

export type ProfileSort = "points_earned" | "last_seen" | "telegram_user_id";

const ORDER: Record<ProfileSort, string> = {
  // messenger_players_points_idx serves this order (an index walk).
  points_earned: "points_earned DESC, telegram_user_id ASC",
  // messenger_players_seen_idx (last_seen_at DESC, telegram_user_id) serves this order (an index walk).
  last_seen: "last_seen_at DESC, telegram_user_id ASC",
  telegram_user_id: "telegram_user_id ASC",
};

const linkedWhere = (linked: boolean | null) => (linked === null ? "" : linked ? "WHERE linked_user_id IS NOT NULL" : "WHERE linked_user_id IS NULL");

/** A page of players for the operators (sort names come from ORDER only, never from a request). */
export const playersPage = (q: Queryable, f: { sort: ProfileSort; linked: boolean | null; limit: number; offset: number }) =>
  q.all<PlayerRow>(`SELECT * FROM messenger_players ${linkedWhere(f.linked)} ORDER BY ${ORDER[f.sort]} LIMIT ? OFFSET ?`, [f.limit, f.offset]);

/**
 * The players matching `linked`, counted up to `cap` + 1 (more than `cap` means "at least that many"): an exact
 * count would read every player on each page of the operators' list.
 */
export const countPlayers = (q: Queryable, linked: boolean | null, cap: number) =>
  countOf(q, `SELECT COUNT(*) AS n FROM (SELECT 1 FROM messenger_players ${linkedWhere(linked)} LIMIT ?) capped`, [cap + 1]);
