// Retention of the messenger's bookkeeping rows. Game state (players, ledger, spins, grids, claims, missions,
// wallet proofs) is never pruned: balances are the sum of the ledger and proofs are facts.
import type { AppContext } from "../context";
import { type BatchBound, DAILY_PRUNE_MAX_MS, unfinished } from "../db/batched-delete";
import { pruneBotRows } from "./store/bot";
import { pruneCounters } from "./store/counters";
import { pruneChallenges } from "./store/wallets";

const DAY_MS = 86_400_000;
/** Telegram redelivers an unacknowledged update for at most 24 h; a week keeps a wide margin for replay suppression. */
export const UPDATE_RETENTION_DAYS = 7;
export const OUTBOX_RETENTION_DAYS = 30;
export const COUNTER_RETENTION_DAYS = 90;
/** Expired or used wallet challenges are kept a day for support questions. */
export const CHALLENGE_RETENTION_DAYS = 1;

/**
 * The messenger-prune job (daily): each table in bounded batches (src/db/batched-delete.ts), the rows deleted per
 * table, and `done: false` when a time bound left rows for the next day's run.
 */
export async function pruneMessenger(ctx: AppContext, bound: BatchBound = { maxMs: DAILY_PRUNE_MAX_MS }) {
  const now = ctx.clock.now().getTime();
  const before = (days: number) => new Date(now - days * DAY_MS).toISOString();
  const bot = await pruneBotRows(ctx.store, before(UPDATE_RETENTION_DAYS), before(OUTBOX_RETENTION_DAYS), bound);
  const counters = await pruneCounters(ctx.store, before(COUNTER_RETENTION_DAYS), bound);
  const challenges = await pruneChallenges(ctx.store, before(CHALLENGE_RETENTION_DAYS), bound);
  return {
    updates: bot.updates.deleted,
    bot_replies: bot.bot_replies.deleted,
    counters: counters.deleted,
    wallet_challenges: challenges.deleted,
    ...unfinished(bot.updates, bot.bot_replies, counters, challenges),
  };
}
