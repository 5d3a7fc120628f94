// Hourly counters behind GET /api/messenger/ops/health. Stored, not kept in memory, so several instances and a
// restart still report the same numbers (DESIGN.md §8).
import type { Clock } from "../clock";
import type { Queryable } from "../db/port";
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

/** Totals per metric and label since `sinceHour` (inclusive). */
export async function countersSince(q: Queryable, sinceHour: string): Promise<Array<{ metric: CounterMetric; label: string; count: number }>> {
  return (await rowsSince(q, sinceHour)) as Array<{ metric: CounterMetric; label: string; count: number }>;
}
