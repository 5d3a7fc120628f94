// Retention of the messenger's bookkeeping rows. Game state (players, ledger, spins, grids, claims, missions,
// wallet proofs) is never pruned: balances are the sum of the ledger and proofs are facts.
import type { AppContext } from "../context";

const DAY_MS = 86_400_000;
/** Telegram redelivers an unacknowledged update for at most 24 h; a week keeps a wide margin for replay suppression. */
export const UPDATE_RETENTION_DAYS = 7;
export const OUTBOX_RETENTION_DAYS = 30;
export const COUNTER_RETENTION_DAYS = 90;
/** Expired or used wallet challenges are kept a day for support questions. */
export const CHALLENGE_RETENTION_DAYS = 1;

export function pruneMessenger(ctx: AppContext) {
  const db = ctx.db.sqlite;
  const now = ctx.clock.now().getTime();
  const before = (days: number) => new Date(now - days * DAY_MS).toISOString();
  return db.transaction(() => ({
    updates: db.query("DELETE FROM messenger_updates WHERE received_at < ?").run(before(UPDATE_RETENTION_DAYS)).changes,
    bot_replies: db.query("DELETE FROM messenger_bot_outbox WHERE status IN ('sent', 'dead') AND created_at < ?").run(before(OUTBOX_RETENTION_DAYS)).changes,
    counters: db.query("DELETE FROM messenger_counters WHERE hour < ?").run(before(COUNTER_RETENTION_DAYS)).changes,
    wallet_challenges: db.query("DELETE FROM messenger_wallet_challenges WHERE expires_at < ?").run(before(CHALLENGE_RETENTION_DAYS)).changes,
  }))();
}
