// Hourly counters behind GET /api/messenger/ops/health. Stored, not kept in memory, so several instances and a
// restart still report the same numbers (DESIGN.md §8).
import type { Database } from "bun:sqlite";
import type { Clock } from "../clock";

export type CounterMetric =
  | "updates_received"
  | "updates_replayed"
  | "updates_ignored"
  | "init_data_failures"
  | "plays"
  | "bot_api_errors"
  | "bot_messages_sent";

export const hourOf = (ms: number) => new Date(Math.floor(ms / 3_600_000) * 3_600_000).toISOString();

export function bump(db: Database, clock: Clock, metric: CounterMetric, label: string, n = 1): void {
  db.query(
    "INSERT INTO messenger_counters (hour, metric, label, count) VALUES (?1, ?2, ?3, ?4) ON CONFLICT (hour, metric, label) DO UPDATE SET count = count + excluded.count",
  ).run(hourOf(clock.now().getTime()), metric, label, n);
}

/** Totals per metric and label since `sinceHour` (inclusive). */
export function countersSince(db: Database, sinceHour: string): Array<{ metric: CounterMetric; label: string; count: number }> {
  return db
    .query<{ metric: CounterMetric; label: string; count: number }, [string]>(
      "SELECT metric, label, SUM(count) AS count FROM messenger_counters WHERE hour >= ? GROUP BY metric, label ORDER BY metric, label",
    )
    .all(sinceHour);
}
