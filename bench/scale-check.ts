// The `scale` benchmark's consistency check of the database bench/scale-seed.ts built, on either engine.
import type { SeedSql } from "./scale-seed";

/**
 * The consistency check: balances = Σ ledger for every user (and the last entry's balance_after_minor = the balance, none
 * below zero), every foreign key resolves (counted with anti-joins on both engines, and SQLite's PRAGMA
 * foreign_key_check over the webhook tables), the rollups equal request_log's counts per hour and in 403s, and the
 * attempts equal the deliveries' attempt counts. Returns the problems (empty when consistent) and what it checked.
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
    "attempt rows − Σ deliveries.attempts",
    "SELECT (SELECT count(*) FROM webhook_attempts) - (SELECT COALESCE(SUM(attempts), 0) FROM webhook_deliveries)",
  );
  return { problems, lines };
}
