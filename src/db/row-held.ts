// Waiting for a row another transaction holds, outside one's own transaction. On PostgreSQL a
// transaction that meets a row lock waits for it inside itself, and its deadline (DATABASE_TRANSACTION_TIMEOUT_MS,
// 5 s) runs meanwhile: sixteen sandbox resets of one partner arriving together over several instances queued on the
// partner's fixture row, one behind another, and the last ones answered 503. A body that would rather not wait
// takes its row with `SKIP LOCKED` and, finding it held, throws RowHeldElsewhere: its transaction ends at once
// (nothing it did is kept), and `retryWhileHeld` waits outside any transaction, then runs it again. SQLite has no
// row locks (a transaction holds the one writer): there the row is never held elsewhere and the first run is the one.

/** Thrown by a transaction body that found a row it needs held by another transaction, rather than wait for it. */
export class RowHeldElsewhere extends Error {
  constructor(what: string) {
    super(`${what} is held by another transaction`);
    this.name = "RowHeldElsewhere";
  }
}

/** How long runs that find their row held are tried again before the last one waits for it inside its transaction. */
export const HELD_ROW_RETRY_MS = 30_000;

/** The pauses between runs: short at first (most holders are a transaction of milliseconds), then every 50 ms. */
const FIRST_PAUSE_MS = 2;
const LONGEST_PAUSE_MS = 50;

/**
 * Runs `run` (a whole transaction) until it does not throw RowHeldElsewhere, pausing outside any transaction between
 * runs. `lastRun` is true for the run after `maxMs` of them: it should then wait for the row inside its transaction
 * (bounded by the transaction's deadline), so that a row held without a pause — a stream of transactions that hold
 * it shared, one overlapping the next — cannot hold the caller off for ever.
 */
export async function retryWhileHeld<T>(run: (lastRun: boolean) => Promise<T>, maxMs = HELD_ROW_RETRY_MS): Promise<T> {
  const until = performance.now() + maxMs;
  for (let pause = FIRST_PAUSE_MS; ; pause = Math.min(2 * pause, LONGEST_PAUSE_MS)) {
    const lastRun = performance.now() >= until;
    try {
      return await run(lastRun);
    } catch (err) {
      if (lastRun || !(err instanceof RowHeldElsewhere)) throw err;
    }
    await Bun.sleep(pause);
  }
}
