import { type Param, placeholders, type Queryable, type Store } from "../../db/port";
import { BUCKET_COLUMNS, BUCKET_COUNT, bucketOf } from "./histogram";
import { compareText, hourOf, hourStartIso, nextHour } from "./hours";
import type { TimedEntry } from "./tables";

// The request log's hourly summaries (request_summary_hourly, tables.ts): per UTC hour, partner key and route
// template, the requests by outcome and a latency histogram (histogram.ts). The flush adds each batch to them in the
// transaction that writes its rows, so a summary never counts a row that was rolled back; readers (usage analytics,
// partner status, the public latency figures) read a few summary rows per hour of their window, whatever the size of
// request_log (usage analytics over 30 days took 4.9 s at 3M rows that way, the status page 1.45 s).

/** The key_ref of the row that counts every request of its hour and route, with a partner key or without. */
export const ALL_KEYS = 0;

/** A request as the summaries count it. */
type SummaryRow = Pick<TimedEntry, "at" | "route" | "status" | "latencyUs">;

/** One summary row's increments. */
interface Cell {
  keyRef: number;
  hour: string;
  route: string;
  requests: number;
  clientErrors: number;
  serverErrors: number;
  rateLimited: number;
  buckets: Int32Array;
}

/** The counted columns, after the key (key_ref, hour or day, route). */
const COUNTS = ["requests", "client_errors", "server_errors", "rate_limited", ...BUCKET_COLUMNS];
const upsert = (table: string, period: "hour" | "day") =>
  `INSERT INTO ${table} (key_ref, ${period}, route, ${COUNTS.join(", ")}) VALUES (${placeholders(3 + COUNTS.length)})
  ON CONFLICT (key_ref, ${period}, route) DO UPDATE SET ${COUNTS.map((c) => `${c} = ${table}.${c} + excluded.${c}`).join(", ")}`;
const UPSERT = upsert("request_summary_hourly", "hour");
const UPSERT_DAY = upsert("request_summary_daily", "day");

/** Counts `r` in the row of every key and, when it has one, in its key's row. */
function countRow(cells: Map<string, Cell>, keyRef: number | null, hour: string, r: SummaryRow): void {
  count(cells, ALL_KEYS, hour, r);
  if (keyRef !== null) count(cells, keyRef, hour, r);
}

function count(cells: Map<string, Cell>, keyRef: number, hour: string, r: SummaryRow): void {
  const id = `${keyRef}\u0000${hour}\u0000${r.route}`;
  let c = cells.get(id);
  if (!c) {
    c = { keyRef, hour, route: r.route, requests: 0, clientErrors: 0, serverErrors: 0, rateLimited: 0, buckets: new Int32Array(BUCKET_COUNT) };
    cells.set(id, c);
  }
  c.requests++;
  if (r.status >= 500) c.serverErrors++;
  else if (r.status >= 400) c.clientErrors++;
  if (r.status === 429) c.rateLimited++;
  c.buckets[bucketOf(r.latencyUs)]!++;
}

/**
 * A batch's summary increments: one cell per (key, hour, route) and one per (every key, hour, route), in key order so
 * that two instances flushing at once on PostgreSQL lock summary rows in the same order (no deadlock).
 */
export function summaryCells<R extends SummaryRow>(rows: readonly R[], keyRefOf: (row: R) => number | null): Cell[] {
  const cells = new Map<string, Cell>();
  for (const r of rows) countRow(cells, keyRefOf(r), hourOf(r.at), r);
  return [...cells.values()].sort((a, b) => a.keyRef - b.keyRef || compareText(a.hour, b.hour) || compareText(a.route, b.route));
}

const paramsOf = (c: Cell): Param[] => [c.keyRef, c.hour, c.route, c.requests, c.clientErrors, c.serverErrors, c.rateLimited, ...c.buckets];

/**
 * Adds a batch to the summaries; call inside the flush's transaction after the hourly rollups (rollup.ts), whose row
 * lock orders a flush and an hour's rebuild (rebuildSummaryHour) on PostgreSQL. The statements are sent together.
 */
