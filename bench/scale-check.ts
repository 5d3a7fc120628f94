// The `scale` benchmark's consistency check of the database bench/scale-seed.ts built, on either engine.
import { BUCKET_COLUMNS } from "../src/http/request-log/histogram";
import { hourStartIso, nextHour } from "../src/http/request-log/hours";
import { ALL_KEYS, summaryCells } from "../src/http/request-log/summary";
import type { SeedSql } from "./scale-seed";
import { dailyMismatchSql } from "./scale-summaries";

/** Rows of request_log the summaries' recount reads: whole hours spread over the history (every hour at 10k rows). */
const RECOUNT_ROWS = 30_000;
const SUMMARY_COLUMNS = ["requests", "client_errors", "server_errors", "rate_limited", ...BUCKET_COLUMNS];

/**
 * The summary rows of some hours against what herald's flush makes of those hours' request_log rows (summaryCells,
 * src/http/request-log/summary.ts: every column, the latency buckets by bucketOf): hours spread evenly over the
 * history up to about RECOUNT_ROWS rows, and the newest hour (herald's own requests beside the seeded ones). Counts the
 * (key, hour, route) rows that differ, are missing or are extra.
 */
async function recountSummaries(sql: SeedSql): Promise<{ hours: number; rows: number; wrong: number }> {
  const hours = await sql.rows<{ hour: string; requests: number | string }>("SELECT hour, requests FROM request_log_hourly ORDER BY hour");
  const stride = Math.max(1, Math.ceil(hours.reduce((n, h) => n + Number(h.requests), 0) / RECOUNT_ROWS));
  const out = { hours: 0, rows: 0, wrong: 0 };
  for (const [i, { hour }] of hours.entries()) {
    if (i % stride !== 0 && i !== hours.length - 1) continue;
    const logged = await sql.rows<{ at: string; route: string; status: number; latency_us: number | string; key_ref: number | string | null }>(
      `SELECT at, route, status, latency_us, key_ref FROM request_log WHERE at >= '${hourStartIso(hour)}' AND at < '${hourStartIso(nextHour(hour))}'`,
    );
    const cells = summaryCells(
      logged.map((r) => ({
        at: r.at,
        route: r.route,
        status: Number(r.status),
        latencyUs: Number(r.latency_us),
        keyRef: r.key_ref === null ? null : Number(r.key_ref),
      })),
      (r) => r.keyRef,
    );
    const stored = new Map(
      (await sql.rows<Record<string, unknown>>(`SELECT * FROM request_summary_hourly WHERE hour = '${hour}'`)).map((s) => [
        `${Number(s.key_ref)} ${s.route}`,
        s,
      ]),
    );
    for (const c of cells) {
      const s = stored.get(`${c.keyRef} ${c.route}`);
      stored.delete(`${c.keyRef} ${c.route}`);
      const want = [c.requests, c.clientErrors, c.serverErrors, c.rateLimited, ...c.buckets];
      if (!s || SUMMARY_COLUMNS.some((col, j) => Number(s[col]) !== want[j])) out.wrong++;
    }
    out.wrong += stored.size;
    out.hours++;
    out.rows += logged.length;
  }
  return out;
}

/**
 * The consistency check: balances = Σ ledger for every user (and the last entry's balance_after_minor = the balance, none
 * below zero), every foreign key resolves (counted with anti-joins on both engines, and SQLite's PRAGMA
 * foreign_key_check over the webhook tables), the rollups equal request_log's counts per hour and in 403s, the
 * summaries equal request_log per hour (every key, as herald's start-up catch-up compares them) and per key, hour and
 * route (requests and outcomes), each summary's buckets add up to its requests and some hours' summaries equal the
 * flush's own count of them to the bucket (recountSummaries), and the attempts equal the deliveries' attempt counts. Returns the problems (empty when consistent) and what it checked.
 */
