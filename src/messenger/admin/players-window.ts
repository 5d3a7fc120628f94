// Distinct players of a reporting window, from messenger_daily_players (one row per day, game and player).
// Counting distinct players over 90 days reads every (day, game, player) row of the window — about 330,000 rows
// and 160–220 ms at 1,000,000 plays by 50,000 players (bench/messenger-admin.ts) — too slow to do per request.
// But a UTC day that has ended never changes: applyAction writes the aggregates of the ledger row's own day, which
// is today. So the players of the window's CLOSED days (before today) are read once per process and kept — as a
// sorted Float64Array of Telegram user ids per game and window start (8 bytes a player), and a count per closed
// day — and only today's rows (a PK prefix: day, game_key) are read per request. The caches are per database
// handle (so per app), bounded, and dropped as a whole when the day turns.
//
// The invariant this relies on: no write lands on a past day. True for one clock; a second instance whose clock
// lags by a few seconds at midnight could add a row to "yesterday" after it was cached — then the count is off by
// those players until the process restarts or the day turns again. Documented in docs/messenger-admin-analytics.md.
import type { Database } from "bun:sqlite";

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
const caches = new WeakMap<Database, Cache>();

function cacheOf(db: Database, today: string): Cache {
  let c = caches.get(db);
  if (!c || c.today !== today) {
    c = { today, sets: new Map(), dayCounts: new Map() };
    caches.set(db, c);
  }
  return c;
}

const DAY_MS = 86_400_000;
const prevDay = (day: string) => new Date(Date.parse(`${day}T00:00:00Z`) - DAY_MS).toISOString().slice(0, 10);
const inList = (n: number) => Array.from({ length: n }, () => "?").join(", ");

function closedSet(db: Database, c: Cache, game: string, from: string, closedTo: string): Float64Array {
  const key = `${game}|${from}|${closedTo}`;
  const hit = c.sets.get(key);
  if (hit) {
    // Refresh its place: the map's order is the eviction order.
    c.sets.delete(key);
    c.sets.set(key, hit);
    return hit;
  }
  const ids = db
    .query<[number], [string, string, string]>(
      "SELECT DISTINCT telegram_user_id FROM messenger_daily_players WHERE day BETWEEN ? AND ? AND game_key = ? ORDER BY telegram_user_id",
    )
    .values(from, closedTo, game)
    .map((r) => r[0]);
  const set = Float64Array.from(ids);
  if (c.sets.size >= MAX_SETS) c.sets.delete(c.sets.keys().next().value!);
  c.sets.set(key, set);
  return set;
}

/** The union of sorted id arrays, sorted. */
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
function closedUnion(db: Database, c: Cache, games: string[], from: string, closedTo: string): Float64Array {
  if (games.length === 1) return closedSet(db, c, games[0]!, from, closedTo);
  const key = `${games.join(",")}|${from}|${closedTo}`;
  const hit = c.sets.get(key);
  if (hit) return hit;
  const merged = union(games.map((g) => closedSet(db, c, g, from, closedTo)));
  if (c.sets.size >= MAX_SETS) c.sets.delete(c.sets.keys().next().value!);
  c.sets.set(key, merged);
  return merged;
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
function todaysIds(db: Database, today: string, games: string[]): Iterable<number> {
  const ids = db
    .query<[number], string[]>(`SELECT telegram_user_id FROM messenger_daily_players WHERE day = ? AND game_key IN (${inList(games.length)})`)
    .values(today, ...games)
    .map((r) => r[0] as number);
  return games.length === 1 ? ids : new Set(ids);
}

/**
 * Distinct players over [from, to] in any of `games` (game keys of the aggregates; "" = any ledger action).
 * `today` is the clock's UTC day; `to` is never after it.
 */
export function distinctPlayers(db: Database, window: { from: string; to: string }, today: string, games: string[]): number {
  if (games.length === 0) return 0;
  const c = cacheOf(db, today);
  const closedTo = window.to < today ? window.to : prevDay(today);
  const closed = window.from <= closedTo ? closedUnion(db, c, games, window.from, closedTo) : new Float64Array(0);
  if (window.to < today) return closed.length;
  let extra = 0;
  for (const id of todaysIds(db, today, games)) if (!has(closed, id)) extra++;
  return closed.length + extra;
}

/** Distinct players per day of [from, to] in any of `games`: closed days cached, today read live. */
export function playersPerDay(db: Database, window: { from: string; to: string }, today: string, games: string[]): Map<string, number> {
  const out = new Map<string, number>();
  if (games.length === 0) return out;
  const c = cacheOf(db, today);
  const gamesKey = games.join(",");
  const missing: string[] = [];
  for (let day = window.from; day <= window.to; day = new Date(Date.parse(`${day}T00:00:00Z`) + DAY_MS).toISOString().slice(0, 10)) {
    const hit = day < today ? c.dayCounts.get(`${day}|${gamesKey}`) : undefined;
    if (hit === undefined) missing.push(day);
    else out.set(day, hit);
  }
  if (missing.length > 0) {
    const rows = db
      .query<{ day: string; n: number }, string[]>(
        `SELECT day, COUNT(DISTINCT telegram_user_id) AS n FROM messenger_daily_players WHERE day BETWEEN ? AND ? AND game_key IN (${inList(games.length)}) GROUP BY day`,
      )
      .all(missing[0]!, missing[missing.length - 1]!, ...games);
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
