import type { Param, Queryable } from "../../db/port";
import { BUCKET_COLUMNS, BUCKET_COUNT, bucketOf } from "./histogram";
import { hourOf, hourStartIso, nextHour } from "./hours";

// The request log's hourly summaries (request_summary_hourly, tables.ts): per UTC hour, partner key and route
// template, the requests by outcome and a latency histogram (histogram.ts). The flush adds each batch to them in the
// transaction that writes its rows, so a summary never counts a row that was rolled back; readers (usage analytics,
// partner status, the public latency figures) read a few summary rows per hour of their window, whatever the size of
// request_log (issue 72: usage analytics over 30 days took 4.9 s at 3M rows, the status page 1.45 s).

/** The key_ref of the row that counts every request of its hour and route, with a partner key or without. */
export const ALL_KEYS = 0;

/** A request as the summaries count it. */
export interface SummaryRow {
  at: string;
  route: string;
  status: number;
  latencyUs: number;
}

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

const COLUMNS = ["key_ref", "hour", "route", "requests", "client_errors", "server_errors", "rate_limited", ...BUCKET_COLUMNS];
const ADDED = COLUMNS.slice(3)
  .map((c) => `${c} = request_summary_hourly.${c} + excluded.${c}`)
  .join(", ");
const UPSERT = `INSERT INTO request_summary_hourly (${COLUMNS.join(", ")}) VALUES (${COLUMNS.map(() => "?").join(", ")})
  ON CONFLICT (key_ref, hour, route) DO UPDATE SET ${ADDED}`;

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
  for (const r of rows) {
    const hour = hourOf(r.at);
    count(cells, ALL_KEYS, hour, r);
    const ref = keyRefOf(r);
    if (ref !== null) count(cells, ref, hour, r);
  }
  return [...cells.values()].sort(
    (a, b) => a.keyRef - b.keyRef || (a.hour < b.hour ? -1 : a.hour > b.hour ? 1 : a.route < b.route ? -1 : a.route > b.route ? 1 : 0),
  );
}

const paramsOf = (c: Cell): Param[] => [c.keyRef, c.hour, c.route, c.requests, c.clientErrors, c.serverErrors, c.rateLimited, ...c.buckets];

/**
 * Adds a batch to the summaries; call inside the flush's transaction after the hourly rollups (rollup.ts), whose row
 * lock orders a flush and an hour's rebuild (rebuildSummaryHour) on PostgreSQL. The statements are sent together.
 */
export async function applySummaries<R extends SummaryRow>(t: Queryable, rows: readonly R[], keyRefOf: (row: R) => number | null): Promise<void> {
  await Promise.all(summaryCells(rows, keyRefOf).map((c) => t.run(UPSERT, paramsOf(c))));
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
    for (const r of page) {
      const row = { at: r.at, route: r.route, status: r.status, latencyUs: r.latency_us };
      count(cells, ALL_KEYS, hour, row);
      if (r.key_ref !== null) count(cells, r.key_ref, hour, row);
    }
    if (page.length < REBUILD_PAGE) break;
    const last = page[page.length - 1]!;
    after = { at: last.at, id: last.id };
  }
  const sorted = [...cells.values()].sort((a, b) => a.keyRef - b.keyRef || (a.route < b.route ? -1 : a.route > b.route ? 1 : 0));
  for (const c of sorted) await t.run(UPSERT, paramsOf(c));
}

/** The hour of the summaries holding `iso`, and the hour `hours` earlier: a window of whole hours. */
export function summaryHours(iso: string, hours: number): { fromHour: string; toHour: string } {
  const toHour = hourOf(iso);
  return { fromHour: hourOf(new Date(Date.parse(hourStartIso(toHour)) - hours * 3_600_000).toISOString()), toHour };
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

const SUMS = ["requests", "client_errors", "server_errors", "rate_limited", ...BUCKET_COLUMNS].map((c) => `sum(${c}) AS ${c}`).join(", ");

/**
 * The summaries of one key (its request_log_keys.ref given by `keyRefSql`'s one parameter) or of every request
 * (`key: null`) from `fromHour` to `toHour` (both included), per route. One row per route: the statement reads the
 * window's summary rows down the primary key (key_ref, hour, route) — hours × routes rows, whatever request_log holds.
 */
export async function routeSummaries(
  q: Queryable,
  w: { key: { sql: string; param: Param } | null; fromHour: string; toHour: string },
): Promise<RouteSummary[]> {
  const keyCond = w.key === null ? "key_ref = ?" : `key_ref = (${w.key.sql})`;
  const rows = await q.all<Record<string, number | string>>(
    `SELECT route, ${SUMS} FROM request_summary_hourly WHERE ${keyCond} AND hour >= ? AND hour <= ? GROUP BY route`,
    [w.key === null ? ALL_KEYS : w.key.param, w.fromHour, w.toHour],
  );
  return rows.map((r) => ({
    route: String(r.route),
    requests: Number(r.requests),
    client_errors: Number(r.client_errors),
    server_errors: Number(r.server_errors),
    rate_limited: Number(r.rate_limited),
    buckets: BUCKET_COLUMNS.map((c) => Number(r[c])),
  }));
}
