// Hourly counters behind GET /api/messenger/ops/health. Stored, not kept in memory, so several instances and a
// restart still report the same numbers (docs/design.md §8).
import type { Clock } from "../clock";
import { type AppContext, slot, stateOf } from "../context";
import type { Queryable } from "../db/port";
import { errorFields } from "../log";
import { addToCounter, countersSince as rowsSince } from "./store/counters";

export type CounterMetric =
  | "updates_received"
  | "updates_replayed"
  | "updates_ignored"
  | "init_data_failures"
  | "plays"
  | "bot_api_errors"
  | "bot_messages_sent";

export const hourOf = (ms: number) => new Date(Math.floor(ms / 3_600_000) * 3_600_000).toISOString();

/** Counts `n` in the current hour: on the store, or in the transaction `q` of the event it counts. */
export function bump(q: Queryable, clock: Clock, metric: CounterMetric, label: string, n = 1): Promise<void> {
  return addToCounter(q, hourOf(clock.now().getTime()), metric, label, n);
}

/**
 * Counts written just behind their committed transaction, one upsert per (hour, metric, label) per write. For plays,
 * whose counter row is every player's: its lock held to each play's commit serialised PostgreSQL's group-commit
 * batches (50 players: 436 plays/s with it inside, 865/s without; bench/README.md). A kill -9 loses the counts not
 * yet written; SIGTERM writes them (serve), and this instance's readers write them first.
 */
class CountsBehind {
  private readonly pending = new Map<string, { hour: string; metric: CounterMetric; label: string; n: number }>();
  private writing: Promise<boolean> | null = null;

  constructor(private readonly ctx: AppContext) {}

  add(metric: CounterMetric, label: string, n = 1): void {
    this.keep([{ hour: hourOf(this.ctx.clock.now().getTime()), metric, label, n }]);
    void this.write();
  }

  /** Writes what is pending, after the write in flight. A write that fails keeps its counts for the next. */
  async flush(): Promise<void> {
    if (this.writing) await this.writing;
    if (this.pending.size) await this.write();
  }

  private write(): Promise<boolean> {
    if (this.writing) return this.writing;
    if (!this.pending.size) return Promise.resolve(true);
    const rows = [...this.pending.values()];
    this.pending.clear();
    // One statement each, no transaction around them (usually one row: the plays of this hour).
    const written = (async () => {
      for (let i = 0; i < rows.length; i++) {
        const r = rows[i]!;
        try {
          await addToCounter(this.ctx.store, r.hour, r.metric, r.label, r.n);
        } catch (err) {
          this.keep(rows.slice(i)); // for the next add or flush (not retried from here: an outage would spin)
          this.ctx.log.warn("messenger counters write failed; kept for the next", errorFields(err));
          return false;
        }
      }
      return true;
    })();
    this.writing = written;
    void written.then((ok) => {
      this.writing = null;
      if (ok && this.pending.size) void this.write();
    });
    return written;
  }

  /** Adds rows to the pending ones, one per (hour, metric, label). */
  private keep(rows: Array<{ hour: string; metric: CounterMetric; label: string; n: number }>): void {
    for (const r of rows) {
      const newer = this.pending.get(`${r.hour} ${r.metric} ${r.label}`);
      if (newer) newer.n += r.n;
      else this.pending.set(`${r.hour} ${r.metric} ${r.label}`, r);
    }
  }
}

const COUNTS_BEHIND = slot("messenger counts written behind their transactions", (ctx) => new CountsBehind(ctx));

/** Counts `n` in the current hour once the caller's transaction has committed (see CountsBehind). */
export function countAfterCommit(ctx: AppContext, metric: CounterMetric, label: string, n = 1): void {
  stateOf(ctx, COUNTS_BEHIND).add(metric, label, n);
}

/** Writes the counts this instance still holds: before a read of the counters, and at shutdown (serve). */
export async function flushCounts(ctx: AppContext): Promise<void> {
  await ctx.state.peek(COUNTS_BEHIND)?.flush();
}

/** Totals per metric and label since `sinceHour` (inclusive), with this instance's plays counted after their commits. */
export async function countersSince(ctx: AppContext, sinceHour: string) {
  await flushCounts(ctx);
  return (await rowsSince(ctx.store, sinceHour)) as Array<{ metric: CounterMetric; label: string; count: number }>;
}
