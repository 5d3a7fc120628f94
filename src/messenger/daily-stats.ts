// The game ledger's daily aggregates (messenger_daily_stats, messenger_daily_players), folded in from the ledger in
// batches by the messenger-stats-fold job and before every operator read, so an answer counts every committed play.
// In each play's own transaction the upserts cost ~58 µs over an empty transaction's ~11 µs (session 5).
// Exactly once on any engine and instance count: a ledger row's `folded` flag is set by the transaction that adds it
// (claimUnfolded), not a watermark over ids, which commit out of order on PostgreSQL. Folds take the
// "daily_players" version row first, so they run one at a time and a read's fold waits for one in flight.
// Days are UTC dates (YYYY-MM-DD), the prefix of the ledger row's created_at.
import type { AppContext } from "../context";
import { anyUnfolded, claimUnfolded, type UnfoldedRow } from "./store/ledger";
import { addDailyPlayers, addDailyStats, type StatsRow } from "./store/stats";
import { bumpVersion, lockVersionRow } from "./store/versions";
import { versionWatch } from "./version-watch";

/**
 * At most this many ledger rows per fold transaction; a longer backlog is folded in several, each begun in a turn of
 * the event loop of its own (the store's transactions are). A transaction runs on SQLite's one thread from its claim
 * to its last upsert: 50,000 rows held every request ~330 ms, 2,000 ~7 ms.
 */
export const FOLD_BATCH_ROWS = 2_000;
/** At most this many batches per call: a larger backlog is left to the next run (the loop stays bounded). */
const MAX_BATCHES = 1000;
/**
 * A day counts as closed for the players window (src/messenger/admin/players-window.ts) once it has ended by the
 * reader's clock, which may run ahead of the folding instance's: a fold into a day that ends within this margin of
 * its own clock bumps the daily_players version, so readers drop the closed days they cached.
 */
export const CLOSED_DAY_MARGIN_MS = 10 * 60_000;

const dayOf = (iso: string) => iso.slice(0, 10);

/** Each summed balance: its aggregate columns' prefix (granted = positive deltas, spent = negative) and its ledger delta. */
const SUMMED = [
  ["free_spins", "free_spin_delta"],
  ["missiles", "missile_delta"],
  ["points", "points_delta"],
] as const;

/** The sums of a batch of ledger rows, per (day, action, game) and per (day, game, player), game "" = any action. */
function sums(rows: UnfoldedRow[]) {
  const stats = new Map<string, StatsRow>();
  const players = new Map<string, { day: string; game_key: string; telegram_user_id: number; entries: number }>();
  const addPlayer = (day: string, game: string, uid: number) => {
    const k = `${day}|${game}|${uid}`;
    const p = players.get(k);
    if (p) p.entries++;
    else players.set(k, { day, game_key: game, telegram_user_id: uid, entries: 1 });
  };
  for (const r of rows) {
    const day = dayOf(r.created_at);
    const game = r.game_key ?? "";
    const k = `${day}|${r.action}|${game}`;
    let s = stats.get(k);
    if (!s) {
      const zero = { entries: 0, ...Object.fromEntries(SUMMED.flatMap(([name]) => [`${name}_granted`, `${name}_spent`]).map((c) => [c, 0])) };
      s = { day, action: r.action, game_key: game, ...zero } as StatsRow;
      stats.set(k, s);
    }
    s.entries++;
    for (const [name, delta] of SUMMED) {
      s[`${name}_granted`] += Math.max(0, r[delta]);
      s[`${name}_spent`] += Math.max(0, -r[delta]);
    }
    if (r.game_key !== null) addPlayer(day, r.game_key, r.telegram_user_id);
    addPlayer(day, "", r.telegram_user_id);
  }
  return { stats: [...stats.values()], players: [...players.values()] };
}

/** Folds at most `maxRows` unfolded ledger rows into the aggregates, in one transaction; how many. */
async function foldBatch(ctx: AppContext, maxRows: number): Promise<number> {
  const now = ctx.clock.now();
  const nowIso = now.toISOString();
  // Days before this one may already be cached as closed by a reader whose clock is up to the margin ahead.
  const closedBefore = dayOf(new Date(now.getTime() + CLOSED_DAY_MARGIN_MS).toISOString());
  const { folded, late } = await ctx.store.tx(async (t) => {
    await lockVersionRow(t, "daily_players", nowIso);
    const rows = await claimUnfolded(t, maxRows);
    if (rows.length === 0) return { folded: 0, late: false };
    const { stats, players } = sums(rows);
    await addDailyStats(t, stats);
    await addDailyPlayers(t, players);
    const closedDay = players.some((p) => p.day < closedBefore);
    if (closedDay) await bumpVersion(t, "daily_players", nowIso);
    return { folded: rows.length, late: closedDay };
  });
  // This instance's players window re-reads the counter on its next read (other instances within a second).
  if (late) versionWatch(ctx, "daily_players").reset();
  return folded;
}

/**
 * Brings the aggregates up to every committed ledger row (in batches of FOLD_BATCH_ROWS). Nothing to fold costs one
 * read of the partial index and no write. Returns how many ledger rows were folded.
 */
export async function foldLedger(ctx: AppContext, maxRows = FOLD_BATCH_ROWS): Promise<number> {
  let folded = 0;
  for (let i = 0; i < MAX_BATCHES && (await anyUnfolded(ctx.store)); i++) {
    const n = await foldBatch(ctx, maxRows);
    if (n === 0) break;
    folded += n;
  }
  return folded;
}