export async function applySummaries<R extends SummaryRow>(t: Queryable, rows: readonly R[], keyRefOf: (row: R) => number | null): Promise<void> {
  const cells = summaryCells(rows, keyRefOf);
  // The hourly rows, then the daily ones (each in the same order on every instance). A batch almost always falls in
  // one day, so each hourly cell is its day's cell; one that spans midnight adds two hours to a day separately.
  await Promise.all([
    ...cells.map((c) => t.run(UPSERT, paramsOf(c))),
    ...cells.map((c) => t.run(UPSERT_DAY, [c.keyRef, c.hour.slice(0, 10), ...paramsOf(c).slice(2)])),
  ]);
}

/** Rows of one hour read per statement by a rebuild (a bounded read each, on the `at` index). */
const REBUILD_PAGE = 5_000;

/**
 * Rebuilds one hour of the summaries from request_log, inside the caller's transaction, which has locked the hour
 * first (rollup.ts rebuildHour). The hour's rows are read in pages of 5,000 in `at` order: an hour holds what one
 * hour of traffic wrote (~14,000 rows at 10M requests a month), bounded by the traffic, not by the log's size.
 */
export async function rebuildSummaryHour(t: Queryable, hour: string): Promise<void> {
  await t.run("DELETE FROM request_summary_hourly WHERE hour = ?", [hour]);
  const to = hourStartIso(nextHour(hour));
  const cells = new Map<string, Cell>();
  let after = { at: hourStartIso(hour), id: 0 };
  for (;;) {
    const page = await t.all<{ id: number; at: string; route: string; status: number; latency_us: number; key_ref: number | null }>(
      `SELECT id, at, route, status, latency_us, key_ref FROM request_log WHERE at >= ? AND at < ? AND (at > ? OR (at = ? AND id > ?)) ORDER BY at, id LIMIT ${REBUILD_PAGE}`,
      [after.at, to, after.at, after.at, after.id],
    );
    for (const r of page) countRow(cells, r.key_ref, hour, { at: r.at, route: r.route, status: r.status, latencyUs: r.latency_us });
    if (page.length < REBUILD_PAGE) break;
    const last = page[page.length - 1]!;
    after = { at: last.at, id: last.id };
  }
  const sorted = [...cells.values()].sort((a, b) => a.keyRef - b.keyRef || compareText(a.route, b.route));
  for (const c of sorted) await t.run(UPSERT, paramsOf(c));
  await rebuildSummaryDay(t, hour.slice(0, 10));
}

const DAY_SUMS = COUNTS.map((c) => `sum(${c})`).join(", ");

/**
 * Recomputes one day of request_summary_daily from that day's hourly rows (at most 24 a key and route), in one
 * statement inside the caller's transaction: after an hour of it was rebuilt, or for a day whose daily rows do not
 * match its hourly ones (levelDailySummaries).
 */
export async function rebuildSummaryDay(t: Queryable, day: string): Promise<void> {
  await t.run("DELETE FROM request_summary_daily WHERE day = ?", [day]);
  await t.run(
    `INSERT INTO request_summary_daily (key_ref, day, route, ${COUNTS.join(", ")})
     SELECT key_ref, ?, route, ${DAY_SUMS} FROM request_summary_hourly WHERE hour >= ? AND hour <= ? GROUP BY key_ref, route`,
    [day, `${day}T00`, `${day}T23`],
  );
}

/**
 * Rebuilds each day whose daily rows count other than its hourly ones (every key's row, key_ref 0): the days of a
 * database from before the daily rows, after its hourly catch-up. Reads the summaries' own rows (31 days of them at
 * most: their retention), never request_log; one transaction a day. Returns the days rebuilt.
 */
export async function levelDailySummaries(store: Store): Promise<number> {
  const hourly = await store.all<{ day: string; n: number }>(
    "SELECT substr(hour, 1, 10) AS day, sum(requests) AS n FROM request_summary_hourly WHERE key_ref = ? GROUP BY substr(hour, 1, 10)",
    [ALL_KEYS],
  );
  const daily = new Map(
    (await store.all<{ day: string; n: number }>("SELECT day, sum(requests) AS n FROM request_summary_daily WHERE key_ref = ? GROUP BY day", [ALL_KEYS])).map(
      (r) => [r.day, Number(r.n)],
    ),
  );
  let rebuilt = 0;
  for (const h of hourly) {
    if (daily.get(h.day) === Number(h.n)) continue;
    await store.tx((t) => rebuildSummaryDay(t, h.day));
    rebuilt++;
  }
  return rebuilt;
}

