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
    partnerKeyId: text("partner_key_id"),
    clientIp: text("client_ip"),
    requestId: text("request_id").notNull(),
    errorCode: text("error_code"),
  },
  (t) => [
    // Per-key usage windows: WHERE partner_key_id = ? AND at >= ?
    index("request_log_key_at_idx").on(t.partnerKeyId, t.at),
    // Global windows (latency percentiles, pruning): WHERE at >= ?
    index("request_log_at_idx").on(t.at),
  ],
);
