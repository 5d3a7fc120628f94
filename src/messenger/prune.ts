// Retention of the messenger's bookkeeping rows. Game state (players, ledger, spins, grids, claims, missions,
// wallet proofs) is never pruned: balances are the sum of the ledger and proofs are facts.
import type { AppContext } from "../context";
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

export async function pruneMessenger(ctx: AppContext) {
  const now = ctx.clock.now().getTime();
  const before = (days: number) => new Date(now - days * DAY_MS).toISOString();
  return ctx.store.tx(async (t) => ({
    ...(await pruneBotRows(t, before(UPDATE_RETENTION_DAYS), before(OUTBOX_RETENTION_DAYS))),
    counters: await pruneCounters(t, before(COUNTER_RETENTION_DAYS)),
    wallet_challenges: await pruneChallenges(t, before(CHALLENGE_RETENTION_DAYS)),
  }));
}
