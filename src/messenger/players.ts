// Players: created on first verified contact, profile refreshed from init data. Reads dominate (every mini-app
// request verifies identity), so an unchanged player costs one indexed SELECT and no write.
import type { AppContext } from "../context";
import type { Queryable } from "../db/port";
import type { InitDataIdentity } from "./init-data";
import { Player } from "./model";
import { schemaView } from "../http/schema-view";
import { createPlayerIfMissing, insertPlayerProfile, lockOrCreatePlayer, type PlayerRow, playerById, type Profile, refreshProfile } from "./store/players";

export type { PlayerRow };

/** last_seen_at is refreshed at most this often: a write per request would halve the read routes' throughput. */
const SEEN_REFRESH_MS = 10 * 60_000;

export const getPlayer = (q: Queryable, telegramUserId: number): Promise<PlayerRow | null> => playerById(q, telegramUserId);

export async function getPlayerOrCreate(q: Queryable, telegramUserId: number, now: string): Promise<PlayerRow> {
  await createPlayerIfMissing(q, telegramUserId, now);
  return (await playerById(q, telegramUserId))!;
}

/**
 * The player's row, made if need be, with its row lock held for the rest of the transaction `t`: every transaction
 * that changes a player's game state (balances, seeds, grids, missions, wallets) starts here, so one player's
 * actions run one after another on every engine and instance.
 */
export async function lockedPlayer(t: Queryable, telegramUserId: number, now: string): Promise<PlayerRow> {
  // One statement, issued at the call (the ledger issues its claim right behind it, and the lock must come first).
  return (await lockOrCreatePlayer(t, telegramUserId, now))!;
}

const profileOf = (id: InitDataIdentity): Profile => ({
  telegramUserId: id.telegramUserId,
  username: id.username,
  firstName: id.firstName,
  languageCode: id.languageCode,
  isPremium: id.isPremium ? 1 : 0,
});

type StoredProfile = Pick<PlayerRow, "username" | "first_name" | "language_code" | "is_premium">;

const profileDiffers = (row: StoredProfile, p: Profile) =>
  row.username !== p.username || row.first_name !== p.firstName || row.language_code !== p.languageCode || row.is_premium !== p.isPremium;

/** The player behind verified init data, created or refreshed when the profile changed. */
export async function ensurePlayer(ctx: AppContext, id: InitDataIdentity, now: Date = ctx.clock.now()): Promise<PlayerRow> {
  const row = await playerById(ctx.store, id.telegramUserId);
  const p = profileOf(id);
  if (!row) {
    // Another request may make the row first (two tabs opening at once): then it is read as it stands.
    return (await insertPlayerProfile(ctx.store, p, now.toISOString())) ?? (await playerById(ctx.store, id.telegramUserId))!;
  }
  if (profileDiffers(row, p) || now.getTime() - Date.parse(row.last_seen_at) > SEEN_REFRESH_MS) {
    const iso = now.toISOString();
    await refreshProfile(ctx.store, p, iso);
    return { ...row, username: p.username, first_name: p.firstName, language_code: p.languageCode, is_premium: p.isPremium, last_seen_at: iso };
  }
  return row;
}

/**
 * The player behind verified init data for a read-only route (the previews): the stored row as it stands, or, for
 * someone who never used the mini-app, a blank one that is not stored. Nothing is written: no player is made and no
 * profile or last_seen_at refreshed.
 */
export async function playerToRead(ctx: AppContext, id: InitDataIdentity, now: Date = ctx.clock.now()): Promise<PlayerRow> {
  return (await playerById(ctx.store, id.telegramUserId)) ?? blankPlayer(profileOf(id), now.toISOString());
}

/** A player as the first contact would make it (nothing earned, nothing linked), never stored. */
export function blankPlayer(p: Partial<Profile> & Pick<Profile, "telegramUserId">, now: string): PlayerRow {
  return {
    telegram_user_id: p.telegramUserId,
    username: p.username ?? null,
    first_name: p.firstName ?? null,
    language_code: p.languageCode ?? null,
    is_premium: p.isPremium ?? 0,
    linked_user_id: null,
    linked_by: null,
    referred_by: null,
    free_spin_balance: 0,
    missile_balance: 0,
    points_balance: 0,
    points_earned: 0,
    last_free_spin_at: null,
    created_at: now,
    last_seen_at: now,
  };
}

export const balancesOf = (p: Pick<PlayerRow, "free_spin_balance" | "missile_balance" | "points_balance">) => ({
  free_spin_balance: p.free_spin_balance,
  missile_balance: p.missile_balance,
  points_balance: p.points_balance,
});

export const playerView = (p: PlayerRow) =>
  schemaView(Player, p, { is_premium: p.is_premium === 1, linked_user_id: p.linked_user_id === null ? null : String(p.linked_user_id) });

/**
 * The players this instance made, refreshed or found unchanged, with their stored profile and last_seen_at: for a
 * route that needs only the player's id, `ensure` skips ensurePlayer's read while the profile is unchanged and no
 * refresh is due (ensurePlayer would write nothing either). Rows are never deleted, so a remembered one exists on
 * every instance; a profile a bot /start merged in since is overwritten at the next refresh, at most SEEN_REFRESH_MS
 * later. Bounded: past `cap` players the one remembered longest ago is forgotten.
 */
export class KnownPlayers {
  private readonly known = new Map<number, { profile: StoredProfile; seenAt: number }>();

  constructor(private readonly cap = 10_000) {}

  /** The player's row made or refreshed as ensurePlayer would; no statement when remembered unchanged. */
  async ensure(ctx: AppContext, id: InitDataIdentity, now: Date): Promise<void> {
    const known = this.known.get(id.telegramUserId);
    if (known && !profileDiffers(known.profile, profileOf(id)) && now.getTime() - known.seenAt <= SEEN_REFRESH_MS) return;
    this.remember(await ensurePlayer(ctx, id, now));
  }

  /** A row as ensurePlayer answered it (its profile and last_seen_at are what the database holds). */
  remember(row: PlayerRow): void {
    const uid = row.telegram_user_id;
    this.known.delete(uid);
    const profile = { username: row.username, first_name: row.first_name, language_code: row.language_code, is_premium: row.is_premium };
    this.known.set(uid, { profile, seenAt: Date.parse(row.last_seen_at) });
    if (this.known.size > this.cap) this.known.delete(this.known.keys().next().value!);
  }

  get size(): number {
    return this.known.size;
  }
}
