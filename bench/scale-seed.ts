// The `scale` benchmark's data (bench/scale.ts): a database herald made (its migrations, a partner key, a few users, a
// webhook and some requests through the API) multiplied to N rows with SQL in the real shapes, on SQLite or
// PostgreSQL, then checked for consistency. Every statement is one INSERT … SELECT over a generated series (a recursive
// CTE on SQLite, generate_series on PostgreSQL); pseudo-random choices come from multiplicative hashes of the row
// number, so a size always builds the same rows. Table columns as in src/**/tables.ts (salutes, partner, webhooks,
// request-log, status, jobs). What is built, for N rows:
//   partner_users        N/100 (at least 100), one of them a heavy user holding half of the ledger
//   salutes_ledger       N entries over the window, balance_after_minor a running sum per user (never below zero)
//   salutes_balances     one per seeded user: SUM(delta_minor) of its entries (one INSERT … SELECT … GROUP BY)
//   events               the outbox row of every ledger entry (salutes.credit / salutes.debit), and N/10 users.updated
//   webhook_deliveries   N/10, one per users.updated event, to the webhook made through the API: 95 % succeeded
//                        (1–3 attempts), 5 % dead-lettered after 10
//   webhook_attempts     one per attempt of each delivery
//   request_log          N rows over the window: partner routes (90 %, signed by the key) and public ones, statuses
//                        and latencies of realistic shares, 403s from the partner's and from probing networks
//   request_log_hourly,  the rollups of exactly those rows (upserted onto what herald's own flush wrote)
//   request_log_403_hourly
//   request_summary_hourly  the summaries of exactly those rows, per key and every key (0), hour and route: outcome
//                        counts and latency buckets as the flush counts them (upserted onto what herald's flush wrote)
//   status_snapshots     one a minute for 30 days (capped at N), each with its status-snapshot job_runs row
import { Database } from "bun:sqlite";
import { join } from "node:path";
import { SQL } from "bun";
import type { BenchDatabase } from "./engines";
import { dailySummariesSql, summariesSql } from "./scale-summaries";

/** The window the history spans: 30 days, plus one hour for the prune jobs to find (a steady state's hourly work). */
export const SPAN_SECONDS = 30 * 86_400 + 3_600;
/** A rare ledger reason: the heavy user's entry k has it when k % 100,000 = 77,777 (5 entries at 1M rows). */
export const RARE_REASON = "manual_adjustment";
const SNAPSHOTS_MAX = 30 * 24 * 60;

/** One connection for the build and the checks: bun:sqlite on the file, or Bun's SQL client on PostgreSQL. */
export interface SeedSql {
  readonly kind: "sqlite" | "postgres";
  exec(text: string): Promise<void>;
  /** The first column of the first row, as a number (PostgreSQL's int8 and numeric arrive as text). */
  num(text: string): Promise<number>;
  rows<T>(text: string): Promise<T[]>;
  close(): Promise<void>;
}

export function openSeedSql(db: BenchDatabase): SeedSql {
  if (db.kind === "sqlite") {
    const d = new Database(join(db.dir, "herald.db"));
    // A rollback journal in memory while the tables are filled (WAL would write every page twice); WAL again at the end.
    d.exec("PRAGMA journal_mode = MEMORY; PRAGMA synchronous = OFF; PRAGMA cache_size = -1000000; PRAGMA foreign_keys = OFF");
    return {
      kind: "sqlite",
      exec: async (text) => void d.exec(text),
      num: async (text) => Number(Object.values(d.query(text).get() as Record<string, unknown>)[0] ?? 0),
      rows: async <T>(text: string) => d.query(text).all() as T[],
      close: async () => {
        d.exec("PRAGMA journal_mode = WAL; PRAGMA wal_checkpoint(TRUNCATE)");
        d.close();
      },
    };
  }
  const sql = new SQL({ url: db.url!, max: 1 });
  let ready: Promise<unknown> | null = null;
  // One connection (max 1), so the session settings hold for every statement.
  const session = () => (ready ??= sql.unsafe("SET work_mem = '256MB'; SET maintenance_work_mem = '512MB'; SET synchronous_commit = off").simple());
  return {
    kind: "postgres",
    exec: async (text) => {
      await session();
      await sql.unsafe(text);
    },
    num: async (text) => {
      await session();
      const rows = (await sql.unsafe(text)) as Record<string, unknown>[];
      return Number(Object.values(rows[0] ?? {})[0] ?? 0);
    },
    rows: async <T>(text: string) => {
      await session();
      return [...((await sql.unsafe(text)) as T[])];
    },
    close: () => sql.close(),
  };
}

