import { index, integer, primaryKey, sqliteTable, text } from "drizzle-orm/sqlite-core";

/**
 * Hourly rollups of request_log, kept by the request-log flush in the same transaction as the rows it writes:
 * the operators' 403 digest and readiness exports read these (a few rows per hour), never request_log itself.
 * `hour` is the UTC hour as `YYYY-MM-DDTHH`.
 */
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

/**
 * Operator rules that keep known 403 noise out of the digest's findings: a path pattern and/or a partner key
 * and/or a client prefix, with a reason, an owner and an expiry (an expired rule stops applying). Audited.
 */
export const ops403Suppressions = sqliteTable(
  "ops_403_suppressions",
  {
    id: integer("id").primaryKey({ autoIncrement: true }),
    pathPattern: text("path_pattern"),
    partnerKeyId: text("partner_key_id"),
    clientPrefix: text("client_prefix"),
    reason: text("reason").notNull(),
    owner: text("owner").notNull(),
    expiresAt: text("expires_at").notNull(),
    createdAt: text("created_at").notNull(),
    createdBy: text("created_by").notNull(),
    revokedAt: text("revoked_at"),
  },
  (t) => [index("ops_403_suppressions_expires_idx").on(t.expiresAt)],
);

/** Synthetic probes: Herald calling its own public endpoints over HTTP, one row per probe per run. */
export const opsProbeRuns = sqliteTable(
  "ops_probe_runs",
  {
    id: integer("id").primaryKey({ autoIncrement: true }),
    runId: text("run_id").notNull(),
    at: text("at").notNull(),
    probe: text("probe").notNull(),
    url: text("url").notNull(),
    status: integer("status"),
    latencyMs: integer("latency_ms"),
    hadData: integer("had_data").notNull(),
    ok: integer("ok").notNull(),
    error: text("error"),
  },
  (t) => [index("ops_probe_runs_at_idx").on(t.at), index("ops_probe_runs_probe_idx").on(t.probe, t.at)],
);
