// Read-only previews for the mini-app. The leaderboard reads messenger_players.points_earned, an aggregate kept
// by the ledger at write time, through its index: top N is an index walk, never a scan of ledger rows.
import type { AppContext } from "../context";
import type { Queryable } from "../db/port";
import { latestPage } from "../http/pagination";
import type { PlayerRow } from "./players";
import { countSpinsOf } from "./store/fair";
import { countGridsOf } from "./store/grids";
import { ledgerPage } from "./store/ledger";
import { countCompletedOf } from "./store/missions";
import { playersAhead, topByPointsEarned } from "./store/players";
import { countClaimsOf } from "./store/promos";

/** What a player has done, counted: the activity preview's totals and the operators' view of one player. */
export async function playerCounts(q: Queryable, id: number) {
  const [spins, grids, missionsCompleted, promosClaimed] = await Promise.all([
    countSpinsOf(q, id),
    countGridsOf(q, id),
    countCompletedOf(q, id),
    countClaimsOf(q, id),
  ]);
  return { spins, grids, missions_completed: missionsCompleted, promos_claimed: promosClaimed };
}

export async function activityPreview(ctx: AppContext, player: PlayerRow, limit: number) {
  const id = player.telegram_user_id;
  const [counts, recent] = await Promise.all([playerCounts(ctx.store, id), ledgerPage(ctx.store, id, Number.MAX_SAFE_INTEGER, limit + 1, 0)]);
  // Both previews are "latest N" lists (docs/http-conventions.md, "Lists"): has_more, no next page.
  const { items, query, pagination } = latestPage(recent, limit);
  return {
    count: items.length,
    query,
    pagination,
    totals: { ...counts, points_earned: player.points_earned },
    recent: items.map((r) => ({
      id: r.id,
      action: r.action,
      game_key: r.game_key ?? null,
      deltas: { free_spins: r.free_spin_delta, missiles: r.missile_delta, points: r.points_delta },
      created_at: r.created_at,
    })),
  };
}

export async function leaderboardPreview(ctx: AppContext, player: PlayerRow, limit: number) {
  const { items: top, query, pagination } = latestPage(await topByPointsEarned(ctx.store, limit + 1), limit);
  // The player's rank: players strictly ahead (a range of the same index) plus one.
  const ahead = await playersAhead(ctx.store, player.points_earned, player.telegram_user_id);
  return {
    leaders: top.map((r, i) => ({
      rank: i + 1,
      display_name: r.first_name ?? r.username ?? "player",
      points_earned: r.points_earned,
      is_you: r.telegram_user_id === player.telegram_user_id,
    })),
    you: { rank: player.points_earned > 0 ? ahead + 1 : null, points_earned: player.points_earned },
    count: top.length,
    query,
    pagination,
  };
}
