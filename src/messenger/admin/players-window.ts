// Distinct players of a reporting window, from messenger_daily_players (one row per day, game and player).
// Counting distinct players over 90 days reads every (day, game, player) row of the window — about 330,000 rows
// and 160–220 ms at 1,000,000 plays by 50,000 players (bench/messenger-admin.ts) — too slow to do per request.
// But a UTC day that has ended barely changes: the fold adds a ledger row to its own day, which is almost always
// today. So the players of the window's CLOSED days (before today) are read once per process and kept — as a
// sorted Float64Array of Telegram user ids per game and window start (8 bytes a player), and a count per closed
// day — and only today's rows (a PK prefix: day, game_key) are read per request. The caches are bounded, and
// dropped as a whole when the day turns.
//
// The invariant this relies on: no write lands on a day a reader already treats as closed. Late writes do happen
// — a ledger row of 23:59:59 folded after midnight, a row committed late on PostgreSQL, an instance whose clock
// lags — and each is made visible: the fold bumps the daily_players version when it writes a day that ends within
// CLOSED_DAY_MARGIN_MS of its own clock (src/messenger/daily-stats.ts), and this cache re-reads that counter at most
// once a second (src/messenger/version-watch.ts) and drops everything when it moved. Kept per context
// (AppContext.state), so each app — and each instance — has its own.
import { type AppContext, slot, stateOf } from "../../context";
import { playerIdsBetween, playerIdsOfDay, playersPerDayBetween } from "../store/stats";
import { versionWatch } from "../version-watch";
import { DAY_MS, daysOf } from "./window";

interface Cache {
  /** The day the cache was built for (today at that time); a new day drops everything. */
  today: string;
  /** `${game}|${from}|${closedTo}` (or `${games}|…` for a union) → sorted distinct user ids of those closed days. */
  sets: Map<string, Float64Array>;
  /** `${day}|${games}` → distinct players of that closed day in those games. */
  dayCounts: Map<string, number>;
}

const MAX_SETS = 32;
const MAX_DAY_COUNTS = 8192;

const CACHE = slot("messenger players window", (ctx) => ({
  watch: versionWatch(ctx, "daily_players"),
  cache: { today: "", sets: new Map(), dayCounts: new Map() } as Cache,
}));

/**
 * The cache for `today`, emptied when the day turned or a late fold moved the version. The caller fills the maps
 * of the object it got: a drop meanwhile replaces the object, so a set computed before the drop is never kept.
 */
async function cacheOf(ctx: AppContext, today: string): Promise<Cache> {
  const s = stateOf(ctx, CACHE);
  // The version before the rows: a fold committed in between shows as a move at the next check.
  if ((await s.watch.moved()) || s.cache.today !== today) s.cache = { today, sets: new Map(), dayCounts: new Map() };
  return s.cache;
}

const prevDay = (day: string) => new Date(Date.parse(`${day}T00:00:00Z`) - DAY_MS).toISOString().slice(0, 10);
async function closedSet(ctx: AppContext, c: Cache, game: string, from: string, closedTo: string): Promise<Float64Array> {
  const key = `${game}|${from}|${closedTo}`;
  const hit = c.sets.get(key);
  if (hit) c.sets.delete(key);
  return keep(c, key, hit ?? Float64Array.from(await playerIdsBetween(ctx.store, from, closedTo, game)));
}

/** Keeps a set at the map's end, evicting from its front past MAX_SETS: the map's order is the eviction order. */
function keep(c: Cache, key: string, set: Float64Array): Float64Array {
  if (c.sets.size >= MAX_SETS) c.sets.delete(c.sets.keys().next().value!);
  c.sets.set(key, set);
  return set;
}

function union(sets: Float64Array[]): Float64Array {
  if (sets.length === 1) return sets[0]!;
  const all = new Float64Array(sets.reduce((n, s) => n + s.length, 0));
  let i = 0;
  for (const s of sets) {
    all.set(s, i);
    i += s.length;
  }
  all.sort();
  let w = 0;
  for (let r = 0; r < all.length; r++) if (r === 0 || all[r] !== all[w - 1]) all[w++] = all[r]!;
  return all.subarray(0, w);
}

/** The union of the games' closed sets, itself kept (merging 2 × 40,000 ids costs milliseconds per request). */
async function closedUnion(ctx: AppContext, c: Cache, games: string[], from: string, closedTo: string): Promise<Float64Array> {
  if (games.length === 1) return closedSet(ctx, c, games[0]!, from, closedTo);
  const key = `${games.join(",")}|${from}|${closedTo}`;
  const hit = c.sets.get(key);
  if (hit) return hit;
  const parts: Float64Array[] = [];
  for (const g of games) parts.push(await closedSet(ctx, c, g, from, closedTo));
  return keep(c, key, union(parts));
}

function has(sorted: Float64Array, id: number): boolean {
  let lo = 0;
  let hi = sorted.length - 1;
  while (lo <= hi) {
    const mid = (lo + hi) >> 1;
    const v = sorted[mid]!;
    if (v === id) return true;
    if (v < id) lo = mid + 1;
    else hi = mid - 1;
  }
  return false;
}

/** Today's players in `games`: a PK prefix read (day, game_key); one row per player and game, deduplicated here. */
async function todaysIds(ctx: AppContext, today: string, games: string[]): Promise<Iterable<number>> {
  const ids = await playerIdsOfDay(ctx.store, today, games);
  return games.length === 1 ? ids : new Set(ids);
}

/**
 * Distinct players over [from, to] in any of `games` (game keys of the aggregates; "" = any ledger action).
 * `today` is the clock's UTC day; `to` is never after it.
 */
export async function distinctPlayers(ctx: AppContext, window: { from: string; to: string }, today: string, games: string[]): Promise<number> {
  if (games.length === 0) return 0;
  const c = await cacheOf(ctx, today);
  const closedTo = window.to < today ? window.to : prevDay(today);
  const closed = window.from <= closedTo ? await closedUnion(ctx, c, games, window.from, closedTo) : new Float64Array(0);
  if (window.to < today) return closed.length;
  let extra = 0;
  for (const id of await todaysIds(ctx, today, games)) if (!has(closed, id)) extra++;
  return closed.length + extra;
}

/** Distinct players per day of [from, to] in any of `games`: closed days cached, today read live. */
export async function playersPerDay(ctx: AppContext, window: { from: string; to: string }, today: string, games: string[]): Promise<Map<string, number>> {
  const out = new Map<string, number>();
  if (games.length === 0) return out;
  const c = await cacheOf(ctx, today);
  const gamesKey = games.join(",");
  const missing: string[] = [];
  for (const day of daysOf(window)) {
    const hit = day < today ? c.dayCounts.get(`${day}|${gamesKey}`) : undefined;
    if (hit === undefined) missing.push(day);
    else out.set(day, hit);
  }
  if (missing.length > 0) {
    const rows = await playersPerDayBetween(ctx.store, missing[0]!, missing[missing.length - 1]!, games);
    const found = new Map(rows.map((r) => [r.day, r.n]));
    if (c.dayCounts.size + missing.length > MAX_DAY_COUNTS) c.dayCounts.clear();
    for (const day of missing) {
      const n = found.get(day) ?? 0;
      out.set(day, n);
      if (day < today) c.dayCounts.set(`${day}|${gamesKey}`, n);
    }
  }
  return out;
}
