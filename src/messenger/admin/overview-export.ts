// GET /api/messenger/admin/games/overview/export: the overview's figures as rows — one `window` row per game and
// one for the total, then one `day` row per game (and total) and day — as CSV (RFC 4180, src/http/formats/csv.ts) or as the
// JSON twin with the same columns and rows. A day row leaves the per-kind columns empty (null in JSON): the
// series holds values, not kinds.
import type { AppContext } from "../../context";
import { csvTable } from "../../http/formats/csv";
import { type GameFigures, gameFigures, OVERVIEW_DEFAULT_DAYS, parseGames } from "./overview";
import { resolveWindow, type WindowQuery } from "./window";

type Cell = string | number | null;

export const EXPORT_COLUMNS = [
  "row_type",
  "game_key",
  "day",
  "plays",
  "players",
  "payout_free_spins",
  "payout_missiles",
  "payout_points",
  "cost_free_spins",
  "cost_missiles",
  "cost_points",
  "payout_points_value",
  "cost_points_value",
  "rtp_percent",
  "purchases",
  "purchase_points_spent",
  "manual_grants",
  "manual_grant_missiles",
] as const;

function rowsOf(f: GameFigures, label: string): Array<Record<string, Cell>> {
  const whole: Record<string, Cell> = {
    row_type: "window",
    game_key: f.game_key,
    day: label,
    plays: f.plays,
    players: f.players,
    payout_free_spins: f.payout.free_spins,
    payout_missiles: f.payout.missiles,
    payout_points: f.payout.points,
    cost_free_spins: f.cost.free_spins,
    cost_missiles: f.cost.missiles,
    cost_points: f.cost.points,
    payout_points_value: f.payout_points_value,
    cost_points_value: f.cost_points_value,
    rtp_percent: f.rtp_percent,
    purchases: f.purchases.entries,
    purchase_points_spent: f.purchases.points_spent,
    manual_grants: f.manual_grants.entries,
    manual_grant_missiles: f.manual_grants.missiles,
  };
  const days = f.series.map((p) => {
    const row: Record<string, Cell> = Object.fromEntries(EXPORT_COLUMNS.map((c) => [c, null]));
    return Object.assign(row, {
      row_type: "day",
      game_key: f.game_key,
      day: p.day,
      plays: p.plays,
      players: p.players,
      payout_points_value: p.payout_points_value,
      cost_points_value: p.cost_points_value,
      rtp_percent: p.rtp_percent,
    });
  });
  return [whole, ...days];
}

export async function overviewExport(ctx: AppContext, query: WindowQuery & { games?: string }) {
  const games = parseGames(query.games);
  const w = resolveWindow(query, ctx.clock.now(), OVERVIEW_DEFAULT_DAYS);
  const figures = await gameFigures(ctx, w, games);
  const label = `${w.from}..${w.to}`;
  const rows = [...figures.games.flatMap((f) => rowsOf(f, label)), ...rowsOf(figures.total, label)];
  return { window: w, games_selected: games, columns: [...EXPORT_COLUMNS], rows, filename: `messenger-games-overview-${w.from}-${w.to}` };
}

/** The rows as CSV: a header, CRLF line ends, null as an empty cell. */
export function exportCsv(rows: Array<Record<string, Cell>>): string {
  return csvTable(rows, EXPORT_COLUMNS);
}
