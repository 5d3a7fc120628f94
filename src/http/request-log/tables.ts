import { sql } from "drizzle-orm";
import { index, integer, primaryKey, sqliteTable, text } from "drizzle-orm/sqlite-core";
import { BUCKET_COLUMNS } from "./histogram";

/** Every request, written in batches off the request path; usage analytics and percentiles read it. */
export const requestLog = sqliteTable(
  "request_log",
  {
    id: integer("id").primaryKey({ autoIncrement: true }),
    at: text("at").notNull(),
    method: text("method").notNull(),
    route: text("route").notNull(),
    status: integer("status").notNull(),
    latencyUs: integer("latency_us").notNull(),
    /** The partner key, as its request_log_keys.ref (a small integer instead of the 32-character id in every row and index entry). */
    keyRef: integer("key_ref"),
    clientIp: text("client_ip"),
    requestId: text("request_id").notNull(),
    errorCode: text("error_code"),
  },
  (t) => [
    // Per-key usage windows: WHERE key_ref = ? AND at >= ? (which implies key_ref IS NOT NULL, so both engines use
    // this partial index). A request without a partner key — public routes, the console, the mini-app — writes no
    // entry here: one B-tree insert fewer a row (bench/README.md "The logged route with one cost switched off").
    index("request_log_key_at_idx").on(t.keyRef, t.at).where(sql`key_ref IS NOT NULL`),
    // Global windows (latency percentiles, pruning): WHERE at >= ?
    index("request_log_at_idx").on(t.at),
  ],
);

/**
 * The partner keys request_log has seen, each named once by a small integer. A row is added when a key's first
 * request is written (src/http/request-log/log.ts); rows are never changed or removed.
 */
export const requestLogKeys = sqliteTable("request_log_keys", {
  ref: integer("ref").primaryKey(),
  keyId: text("key_id").notNull().unique(),
});

/** Hourly rollups of request_log (rollup.ts), read by the 403 digest and readiness exports; `hour` is `YYYY-MM-DDTHH`. */
export const requestLogHourly = sqliteTable("request_log_hourly", {
  hour: text("hour").primaryKey(),
  requests: integer("requests").notNull().default(0),
  forbidden: integer("forbidden").notNull().default(0),
});

/** The 403s of each hour by route template, partner key (its id, "" without one) and client prefix (IPv4 /24, IPv6 /48). */
export const requestLog403Hourly = sqliteTable(
  "request_log_403_hourly",
  {
    hour: text("hour").notNull(),
    route: text("route").notNull(),
    partnerKeyId: text("partner_key_id").notNull(),
    clientPrefix: text("client_prefix").notNull(),
    count: integer("count").notNull().default(0),
  },
  (t) => [primaryKey({ columns: [t.hour, t.route, t.partnerKeyId, t.clientPrefix] }), index("request_log_403_hourly_route_idx").on(t.route, t.hour)],
);

const count = (name: string) => integer(name).notNull().default(0);
/** One column per latency bucket (histogram.ts): h0 … h89, each a count of requests. */
const bucketColumns: Record<string, ReturnType<typeof count>> = Object.fromEntries(BUCKET_COLUMNS.map((c) => [c, count(c)]));

/** A summary row's counts: the requests answered, by outcome, and their latency histogram. */
const summaryCounts = {
  requests: count("requests"),
  /** Answered 400–499 (429 included). */
  clientErrors: count("client_errors"),
  /** Answered 500 or above. */
  serverErrors: count("server_errors"),
  rateLimited: count("rate_limited"),
  ...bucketColumns,
};

/**
 * Per hour, partner key and route template: the requests by outcome and a latency histogram (summary.ts), which usage
 * analytics, partner status and the public latency figures read instead of request_log. `key_ref` 0 counts every
 * request of the hour and route, with a key or without.
 */
export const requestSummaryHourly = sqliteTable(
  "request_summary_hourly",
  {
    keyRef: integer("key_ref").notNull(),
    hour: text("hour").notNull(),
    route: text("route").notNull(),
    ...summaryCounts,
  },
  (t) => [primaryKey({ columns: [t.keyRef, t.hour, t.route] }), index("request_summary_hourly_hour_idx").on(t.hour)],
);

/**
 * request_summary_hourly folded per UTC day (`day` is `YYYY-MM-DD`), kept by the same flush in the same transaction,
 * and recomputed from the day's hours when one of them is rebuilt (summary.ts): a 720-hour window reads 30 days of
 * these and at most 47 hours of the hourly rows, instead of 720 hours (bench scale: 9,400 rows of 94 columns, 34 ms).
 */
export const requestSummaryDaily = sqliteTable(
  "request_summary_daily",
  {
    keyRef: integer("key_ref").notNull(),
    day: text("day").notNull(),
    route: text("route").notNull(),
    ...summaryCounts,
  },
  (t) => [primaryKey({ columns: [t.keyRef, t.day, t.route] }), index("request_summary_daily_day_idx").on(t.day)],
);

/** What the HTTP core records of each request, written to request_log in batches (log.ts). */
export interface RequestLogEntry {
  /**
   * When the answer was made: ISO text, or milliseconds since 1970 (the HTTP core's, no Date or string made on the
   * request's path), turned into ISO text when the batch is written.
   */
  at: string | number;
  method: string;
  route: string;
  status: number;
  latencyUs: number;
  partnerKeyId: string | null;
  clientIp: string | null;
  requestId: string;
  errorCode: string | null;
}

/** An entry whose time is ISO text, as request_log.at holds it. */
export type TimedEntry = RequestLogEntry & { at: string };
