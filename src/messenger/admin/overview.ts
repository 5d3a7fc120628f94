// GET /api/messenger/admin/games/overview: plays, players, payouts, cost and return-to-player per game and in
// total, with a per-day series — read ONLY from the daily aggregates (messenger_daily_stats: a few rows per day and
// action; messenger_daily_players through players-window.ts), never from the ledger. docs/messenger-admin-analytics.md
// defines every figure; the short version:
// - plays: ledger rows of the game's play action (a wheel spin; a recon-grid reveal — starting a grid is free and
//   writes no ledger row);
// - cost: what the plays took from the players. A reveal always costs exactly one missile, so the grid's cost is
//   one missile per reveal and its payout the net movement plus that cost (exact). A wheel spin costs nothing (the
//   daily free spin) or one spin in hand, and the aggregates hold each play's net delta only: a paid spin that wins
//   "Free spin" nets to zero and counts as a refund (neither cost nor payout);
// - points value: 1 point = 1; a free spin and a missile are worth what the shop sells them for (ITEMS);
// - rtp_percent = payout value ÷ cost value × 100 (null when nothing was spent).
// Item purchases and operator grants in a game are reported beside the plays, never as payouts or cost.
import type { AppContext } from "../../context";
import { AppError } from "../../http/errors/errors";
import { AMOUNT_KINDS, GAMES, ITEMS, type RewardSpec } from "../catalog";
import { daysOf, type ReportWindow, resolveWindow, type WindowQuery } from "./window";
import { statsRows, type StatsRow } from "../store/stats";
import { distinctPlayers, playersPerDay } from "./players-window";

export const GAME_KEYS: string[] = GAMES.map((g) => g.game_key);
export const OVERVIEW_DEFAULT_DAYS = 30;
export const MANUAL_GRANT_ACTION = "admin.manual_grant";
const PURCHASE_ACTIONS = new Set(["items.purchase", "recon_grid.purchase"]);

export const playActionOf = (game: string) => (game === "recon_grid" ? "recon_grid.reveal" : `${game}.play`);
/** Games whose every play costs the same (so the gross payout is exact from net deltas). */
const FIXED_PRICE: Record<string, Amounts> = { recon_grid: { free_spins: 0, missiles: 1, points: 0 } };

type Amounts = RewardSpec;
export const zero = (): Amounts => ({ free_spins: 0, missiles: 0, points: 0 });
const add = (a: Amounts, b: Amounts) => {
  for (const k of AMOUNT_KINDS) a[k] += b[k];
};

/** Points value of one unit of each balance: the shop's price of it (ITEMS), so a spin and a missile compare with points. */
export const POINTS_VALUE: Amounts = {
  points: 1,
  free_spins: ITEMS.spin_play.price_points / ITEMS.spin_play.grants.free_spins,
  missiles: ITEMS.missile.price_points / ITEMS.missile.grants.missiles,
};
export const valueOf = (a: Amounts) => a.points * POINTS_VALUE.points + a.free_spins * POINTS_VALUE.free_spins + a.missiles * POINTS_VALUE.missiles;
export const percentOf = (part: number, whole: number) => (whole > 0 ? Math.round((part / whole) * 10_000) / 100 : null);

/** Parses `games` (comma list); absent or empty = every game. Unknown keys are a 400 naming query.games. */
export function parseGames(raw: string | undefined): string[] {
  if (raw === undefined || raw.trim() === "") return [...GAME_KEYS];
  const keys = [...new Set(raw.split(",").map((s) => s.trim()))];
  const unknown = keys.filter((k) => !GAME_KEYS.includes(k));
  if (unknown.length > 0 || keys.includes("")) {
    const problem = `must be a comma-separated list of: ${GAME_KEYS.join(", ")}; got ${JSON.stringify((unknown[0] ?? "").slice(0, 40))}`;
    throw new AppError("invalid_query", `Invalid request parameters: query.games ${problem}`, { details: [{ field: "query.games", problem }] });
  }
  return GAME_KEYS.filter((k) => keys.includes(k));
}

