// Read-only previews for the mini-app. The leaderboard reads messenger_players.points_earned, an aggregate kept
// by the ledger at write time, through its index: top N is an index walk, never a scan of ledger rows.
import type { AppContext } from "../context";
import { ledgerOf } from "./ledger";
import type { PlayerRow } from "./players";

export function activityPreview(ctx: AppContext, player: PlayerRow, limit: number) {
  const db = ctx.db.sqlite;
  const id = player.telegram_user_id;
  const count = (sql: string) => db.query<{ n: number }, [number]>(sql).get(id)?.n ?? 0;
  return {
    totals: {
      spins: count("SELECT COUNT(*) AS n FROM messenger_spins WHERE telegram_user_id = ?"),
      grids: count("SELECT COUNT(*) AS n FROM messenger_grids WHERE telegram_user_id = ?"),
      missions_completed: count("SELECT COUNT(*) AS n FROM messenger_mission_enrollments WHERE telegram_user_id = ? AND completed_at IS NOT NULL"),
      promos_claimed: count("SELECT COUNT(*) AS n FROM messenger_promo_claims WHERE telegram_user_id = ?"),
      points_earned: player.points_earned,
    },
    recent: ledgerOf(db, id, limit).map((r) => ({
      id: r.id as number,
      action: r.action as string,
      game_key: (r.game_key as string | null) ?? null,
      deltas: { free_spins: r.free_spin_delta as number, missiles: r.missile_delta as number, points: r.points_delta as number },
      created_at: r.created_at as string,
    })),
  };
}

export function leaderboardPreview(ctx: AppContext, player: PlayerRow, limit: number) {
  const db = ctx.db.sqlite;
  const top = db
    .query<{ telegram_user_id: number; first_name: string | null; username: string | null; points_earned: number }, [number]>(
      "SELECT telegram_user_id, first_name, username, points_earned FROM messenger_players WHERE points_earned > 0 ORDER BY points_earned DESC, telegram_user_id LIMIT ?",
    )
    .all(limit);
  // The player's rank: players strictly ahead (a range of the same index) plus one.
  const ahead = db
    .query<{ n: number }, [number, number, number]>(
      "SELECT COUNT(*) AS n FROM messenger_players WHERE points_earned > ? OR (points_earned = ? AND telegram_user_id < ?)",
    )
    .get(player.points_earned, player.points_earned, player.telegram_user_id)!.n;
  return {
    leaders: top.map((r, i) => ({
      rank: i + 1,
      display_name: r.first_name ?? r.username ?? "player",
      points_earned: r.points_earned,
      is_you: r.telegram_user_id === player.telegram_user_id,
    })),
    you: { rank: player.points_earned > 0 ? ahead + 1 : null, points_earned: player.points_earned },
  };
}