/** What the build needs from the database herald made (setup), and what it reports back. */
export interface SeedInput {
  rows: number;
  partner: string;
  keyId: string;
  webhookId: number;
  nowMs: number;
}
export interface SeedResult {
  users: number;
  /** The heavy user's id (half of the ledger), and ids of a few ordinary active users. */
  heavyUserId: number;
  someUserIds: number[];
  /** An email of a seeded user in the middle of the table. */
  lookupEmail: string;
  counts: Record<string, number>;
  steps: string[];
}

// Multiplicative hashing (Knuth): the high bits of (n × an odd constant) mod 2^32, as 0–999.
const P = [2654435761, 2246822519, 3266489917, 668265263, 374761393] as const;

/** The few expressions the two engines spell differently. */
function dialect(kind: SeedSql["kind"]) {
  const pg = kind === "postgres";
  return {
    /** 1…n as a table `alias(n)`. */
    series: (n: number, alias = "s") =>
      pg
        ? `(SELECT generate_series(1::bigint, ${n}) AS n) ${alias}`
        : `(WITH RECURSIVE g(n) AS (SELECT 1 UNION ALL SELECT n + 1 FROM g WHERE n < ${n}) SELECT n FROM g) ${alias}`,
    /** Unix seconds (fractions kept to the millisecond) as request_log.at and every other timestamp column writes them. */
    iso: (seconds: string) =>
      pg
        ? `to_char(to_timestamp((${seconds})::float8) AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"')`
        : `strftime('%Y-%m-%dT%H:%M:%fZ', ${seconds}, 'unixepoch')`,
    hash: (expr: string, i: number) => `((${expr}) * ${P[i]} % 4294967296 / 4294968)`,
  };
}

const quote = (s: string) => `'${s.replace(/'/g, "''")}'`;

/** [route, method, base latency µs] of the request_log mix; the share is the width of its range of r (0–999). */
const ROUTES: Array<[upTo: number, method: string, route: string, baseUs: number]> = [
  [350, "POST", "/api/salutes/credit", 2500],
  [550, "GET", "/api/salutes/balance", 900],
  [650, "GET", "/api/salutes/ledger", 1500],
  [730, "GET", "/api/partner/users/:user_id", 1000],
  [780, "POST", "/api/partner/users", 3000],
  [820, "GET", "/api/partner/user-lookup", 1800],
  [850, "POST", "/api/salutes/debit", 2600],
  [870, "GET", "/api/partner/status", 4000],
  [880, "GET", "/api/partner/analytics/usage", 12000],
  [900, "GET", "/api/partner/webhooks", 1200],
  [950, "GET", "/status.json", 700],
  [980, "GET", "/api/public/system-status", 900],
  [1000, "GET", "/admin/ops/readiness", 400],
];
const PARTNER_UP_TO = 900;
/** Partner statuses by s (0–999): 93 % 2xx, then 400, 401, 403, 404, 409, 429, 500. */
const STATUSES: Array<[upTo: number, status: number, code: string | null]> = [
  [930, 200, null],
  [950, 400, "invalid_payload"],
  [958, 401, "unauthorized"],
  [970, 403, "forbidden"],
  [985, 404, "not_found"],
  [992, 409, "conflict"],
  [998, 429, "rate_limited"],
  [1000, 500, "server_error"],
];

const caseOf = (v: string, arms: Array<[number, string]>) => `CASE ${arms.map(([upTo, out]) => `WHEN ${v} < ${upTo} THEN ${out}`).join(" ")} END`;

