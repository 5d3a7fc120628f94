import { index, integer, sqliteTable, text } from "drizzle-orm/sqlite-core";

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
    // Per-key usage windows: WHERE key_ref = ? AND at >= ?
    index("request_log_key_at_idx").on(t.keyRef, t.at),
    // Global windows (latency percentiles, pruning): WHERE at >= ?
    index("request_log_at_idx").on(t.at),
  ],
);

/**
 * The partner keys request_log has seen, each named once by a small integer. A row is added when a key's first
 * request is written (src/http/request-log.ts); rows are never changed or removed.
 */
export const requestLogKeys = sqliteTable("request_log_keys", {
  ref: integer("ref").primaryKey(),
  keyId: text("key_id").notNull().unique(),
});
