// Players: created on first verified contact, profile refreshed from init data. Reads dominate (every mini-app
// request verifies identity), so an unchanged player costs one indexed SELECT and no write.
import type { Database } from "bun:sqlite";
import type { AppContext } from "../context";
import type { InitDataIdentity } from "./init-data";

export interface PlayerRow {
  telegram_user_id: number;
  username: string | null;
  first_name: string | null;
  language_code: string | null;
  is_premium: number;
  linked_user_id: number | null;
  linked_by: string | null;
  referred_by: number | null;
  free_spin_balance: number;
  missile_balance: number;
  points_balance: number;
  points_earned: number;
  last_free_spin_at: string | null;
  created_at: string;
  last_seen_at: string;
}

/** last_seen_at is refreshed at most this often: a write per request would halve the read routes' throughput. */
const SEEN_REFRESH_MS = 10 * 60_000;

export function getPlayer(db: Database, telegramUserId: number): PlayerRow | null {
  return db.query<PlayerRow, [number]>("SELECT * FROM messenger_players WHERE telegram_user_id = ?").get(telegramUserId);
}

export function getPlayerOrCreate(db: Database, telegramUserId: number, now: string): PlayerRow {
  db.query("INSERT INTO messenger_players (telegram_user_id, created_at, last_seen_at) VALUES (?1, ?2, ?2) ON CONFLICT (telegram_user_id) DO NOTHING").run(
    telegramUserId,
    now,
  );
  return getPlayer(db, telegramUserId)!;
}

/** The player behind verified init data, created or refreshed when the profile changed. */
export function ensurePlayer(ctx: AppContext, id: InitDataIdentity, now: Date = ctx.clock.now()): PlayerRow {
  const db = ctx.db.sqlite;
  const row = getPlayer(db, id.telegramUserId);
  if (!row) {
    const iso = now.toISOString();
    db.query(
      `INSERT INTO messenger_players (telegram_user_id, username, first_name, language_code, is_premium, created_at, last_seen_at)
       VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?6) ON CONFLICT (telegram_user_id) DO NOTHING`,
    ).run(id.telegramUserId, id.username, id.firstName, id.languageCode, id.isPremium ? 1 : 0, iso);
    return getPlayer(db, id.telegramUserId)!;
  }
  const changed =
    row.username !== id.username || row.first_name !== id.firstName || row.language_code !== id.languageCode || row.is_premium !== (id.isPremium ? 1 : 0);
  if (changed || now.getTime() - Date.parse(row.last_seen_at) > SEEN_REFRESH_MS) {
    const iso = now.toISOString();
    db.query(
      "UPDATE messenger_players SET username = ?2, first_name = ?3, language_code = ?4, is_premium = ?5, last_seen_at = ?6 WHERE telegram_user_id = ?1",
    ).run(id.telegramUserId, id.username, id.firstName, id.languageCode, id.isPremium ? 1 : 0, iso);
    return { ...row, username: id.username, first_name: id.firstName, language_code: id.languageCode, is_premium: id.isPremium ? 1 : 0, last_seen_at: iso };
  }
  return row;
}

export const balancesOf = (p: Pick<PlayerRow, "free_spin_balance" | "missile_balance" | "points_balance">) => ({
  free_spin_balance: p.free_spin_balance,
  missile_balance: p.missile_balance,
  points_balance: p.points_balance,
});

export function playerView(p: PlayerRow) {
  return {
    telegram_user_id: p.telegram_user_id,
    username: p.username,
    first_name: p.first_name,
    language_code: p.language_code,
    is_premium: p.is_premium === 1,
    linked_user_id: p.linked_user_id === null ? null : String(p.linked_user_id),
    linked_by: p.linked_by,
    referred_by: p.referred_by,
    created_at: p.created_at,
  };
}