/** The request_log INSERT (N rows over the window ending at `endS`). */
function requestLogSql(d: ReturnType<typeof dialect>, n: number, keyRef: number, endS: number): string {
  const step = SPAN_SECONDS / n;
  const start = endS - SPAN_SECONDS;
  const route = caseOf(
    "r",
    ROUTES.map(([u, , path]) => [u, quote(path)]),
  );
  const method = caseOf(
    "r",
    ROUTES.map(([u, m]) => [u, quote(m)]),
  );
  const base = caseOf(
    "r",
    ROUTES.map(([u, , , b]) => [u, String(b)]),
  );
  const partnerStatus = caseOf(
    "s",
    STATUSES.map(([u, st]) => [u, st === 200 ? `CASE WHEN r >= 730 AND r < 780 THEN 201 ELSE 200 END` : String(st)]),
  );
  const status = `CASE WHEN r < ${PARTNER_UP_TO} THEN ${partnerStatus} WHEN r >= 980 THEN CASE WHEN s < 800 THEN 403 ELSE 200 END WHEN s >= 990 THEN 429 ELSE 200 END`;
  const codes = STATUSES.filter(([, , c]) => c !== null)
    .map(([, st, c]) => `WHEN ${st} THEN ${quote(c!)}`)
    .join(" ");
  const ip = `CASE WHEN r < ${PARTNER_UP_TO} THEN '10.20.' || (i % 4) || '.' || (1 + i % 250) WHEN r >= 980 AND status = 403 THEN '203.0.113.' || (1 + i % 250) ELSE '198.51.' || (i % 100) || '.' || (1 + i * 7 % 250) END`;
  return `INSERT INTO request_log (at, method, route, status, latency_us, key_ref, client_ip, request_id, error_code)
SELECT ${d.iso(`${start} + n * ${step}`)}, ${method}, ${route}, status,
  CASE WHEN status >= 400 THEN 1 ELSE 2 END * (${base} * (500 + l) / 2000 + CASE WHEN l >= 990 THEN ${base} * (l - 985) ELSE 0 END),
  CASE WHEN r < ${PARTNER_UP_TO} AND status <> 401 THEN ${keyRef} ELSE NULL END, ${ip}, 'req_s' || (100000000000 + n),
  CASE status ${codes} ELSE NULL END
FROM (SELECT n, r, l, i, ${status} AS status FROM (SELECT n, ${d.hash("n", 0)} AS r, ${d.hash("n", 1)} AS s, ${d.hash("n", 2)} AS l, ${d.hash("n", 3)} AS i FROM ${d.series(n)}) a) b`;
}