const granted = (r: StatsRow): Amounts => ({ free_spins: r.free_spins_granted, missiles: r.missiles_granted, points: r.points_granted });
const spent = (r: StatsRow): Amounts => ({ free_spins: r.free_spins_spent, missiles: r.missiles_spent, points: r.points_spent });

/** One play-action aggregate row's payout and cost under the definitions above. */
function playFigures(game: string, r: StatsRow): { payout: Amounts; cost: Amounts } {
  const price = FIXED_PRICE[game];
  if (!price) return { payout: granted(r), cost: spent(r) };
  const cost = zero();
  const payout = granted(r);
  const s = spent(r);
  for (const k of AMOUNT_KINDS) {
    cost[k] = price[k] * r.entries;
    payout[k] += cost[k] - s[k];
  }
  return { cost, payout };
}

function emptyFigures(game: string, days: string[]) {
  return {
    game_key: game,
    plays: 0,
    players: 0,
    payout: zero(),
    cost: zero(),
    payout_points_value: 0,
    cost_points_value: 0,
    rtp_percent: null as number | null,
    purchases: { entries: 0, points_spent: 0, free_spins_bought: 0, missiles_bought: 0 },
    manual_grants: { entries: 0, free_spins: 0, missiles: 0, points: 0 },
    series: days.map((day) => ({ day, plays: 0, players: 0, payout_points_value: 0, cost_points_value: 0, rtp_percent: null as number | null })),
  };
}
export type GameFigures = ReturnType<typeof emptyFigures>;

/** The figures of `games` over the window, and their total (players counted once across the games). */
export async function gameFigures(ctx: AppContext, w: ReportWindow, games: string[]) {
  const today = ctx.clock.now().toISOString().slice(0, 10);
  const days = daysOf(w);
  const dayIndex = new Map(days.map((d, i) => [d, i]));
  const byGame = new Map(games.map((g) => [g, emptyFigures(g, days)]));
  const total = emptyFigures("total", days);
  for (const r of await statsRows(ctx.store, w.from, w.to)) {
    const f = byGame.get(r.game_key);
    if (!f) continue;
    if (r.action === playActionOf(r.game_key)) {
      const { payout, cost } = playFigures(r.game_key, r);
      for (const target of [f, total]) {
        target.plays += r.entries;
        add(target.payout, payout);
        add(target.cost, cost);
        const point = target.series[dayIndex.get(r.day)!]!;
        point.plays += r.entries;
        point.payout_points_value += valueOf(payout);
        point.cost_points_value += valueOf(cost);
      }
    } else if (PURCHASE_ACTIONS.has(r.action)) {
      for (const p of [f.purchases, total.purchases]) {
        p.entries += r.entries;
        p.points_spent += r.points_spent;
        p.free_spins_bought += r.free_spins_granted;
        p.missiles_bought += r.missiles_granted;
      }
    } else if (r.action === MANUAL_GRANT_ACTION) {
      for (const m of [f.manual_grants, total.manual_grants]) {
        m.entries += r.entries;
        m.free_spins += r.free_spins_granted;
        m.missiles += r.missiles_granted;
        m.points += r.points_granted;
      }
    }
  }
  const finish = async (f: GameFigures, keys: string[]) => {
    f.payout_points_value = valueOf(f.payout);
    f.cost_points_value = valueOf(f.cost);
    f.rtp_percent = percentOf(f.payout_points_value, f.cost_points_value);
    f.players = await distinctPlayers(ctx, w, today, keys);
    const perDay = await playersPerDay(ctx, w, today, keys);
    for (const p of f.series) {
      p.players = perDay.get(p.day) ?? 0;
      p.rtp_percent = percentOf(p.payout_points_value, p.cost_points_value);
    }
  };
  for (const [g, f] of byGame) await finish(f, [g]);
  await finish(total, games);
  return { games: [...byGame.values()], total };
}

export async function gamesOverview(ctx: AppContext, query: WindowQuery & { games?: string }) {
  const games = parseGames(query.games);
  const w = resolveWindow(query, ctx.clock.now(), OVERVIEW_DEFAULT_DAYS);
  const figures = await gameFigures(ctx, w, games);
  return { window: w, games_selected: games, points_value: POINTS_VALUE, ...figures };
}
