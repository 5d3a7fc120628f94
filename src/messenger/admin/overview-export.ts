// GET /api/messenger/admin/games/overview/export: the overview's figures as rows — one `window` row per game and
// one for the total, then one `day` row per game (and total) and day — as CSV (RFC 4180, src/http/formats/csv.ts) or as the
// JSON twin with the same columns and rows. A day row leaves the per-kind columns empty (null in JSON): the
// series holds values, not kinds.
import type { AppContext } from "../../context";
import { columnTable } from "../../http/formats/csv";
import { type GameFigures, gameFigures, OVERVIEW_DEFAULT_DAYS, parseGames } from "./overview";
import { resolveWindow, type WindowQuery } from "./window";

type Cell = string | number | null;
/** A game's (or the total's) figures over the window, labelled with the window's days. */
type Whole = GameFigures & { label: string };

/** The columns, each with its cell of a `window` row; a `day` row is its series point over a row of nulls. */
export const { columns: EXPORT_COLUMNS, rowOf: windowRow } = columnTable({
  row_type: (): Cell => "window",
  game_key: (f: Whole): Cell => f.game_key,
  day: (f: Whole): Cell => f.label,
  plays: (f: Whole): Cell => f.plays,
  players: (f: Whole): Cell => f.players,
  payout_free_spins: (f: Whole): Cell => f.payout.free_spins,
  payout_missiles: (f: Whole): Cell => f.payout.missiles,
  payout_points: (f: Whole): Cell => f.payout.points,
  cost_free_spins: (f: Whole): Cell => f.cost.free_spins,
  cost_missiles: (f: Whole): Cell => f.cost.missiles,
  cost_points: (f: Whole): Cell => f.cost.points,
  payout_points_value: (f: Whole): Cell => f.payout_points_value,
  cost_points_value: (f: Whole): Cell => f.cost_points_value,
  rtp_percent: (f: Whole): Cell => f.rtp_percent,
  purchases: (f: Whole): Cell => f.purchases.entries,
  purchase_points_spent: (f: Whole): Cell => f.purchases.points_spent,
  manual_grants: (f: Whole): Cell => f.manual_grants.entries,
  manual_grant_missiles: (f: Whole): Cell => f.manual_grants.missiles,
});

const NULL_ROW: Record<string, Cell> = Object.fromEntries(EXPORT_COLUMNS.map((c) => [c, null]));

function rowsOf(f: GameFigures, label: string): Array<Record<string, Cell>> {
  // A series point's fields (day, plays, players, the two values, rtp_percent) are columns: spread over the nulls,
  // they keep the columns' order.
  const days = f.series.map((p) => ({ ...NULL_ROW, ...p, row_type: "day", game_key: f.game_key }));
  return [windowRow({ ...f, label }), ...days];
}

export async function overviewExport(ctx: AppContext, query: WindowQuery & { games?: string }) {
  const games = parseGames(query.games);
  const w = resolveWindow(query, ctx.clock.now(), OVERVIEW_DEFAULT_DAYS);
  const figures = await gameFigures(ctx, w, games);
  const label = `${w.from}..${w.to}`;
  const rows = [...figures.games.flatMap((f) => rowsOf(f, label)), ...rowsOf(figures.total, label)];
  return { window: w, games_selected: games, columns: [...EXPORT_COLUMNS], rows, filename: `messenger-games-overview-${w.from}-${w.to}` };
}