/** Builds the history; `progress` gets a line per step. */
export async function seed(sql: SeedSql, input: SeedInput, progress: (msg: string) => void): Promise<SeedResult> {
  const d = dialect(sql.kind);
  const n = input.rows;
  const users = Math.max(100, Math.floor(n / 100));
  const m = Math.floor(n / 10);
  const endS = Math.floor(input.nowMs / 1000);
  const start = endS - SPAN_SECONDS;
  const step = SPAN_SECONDS / n;
  const owner = `${quote(input.partner)}, 'live'`;
  const maxId = (t: string) => sql.num(`SELECT COALESCE(max(id), 0) FROM ${t}`);
  const [ub, lb, eb, db, jb, rb] = [
    await maxId("partner_users"),
    await maxId("salutes_ledger"),
    await maxId("events"),
    await maxId("webhook_deliveries"),
    await maxId("job_runs"),
    await maxId("request_log"),
  ];
  const keyRef = await sql.num(`SELECT ref FROM request_log_keys WHERE key_id = ${quote(input.keyId)}`);
  if (!keyRef) throw new Error("the setup's requests left no request_log_keys row for the partner key");
  const template = (
    await sql.rows<{ checks: string; policy_version: string }>(
      "SELECT checks, policy_version FROM status_snapshots WHERE checks <> '=' ORDER BY id DESC LIMIT 1",
    )
  )[0];
  if (!template) throw new Error("the setup's status-snapshot run left no status_snapshots row to copy");

  const steps: string[] = [];
  const step_ = async (name: string, text: string) => {
    const t0 = performance.now();
    await sql.exec(text);
    const line = `${name}: ${((performance.now() - t0) / 1000).toFixed(1)} s`;
    steps.push(line);
    progress(`built ${line}`);
  };

  await step_(
    `partner_users (${users.toLocaleString("en-US")})`,
    `INSERT INTO partner_users (id, partner, mode, external_id, username, display_name, email, status, is_verified, created_at, updated_at)
SELECT ${ub} + n, ${owner}, 'scale-' || n, 'scale_' || n, 'Scale User ' || n, 'scale' || n || '@example.com',
  CASE WHEN n % 50 = 0 THEN 'suspended' ELSE 'active' END, CASE WHEN n % 3 = 0 THEN 1 ELSE 0 END, ${d.iso(`${start - 86_400} + n`)}, ${d.iso(`${start - 86_400} + n`)}
FROM ${d.series(users)}`,
  );
  // Half of the entries (even n) are the heavy user's (user 1), the rest spread round-robin over the others; k is the
  // entry's number within its user, so every tenth entry of a user is a debit smaller than the nine credits before it.
  await step_(
    `salutes_ledger (${n.toLocaleString("en-US")}, balance_after_minor a running sum per user)`,
    `INSERT INTO salutes_ledger (id, user_id, partner, mode, delta_minor, balance_after_minor, reason, source, key_id, idempotency_key, created_at)
SELECT id, user_id, ${owner}, delta, SUM(delta) OVER (PARTITION BY user_id ORDER BY id ROWS UNBOUNDED PRECEDING), reason, source, ${quote(input.keyId)},
  'scale-l' || n, ${d.iso(`${start} + n * ${step}`)}
FROM (
  SELECT n, id, user_id,
    CASE WHEN k % 10 = 9 THEN -(100 + u % 200) ELSE 100 + u % 900 END AS delta,
    CASE WHEN k % 10 = 9 THEN 'purchase' WHEN user_id = ${ub + 1} AND k % 100000 = 77777 THEN ${quote(RARE_REASON)}
      WHEN u < 600 THEN 'quest_reward' WHEN u < 850 THEN 'daily_bonus' ELSE 'game_win' END AS reason,
    CASE WHEN k % 10 = 9 THEN 'shop.item' WHEN user_id = ${ub + 1} AND k % 100000 = 77777 THEN 'ops.manual'
      WHEN u < 600 THEN 'game.arena' WHEN u < 850 THEN 'bot.daily' ELSE 'game.recon' END AS source
  FROM (
    SELECT n, ${lb} + n AS id,
      CASE WHEN n % 2 = 0 THEN ${ub + 1} ELSE ${ub + 2} + (n / 2) % ${users - 1} END AS user_id,
      CASE WHEN n % 2 = 0 THEN n / 2 ELSE (n / 2) / ${users - 1} END AS k,
      ${d.hash("n", 0)} AS u
    FROM ${d.series(n)}
  ) a
) b`,
  );
  await step_(
    "salutes_balances (SUM per user)",
    `INSERT INTO salutes_balances (user_id, partner, mode, balance_minor, updated_at)
SELECT user_id, ${owner}, SUM(delta_minor), MAX(created_at) FROM salutes_ledger WHERE id > ${lb} GROUP BY user_id`,
  );
  // Event ids interleave as the service writes them: ten ledger entries' events, then a users.updated (id eb + 11 m).
  await step_(
    `events of the ledger entries (${n.toLocaleString("en-US")})`,
    `INSERT INTO events (id, public_id, partner, mode, event_type, data, created_at)
SELECT ${eb} + p, 'evt_s' || (100000000000 + p), ${owner}, CASE WHEN delta_minor < 0 THEN 'salutes.debit' ELSE 'salutes.credit' END,
  '{"user_id":"' || user_id || '","delta":' || round(delta_minor / 100.0, 2) || ',"balance":' || round(balance_after_minor / 100.0, 2) ||
  ',"ledger_entry_id":' || id || ',"reason":"' || reason || '","source":"' || source || '"}', created_at
FROM (SELECT l.*, (id - ${lb}) + (id - ${lb} - 1) / 10 AS p FROM salutes_ledger l WHERE id > ${lb}) x`,
  );
  await step_(
    `events users.updated (${m.toLocaleString("en-US")})`,
    `INSERT INTO events (id, public_id, partner, mode, event_type, data, created_at)
SELECT ${eb} + 11 * n, 'evt_s' || (100000000000 + 11 * n), ${owner}, 'users.updated',
  '{"user_id":"' || (${ub + 1} + n % ${users}) || '","external_id":"scale-' || (1 + n % ${users}) || '","changes":["display_name"]}',
  ${d.iso(`${start} + 10 * n * ${step}`)}
FROM ${d.series(m)}`,
  );
  await step_(
    `webhook_deliveries (${m.toLocaleString("en-US")})`,
    `INSERT INTO webhook_deliveries (id, event_id, webhook_id, partner, mode, status, attempts, reason_tag, last_error, last_status_code, last_attempt_at, delivered_at, created_at, updated_at)
SELECT ${db} + n, ${eb} + 11 * n, ${input.webhookId}, ${owner}, CASE WHEN v < 950 THEN 'succeeded' ELSE 'dead_letter' END, attempts,
  CASE WHEN v < 950 THEN NULL ELSE 'http_error' END, CASE WHEN v < 950 THEN NULL ELSE 'receiver answered HTTP 500' END,
  CASE WHEN v < 950 THEN 200 ELSE 500 END, ${d.iso("t + attempts")}, CASE WHEN v < 950 THEN ${d.iso("t + attempts")} ELSE NULL END,
  ${d.iso("t")}, ${d.iso("t + attempts")}
FROM (SELECT n, v, CASE WHEN v >= 950 THEN 10 WHEN w < 900 THEN 1 WHEN w < 970 THEN 2 ELSE 3 END AS attempts, t
  FROM (SELECT n, ${d.hash("n", 1)} AS v, ${d.hash("n", 2)} AS w, ${start} + 10 * n * ${step} AS t FROM ${d.series(m)}) a) b`,
  );
  await step_(
    "webhook_attempts (one per attempt)",
    `INSERT INTO webhook_attempts (delivery_id, attempt_no, started_at, duration_ms, status_code, error, reason_tag, response_excerpt)
SELECT dl.id, a.n, CASE WHEN a.n = dl.attempts THEN dl.last_attempt_at ELSE dl.created_at END, 20 + (dl.id * a.n) % 200,
  CASE WHEN dl.status = 'succeeded' AND a.n = dl.attempts THEN 200 ELSE 500 END,
  CASE WHEN dl.status = 'succeeded' AND a.n = dl.attempts THEN NULL ELSE 'receiver answered HTTP 500' END,
  CASE WHEN dl.status = 'succeeded' AND a.n = dl.attempts THEN NULL ELSE 'http_error' END,
  CASE WHEN dl.status = 'succeeded' AND a.n = dl.attempts THEN 'ok' ELSE 'Internal Server Error' END
FROM webhook_deliveries dl JOIN ${d.series(10, "a")} ON a.n <= dl.attempts WHERE dl.id > ${db}`,
  );
  await step_(`request_log (${n.toLocaleString("en-US")})`, requestLogSql(d, n, keyRef, endS));
  await step_(
    "request_log_hourly (upserted from the new rows)",
    `INSERT INTO request_log_hourly (hour, requests, forbidden)
SELECT hour, n, f FROM (SELECT substr(at, 1, 13) AS hour, count(*) AS n, SUM(CASE WHEN status = 403 THEN 1 ELSE 0 END) AS f
  FROM request_log WHERE id > ${rb} GROUP BY substr(at, 1, 13)) g WHERE 1 = 1
ON CONFLICT (hour) DO UPDATE SET requests = request_log_hourly.requests + excluded.requests, forbidden = request_log_hourly.forbidden + excluded.forbidden`,
  );
  await step_(
    "request_log_403_hourly (upserted from the new 403s)",
    `INSERT INTO request_log_403_hourly (hour, route, partner_key_id, client_prefix, count)
SELECT hour, route, k, prefix, c FROM (
  SELECT substr(r.at, 1, 13) AS hour, r.route, COALESCE(k.key_id, '') AS k,
    CASE WHEN r.client_ip IS NULL THEN '' ELSE rtrim(r.client_ip, '0123456789') || '0/24' END AS prefix, count(*) AS c
  FROM request_log r LEFT JOIN request_log_keys k ON k.ref = r.key_ref WHERE r.id > ${rb} AND r.status = 403 GROUP BY 1, 2, 3, 4) g WHERE 1 = 1
ON CONFLICT (hour, route, partner_key_id, client_prefix) DO UPDATE SET count = request_log_403_hourly.count + excluded.count`,
  );
  await step_("request_summary_hourly (upserted from the new rows: per key and every key, hour and route)", summariesSql(rb));
  const [clearDaily, foldDaily] = dailySummariesSql();
  await step_("request_summary_daily (cleared)", clearDaily!);
  await step_("request_summary_daily (the hourly rows folded per day)", foldDaily!);
  const snaps = Math.min(SNAPSHOTS_MAX, n);
  const t0 = Math.floor(endS / 60) * 60 - 60 * (snaps + 1);
  await step_(
    `job_runs (${snaps.toLocaleString("en-US")} status-snapshot runs)`,
    `INSERT INTO job_runs (id, name, started_at, finished_at, ok, error, duration_ms, trigger, instance_id)
SELECT ${jb} + n, 'status-snapshot', ${d.iso(`${t0} + 60 * n`)}, ${d.iso(`${t0} + 60 * n + (8 + n % 30) / 1000.0`)}, 1, NULL, 8 + n % 30, 'schedule', 'bench-0'
FROM ${d.series(snaps)}`,
  );
  await step_(
    `status_snapshots (${snaps.toLocaleString("en-US")}, one a minute)`,
    `INSERT INTO status_snapshots (generated_at, overall, degraded, checks, policy_version, in_maintenance, job_run_id)
SELECT ${d.iso(`${t0} + 60 * n + 0.005`)}, 'ok', '{}', CASE WHEN n = 1 THEN ${quote(template.checks)} ELSE '=' END, ${quote(template.policy_version)}, 0, ${jb} + n
FROM ${d.series(snaps)}`,
  );
  if (sql.kind === "postgres") {
    // Explicit ids do not move an identity's sequence: the next row herald writes would collide.
    for (const t of ["partner_users", "salutes_ledger", "events", "webhook_deliveries", "job_runs"])
      await sql.exec(`SELECT setval(pg_get_serial_sequence('${t}', 'id'), (SELECT max(id) FROM ${t}))`);
  }
  // PostgreSQL's autovacuum keeps statistics in production, so the seeded tables get theirs. Herald never runs ANALYZE
  // on SQLite, so neither does the seed: statistics taken here, when the tables herald fills later (nonces,
  // idempotency records) held a few rows, made SQLite scan them whole in every prune long after (134 ms at 10M).
  if (sql.kind === "postgres") await step_("statistics (PostgreSQL VACUUM ANALYZE, as autovacuum keeps them)", "VACUUM (ANALYZE)");

  const counts: Record<string, number> = {};
  for (const t of [
    "partner_users",
    "salutes_ledger",
    "salutes_balances",
    "events",
    "webhook_deliveries",
    "webhook_attempts",
    "request_log",
    "request_log_hourly",
    "request_log_403_hourly",
    "request_summary_hourly",
    "request_summary_daily",
    "status_snapshots",
    "job_runs",
  ])
    counts[t] = await sql.num(`SELECT count(*) FROM ${t}`);
  const mid = Math.floor(users / 2);
  return {
    users,
    heavyUserId: ub + 1,
    someUserIds: [2, 3, 4, 5].map((i) => ub + i),
    lookupEmail: `scale${mid}@example.com`,
    counts,
    steps,
  };
}
