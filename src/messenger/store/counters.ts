import type { Queryable } from "../../db/port";
import type { RowOf } from "../../db/rows";
import type { messengerCounters } from "../tables";

// messenger_counters: hourly counters, one row per (hour, metric, label), incremented by one upsert.

type CounterRow = RowOf<typeof messengerCounters>;

export async function addToCounter(q: Queryable, hour: string, metric: string, label: string, n: number): Promise<void> {
  await q.run(
    `INSERT INTO messenger_counters (hour, metric, label, count) VALUES (?, ?, ?, ?)
     ON CONFLICT (hour, metric, label) DO UPDATE SET count = messenger_counters.count + excluded.count`,
    [hour, metric, label, n],
  );
}

/** Totals per metric and label since `sinceHour` (inclusive). */
export const countersSince = (q: Queryable, sinceHour: string) =>
  q.all<Pick<CounterRow, "metric" | "label" | "count">>(
    "SELECT metric, label, SUM(count) AS count FROM messenger_counters WHERE hour >= ? GROUP BY metric, label ORDER BY metric, label",
    [sinceHour],
  );

/** The rows of some metrics since `sinceHour`, one per hour and label (the bot preview's hourly series). */
export const counterRowsSince = (q: Queryable, sinceHour: string, metrics: readonly string[]) =>
  q.all<Pick<CounterRow, "hour" | "metric" | "label" | "count">>(
    `SELECT hour, metric, label, count FROM messenger_counters WHERE hour >= ? AND metric IN (${metrics.map(() => "?").join(", ")})`,
    [sinceHour, ...metrics],
  );

export async function pruneCounters(t: Queryable, beforeIso: string): Promise<number> {
  return (await t.run("DELETE FROM messenger_counters WHERE hour < ?", [beforeIso])).changes;
}
