import { type BatchBound, type BatchedDeleteResult, deleteInBatches } from "../../db/batched-delete";
import { placeholders, type Queryable, type Store } from "../../db/port";
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

export const countersSince = (q: Queryable, sinceHour: string) =>
  q.all<Pick<CounterRow, "metric" | "label" | "count">>(
    "SELECT metric, label, SUM(count) AS count FROM messenger_counters WHERE hour >= ? GROUP BY metric, label ORDER BY metric, label",
    [sinceHour],
  );

/** The rows of some metrics since `sinceHour`, one per hour and label (the bot preview's hourly series). */
export const counterRowsSince = (q: Queryable, sinceHour: string, metrics: readonly string[]) =>
  q.all<Pick<CounterRow, "hour" | "metric" | "label" | "count">>(
    `SELECT hour, metric, label, count FROM messenger_counters WHERE hour >= ? AND metric IN (${placeholders(metrics.length)})`,
    [sinceHour, ...metrics],
  );

/** Retention, in bounded batches down the primary key, whose first column is hour (src/db/batched-delete.ts). */
export function pruneCounters(store: Store, beforeIso: string, bound: BatchBound = {}): Promise<BatchedDeleteResult> {
  return deleteInBatches(store, { table: "messenger_counters", where: "hour < ?", params: [beforeIso], ...bound });
}