export async function checkConsistency(sql: SeedSql): Promise<{ problems: string[]; lines: string[] }> {
  const problems: string[] = [];
  const lines: string[] = [];
  const expectZero = async (what: string, text: string) => {
    const t0 = performance.now();
    const n = await sql.num(text);
    lines.push(`${what}: ${n} (${((performance.now() - t0) / 1000).toFixed(1)} s)`);
    if (n !== 0) problems.push(`${what}: ${n}, expected 0`);
  };
  await expectZero(
    "balances ≠ Σ ledger",
    `SELECT count(*) FROM salutes_balances b LEFT JOIN (SELECT user_id, SUM(delta_minor) AS s FROM salutes_ledger GROUP BY user_id) l ON l.user_id = b.user_id
     WHERE b.balance_minor <> COALESCE(l.s, 0)`,
  );
  await expectZero(
    "users with entries but no balance",
    "SELECT count(*) FROM (SELECT DISTINCT user_id FROM salutes_ledger) l LEFT JOIN salutes_balances b ON b.user_id = l.user_id WHERE b.user_id IS NULL",
  );
  await expectZero(
    "last entry's balance_after ≠ balance",
    `SELECT count(*) FROM salutes_balances b JOIN salutes_ledger l ON l.id = (SELECT max(id) FROM salutes_ledger WHERE user_id = b.user_id)
     WHERE l.balance_after_minor <> b.balance_minor`,
  );
  await expectZero("entries below zero", "SELECT count(*) FROM salutes_ledger WHERE balance_after_minor < 0");
  const orphans: Array<[string, string, string, string]> = [
    ["salutes_ledger", "user_id", "partner_users", "id"],
    ["salutes_balances", "user_id", "partner_users", "id"],
    ["webhook_deliveries", "event_id", "events", "id"],
    ["webhook_deliveries", "webhook_id", "webhooks", "id"],
    ["webhook_attempts", "delivery_id", "webhook_deliveries", "id"],
    ["request_log", "key_ref", "request_log_keys", "ref"],
  ];
  for (const [child, col, parent, pk] of orphans)
    await expectZero(
      `${child}.${col} without its ${parent} row`,
      `SELECT count(*) FROM ${child} c LEFT JOIN ${parent} p ON p.${pk} = c.${col} WHERE c.${col} IS NOT NULL AND p.${pk} IS NULL`,
    );
  if (sql.kind === "sqlite")
    for (const t of ["webhook_deliveries", "webhook_attempts", "salutes_balances"])
      await expectZero(`PRAGMA foreign_key_check(${t})`, `SELECT count(*) FROM pragma_foreign_key_check('${t}')`);
  await expectZero(
    "hours whose rollup ≠ request_log",
    `SELECT count(*) FROM (SELECT substr(at, 1, 13) AS hour, count(*) AS n, SUM(CASE WHEN status = 403 THEN 1 ELSE 0 END) AS f FROM request_log GROUP BY substr(at, 1, 13)) r
     LEFT JOIN request_log_hourly h ON h.hour = r.hour WHERE h.hour IS NULL OR h.requests <> r.n OR h.forbidden <> r.f`,
  );
  await expectZero(
    "403 rollup total − request_log 403s",
    "SELECT (SELECT COALESCE(SUM(count), 0) FROM request_log_403_hourly) - (SELECT count(*) FROM request_log WHERE status = 403)",
  );
  await expectZero(
    "hours whose summaries (every key) ≠ request_log",
    `SELECT count(*) FROM (SELECT substr(at, 1, 13) AS hour, count(*) AS n FROM request_log GROUP BY substr(at, 1, 13)) r
     LEFT JOIN (SELECT hour, SUM(requests) AS n FROM request_summary_hourly WHERE key_ref = ${ALL_KEYS} GROUP BY hour) s ON s.hour = r.hour
     WHERE s.hour IS NULL OR s.n <> r.n`,
  );
  const outcome = (as: string, when: string) => `SUM(CASE WHEN ${when} THEN 1 ELSE 0 END) AS ${as}`;
  await expectZero(
    "summary rows (key, hour, route) missing, extra or ≠ request_log",
    `WITH g AS MATERIALIZED (
       SELECT key_ref, hour, route, count(*) AS n, ${outcome("ce", "status >= 400 AND status < 500")}, ${outcome("se", "status >= 500")}, ${outcome("rl", "status = 429")}
       FROM (SELECT key_ref, substr(at, 1, 13) AS hour, route, status FROM request_log) l GROUP BY key_ref, hour, route),
     r AS MATERIALIZED (
       SELECT ${ALL_KEYS} AS k, hour, route, SUM(n) AS n, SUM(ce) AS ce, SUM(se) AS se, SUM(rl) AS rl FROM g GROUP BY hour, route
       UNION ALL SELECT key_ref, hour, route, n, ce, se, rl FROM g WHERE key_ref IS NOT NULL)
     SELECT (SELECT count(*) FROM r LEFT JOIN request_summary_hourly s ON s.key_ref = r.k AND s.hour = r.hour AND s.route = r.route
         WHERE s.key_ref IS NULL OR s.requests <> r.n OR s.client_errors <> r.ce OR s.server_errors <> r.se OR s.rate_limited <> r.rl)
       + abs((SELECT count(*) FROM request_summary_hourly) - (SELECT count(*) FROM r))`,
  );
  await expectZero("summary rows whose buckets ≠ requests", `SELECT count(*) FROM request_summary_hourly WHERE ${BUCKET_COLUMNS.join(" + ")} <> requests`);
  await expectZero("daily summary rows ≠ the sum of their day's hourly rows", dailyMismatchSql());
  const t0 = performance.now();
  const recount = await recountSummaries(sql);
  lines.push(
    `summary rows ≠ the flush's count of ${recount.hours} hours (${recount.rows.toLocaleString("en-US")} rows): ${recount.wrong} (${((performance.now() - t0) / 1000).toFixed(1)} s)`,
  );
  if (recount.wrong !== 0) problems.push(`summary rows ≠ the flush's count of ${recount.hours} hours: ${recount.wrong}, expected 0`);
  await expectZero(
    "attempt rows − Σ deliveries.attempts",
    "SELECT (SELECT count(*) FROM webhook_attempts) - (SELECT COALESCE(SUM(attempts), 0) FROM webhook_deliveries)",
  );
  return { problems, lines };
}