/** Per route over a window of hours: the counts and the histogram, summed. */
export interface RouteSummary {
  route: string;
  requests: number;
  client_errors: number;
  server_errors: number;
  rate_limited: number;
  buckets: number[];
}

const SUMS = COUNTS.map((c) => `sum(${c}) AS ${c}`).join(", ");

/** The day `n` days after `day` (`YYYY-MM-DD`; n = −1: the day before). */
const dayAfter = (day: string, n = 1) => new Date(Date.parse(`${day}T00:00:00.000Z`) + n * 86_400_000).toISOString().slice(0, 10);

/**
 * The window [fromHour, toHour] as the days it holds whole (read from the daily rows) and the hours left at either
 * end (read from the hourly ones): at most 23 hours before the first whole day and 24 after the last.
 */
export function windowParts(fromHour: string, toHour: string): { days: [string, string] | null; hours: Array<[string, string]> } {
  const firstDay = fromHour.endsWith("T00") ? fromHour.slice(0, 10) : dayAfter(fromHour.slice(0, 10));
  const lastDay = toHour.endsWith("T23") ? toHour.slice(0, 10) : dayAfter(toHour.slice(0, 10), -1);
  if (firstDay > lastDay) return { days: null, hours: [[fromHour, toHour]] };
  const hours: Array<[string, string]> = [];
  if (fromHour < `${firstDay}T00`) hours.push([fromHour, `${dayAfter(firstDay, -1)}T23`]);
  if (toHour > `${lastDay}T23`) hours.push([`${dayAfter(lastDay)}T00`, toHour]);
  return { days: [firstDay, lastDay], hours };
}

/**
 * The summaries of one key (its request_log_keys.ref, by `key.sql`'s one parameter) or of every request (`key: null`)
 * from `fromHour` to `toHour` (both included), per route: the whole days of the window from the daily rows, the hours
 * at its ends from the hourly ones, down their primary keys (key_ref, day or hour, route) — at most (days + 47) ×
 * routes rows, whatever request_log holds.
 */
export async function routeSummaries(
  q: Queryable,
  w: { key: { sql: string; param: Param } | null; fromHour: string; toHour: string },
): Promise<RouteSummary[]> {
  const keyCond = w.key === null ? "key_ref = ?" : `key_ref = (${w.key.sql})`;
  const keyParam = w.key === null ? ALL_KEYS : w.key.param;
  const parts = windowParts(w.fromHour, w.toHour);
  const sums = (table: string, period: "hour" | "day", from: string, to: string) =>
    q.all<Record<string, number | string>>(`SELECT route, ${SUMS} FROM ${table} WHERE ${keyCond} AND ${period} >= ? AND ${period} <= ? GROUP BY route`, [
      keyParam,
      from,
      to,
    ]);
  const reads = parts.hours.map(([from, to]) => sums("request_summary_hourly", "hour", from, to));
  if (parts.days) reads.push(sums("request_summary_daily", "day", ...parts.days));
  const byRoute = new Map<string, RouteSummary>();
  for (const rows of await Promise.all(reads)) {
    for (const r of rows) {
      const route = String(r.route);
      let sum = byRoute.get(route);
      if (!sum) {
        sum = { route, requests: 0, client_errors: 0, server_errors: 0, rate_limited: 0, buckets: Array(BUCKET_COUNT).fill(0) };
        byRoute.set(route, sum);
      }
      for (const c of ["requests", "client_errors", "server_errors", "rate_limited"] as const) sum[c] += Number(r[c]);
      for (let i = 0; i < BUCKET_COUNT; i++) sum.buckets[i]! += Number(r[BUCKET_COLUMNS[i]!]);
    }
  }
  return [...byRoute.values()];
}
