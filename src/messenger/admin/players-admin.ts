// GET /api/messenger/admin/games/user-activity/{telegram_user_id} and /games/user-profiles: one player's profile,
// balances and ledger (newest first, paginated), and the players list with their activity counts. Activity counts
// come from messenger_daily_players (entries per day and game, folded from the ledger), read through its
// (telegram_user_id, day) index for the page's players only.
import type { AppContext } from "../../context";
import { AppError } from "../../http/errors";
import { pageOf, parsePage } from "../../http/pagination";
import { balancesOf, getPlayer, type PlayerRow, playerView } from "../players";

export const PROFILE_SORTS = ["points_earned", "last_seen", "telegram_user_id"] as const;
export type ProfileSort = (typeof PROFILE_SORTS)[number];

export function playerOrThrow(ctx: AppContext, telegramUserId: number): PlayerRow {
  const p = getPlayer(ctx.db.sqlite, telegramUserId);
  if (!p)
    throw new AppError("player_not_found", `No messenger player has Telegram user id ${telegramUserId}; players appear when they first open the mini-app`);
  return p;
}

function profileOf(p: PlayerRow) {
  return {
    ...playerView(p),
    points_earned: p.points_earned,
    last_free_spin_at: p.last_free_spin_at,
    last_seen_at: p.last_seen_at,
    linked: p.linked_user_id !== null,
    balances: balancesOf(p),
  };
}

interface ActivityRow {
  telegram_user_id: number;
  game_key: string;
  entries: number;
  days: number;
  last_day: string;
}

/** Ledger entries and active days per player (all actions and per game) for a page of players. */
function activityOf(ctx: AppContext, ids: number[]) {
  const out = new Map<number, { ledger_entries: number; active_days: number; last_active_day: string | null; entries_by_game: Record<string, number> }>();
  for (const id of ids) out.set(id, { ledger_entries: 0, active_days: 0, last_active_day: null, entries_by_game: {} });
  if (ids.length === 0) return out;
  const rows = ctx.db.sqlite
    .query<ActivityRow, number[]>(
      `SELECT telegram_user_id, game_key, SUM(entries) AS entries, COUNT(*) AS days, MAX(day) AS last_day FROM messenger_daily_players
       WHERE telegram_user_id IN (${ids.map(() => "?").join(", ")}) GROUP BY telegram_user_id, game_key`,
    )
    .all(...ids);
  for (const r of rows) {
    const a = out.get(r.telegram_user_id)!;
    if (r.game_key === "") {
      a.ledger_entries = r.entries;
      a.active_days = r.days;
      a.last_active_day = r.last_day;
    } else a.entries_by_game[r.game_key] = r.entries;
  }
  return out;
}

export function userActivity(ctx: AppContext, telegramUserId: number, query: { limit?: number; offset?: number; cursor?: string }) {
  const player = playerOrThrow(ctx, telegramUserId);
  const page = parsePage(query);
  const db = ctx.db.sqlite;
  // messenger_ledger_player_idx (telegram_user_id, id) serves both the page and the cursor.
  const rows = db
    .query<Record<string, string | number | null>, number[]>(
      `SELECT id, request_id, action, game_key, free_spin_delta, missile_delta, points_delta, free_spin_after, missile_after, points_after, created_at
       FROM messenger_ledger WHERE telegram_user_id = ? AND id < ? ORDER BY id DESC LIMIT ? OFFSET ?`,
    )
    .all(telegramUserId, page.after ?? Number.MAX_SAFE_INTEGER, page.limit + 1, page.offset);
  const entries = rows.map((r) => ({
    id: r.id as number,
    request_id: r.request_id as string,
    action: r.action as string,
    game_key: r.game_key as string | null,
    deltas: { free_spins: r.free_spin_delta as number, missiles: r.missile_delta as number, points: r.points_delta as number },
    balances_after: { free_spin_balance: r.free_spin_after as number, missile_balance: r.missile_after as number, points_balance: r.points_after as number },
    created_at: r.created_at as string,
  }));
  const count = (sql: string) => db.query<{ n: number }, [number]>(sql).get(telegramUserId)?.n ?? 0;
  const { items, ...paging } = pageOf(entries, page, (e) => e.id);
  return {
    player: profileOf(player),
    activity: {
      ...activityOf(ctx, [telegramUserId]).get(telegramUserId)!,
      spins: count("SELECT COUNT(*) AS n FROM messenger_spins WHERE telegram_user_id = ?"),
      grids: count("SELECT COUNT(*) AS n FROM messenger_grids WHERE telegram_user_id = ?"),
      promos_claimed: count("SELECT COUNT(*) AS n FROM messenger_promo_claims WHERE telegram_user_id = ?"),
      missions_completed: count("SELECT COUNT(*) AS n FROM messenger_mission_enrollments WHERE telegram_user_id = ? AND completed_at IS NOT NULL"),
    },
    ledger: items,
    ...paging,
  };
}

const ORDER: Record<ProfileSort, string> = {
  // messenger_players_points_idx serves this order (an index walk).
  points_earned: "points_earned DESC, telegram_user_id ASC",
  // No index: a sort of the players table (an operator page, not a hot path).
  last_seen: "last_seen_at DESC, telegram_user_id ASC",
  telegram_user_id: "telegram_user_id ASC",
};

export function userProfiles(ctx: AppContext, query: { limit?: number; offset?: number; sort?: ProfileSort; linked?: "true" | "false" }) {
  const limit = query.limit ?? 50;
  const offset = query.offset ?? 0;
  const sort = query.sort ?? "points_earned";
  const where = query.linked === undefined ? "" : query.linked === "true" ? "WHERE linked_user_id IS NOT NULL" : "WHERE linked_user_id IS NULL";
  const db = ctx.db.sqlite;
  const rows = db
    .query<PlayerRow, [number, number]>(`SELECT * FROM messenger_players ${where} ORDER BY ${ORDER[sort]} LIMIT ? OFFSET ?`)
    .all(limit + 1, offset);
  const hasMore = rows.length > limit;
  const players = rows.slice(0, limit);
  const activity = activityOf(
    ctx,
    players.map((p) => p.telegram_user_id),
  );
  const total = db.query<{ n: number }, []>(`SELECT COUNT(*) AS n FROM messenger_players ${where}`).get()!.n;
  return {
    players: players.map((p) => ({ ...profileOf(p), activity: activity.get(p.telegram_user_id)! })),
    count: players.length,
    total,
    pagination: { has_more: hasMore, next_offset: hasMore ? offset + players.length : null, next_cursor: null },
    query: { limit, offset, sort, linked: query.linked ?? null },
  };
}
