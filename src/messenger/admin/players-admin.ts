// GET /api/messenger/admin/games/user-activity/{telegram_user_id} and /games/user-profiles: one player's profile,
// balances and ledger (newest first, paginated), and the players list with their activity counts. Activity counts
// come from messenger_daily_players (entries per day and game, folded from the ledger), read through its
// (telegram_user_id, day) index for the page's players only.
import type { AppContext } from "../../context";
import { AppError } from "../../http/errors/errors";
import { offsetPage, pageOf, parsePage } from "../../http/pagination";
import { adminListAnswer } from "../config/inputs";
import { playerCounts } from "../engagement";
import { balancesOf, getPlayer, type PlayerRow, playerView } from "../players";
import { ledgerPage } from "../store/ledger";
import { countPlayers, playersPage, type ProfileSort } from "../store/players";
import { activityOfPlayers } from "../store/stats";
import { schemaView } from "../../http/schema-view";
import { PlayerProfile } from "./analytics-model";

export async function playerOrThrow(ctx: AppContext, telegramUserId: number): Promise<PlayerRow> {
  const p = await getPlayer(ctx.store, telegramUserId);
  if (!p)
    throw new AppError("player_not_found", `No messenger player has Telegram user id ${telegramUserId}; players appear when they first open the mini-app`);
  return p;
}

const profileOf = (p: PlayerRow) => schemaView(PlayerProfile, p, { ...playerView(p), linked: p.linked_user_id !== null, balances: balancesOf(p) });

/** Ledger entries and active days per player (all actions and per game) for a page of players. */
async function activityOf(ctx: AppContext, ids: number[]) {
  const out = new Map<number, { ledger_entries: number; active_days: number; last_active_day: string | null; entries_by_game: Record<string, number> }>();
  for (const id of ids) out.set(id, { ledger_entries: 0, active_days: 0, last_active_day: null, entries_by_game: {} });
  if (ids.length === 0) return out;
  for (const r of await activityOfPlayers(ctx.store, ids)) {
    const a = out.get(r.telegram_user_id)!;
    if (r.game_key === "") {
      a.ledger_entries = r.entries;
      a.active_days = r.days;
      a.last_active_day = r.last_day;
    } else a.entries_by_game[r.game_key] = r.entries;
  }
  return out;
}

export async function userActivity(ctx: AppContext, telegramUserId: number, query: { limit?: number; offset?: number; cursor?: string }) {
  const player = await playerOrThrow(ctx, telegramUserId);
  const page = parsePage(query);
  const q = ctx.store;
  // messenger_ledger_player_idx (telegram_user_id, id) serves both the page and the cursor.
  const rows = await ledgerPage(q, telegramUserId, (page.after as number | null) ?? Number.MAX_SAFE_INTEGER, page.limit + 1, page.offset);
  const entries = rows.map((r) => ({
    id: r.id,
    request_id: r.request_id,
    action: r.action,
    game_key: r.game_key,
    deltas: { free_spins: r.free_spin_delta, missiles: r.missile_delta, points: r.points_delta },
    balances_after: { free_spin_balance: r.free_spin_after, missile_balance: r.missile_after, points_balance: r.points_after },
    created_at: r.created_at,
  }));
  const [activity, c] = await Promise.all([activityOf(ctx, [telegramUserId]), playerCounts(q, telegramUserId)]);
  return {
    player: profileOf(player),
    activity: { ...activity.get(telegramUserId)!, spins: c.spins, grids: c.grids, promos_claimed: c.promos_claimed, missions_completed: c.missions_completed },
    ...adminListAnswer(
      "ledger",
      pageOf(entries, page, (e) => e.id),
    ),
  };
}

/** The players list counts its total up to this many; beyond, it says total_capped (docs/messenger-admin-analytics.md). */
export const PLAYER_COUNT_CAP = 10_000;

export async function userProfiles(ctx: AppContext, query: { limit?: number; offset?: number; sort?: ProfileSort; linked?: "true" | "false" }) {
  const limit = query.limit ?? 50;
  const offset = query.offset ?? 0;
  const sort = query.sort ?? "points_earned";
  const linked = query.linked === undefined ? null : query.linked === "true";
  const page = offsetPage(await playersPage(ctx.store, { sort, linked, limit: limit + 1, offset }), limit, offset);
  const players = page.items;
  const activity = await activityOf(
    ctx,
    players.map((p) => p.telegram_user_id),
  );
  const counted = await countPlayers(ctx.store, linked, PLAYER_COUNT_CAP);
  return adminListAnswer(
    "players",
    { ...page, items: players.map((p) => ({ ...profileOf(p), activity: activity.get(p.telegram_user_id)! })) },
    { sort, linked: query.linked ?? null },
    { total: Math.min(counted, PLAYER_COUNT_CAP), total_capped: counted > PLAYER_COUNT_CAP },
  );
}
