// The `credit` benchmark's floor on PostgreSQL: the writes one signed credit makes, as bare transactions through
// Bun's SQL client with no HTTP, no signature and no framework. Run as its own process by bench/credit.ts over a
// database migrated by herald itself (so tables and indexes are identical).
//
//   bun bench/credit-postgres.ts --url postgres://… --users 1,2,3 --credits 20000 --warmup 1000 --connections 50 --pool 10
//
// Per credit, ONE transaction with the statements of the bare bun:sqlite loop (bench/credit-sqlite.ts):
// idempotency lookup, user lookup, ledger insert, balance upsert, outbox event insert, the webhook fan-out query
// (which finds none), stored idempotent response. One difference, for correctness under concurrency: the balance
// is read and written by herald's own upsert (`balance_minor + excluded.balance_minor … RETURNING`) instead of a
// read and a write. A single loop would measure one connection's round trips, not the database: `--connections`
// transactions are in flight at once over `--pool` connections (herald's pools together).
import { randomBytes } from "node:crypto";
import { parseArgs } from "node:util";
import { SQL } from "bun";
import { floorResultLine } from "./percentiles";

const IDEM_SELECT = "SELECT fingerprint, state FROM idempotency_records WHERE key_id = $1 AND idempotency_key = $2";
const USER = "SELECT * FROM partner_users WHERE id = $1 AND partner = $2 AND mode = $3";
const UPSERT = `INSERT INTO salutes_balances (user_id, partner, mode, balance_minor, updated_at) VALUES ($1, $2, $3, $4, $5)
  ON CONFLICT (user_id) DO UPDATE SET balance_minor = salutes_balances.balance_minor + excluded.balance_minor, updated_at = excluded.updated_at
  RETURNING balance_minor`;
const LEDGER = `INSERT INTO salutes_ledger (user_id, partner, mode, delta_minor, balance_after_minor, reason, source, key_id, idempotency_key, created_at)
  VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10) RETURNING id`;
const EVENT = "INSERT INTO events (public_id, partner, mode, event_type, data, created_at) VALUES ($1, $2, $3, $4, $5, $6) RETURNING id";
const HOOKS = "SELECT id FROM webhooks WHERE partner = $1 AND mode = $2 AND event_type = $3 AND is_active = 1 AND deleted_at IS NULL";
const IDEM_STORE = `INSERT INTO idempotency_records (key_id, idempotency_key, fingerprint, state, response_status, response_body, created_at, locked_until, expires_at)
  VALUES ($1, $2, $3, 'completed', 200, $4, $5, NULL, $6)`;

/** The statements of one credit, in the order credit() sends them inside its transaction: one after another, each awaited. */
export const CREDIT_STATEMENTS = [IDEM_SELECT, USER, UPSERT, LEDGER, EVENT, HOOKS, IDEM_STORE] as const;
/**
 * PostgreSQL round trips per credit: BEGIN (Bun's `sql.begin` sends it and waits for it), each statement in turn,
 * COMMIT. Bench/credit.ts prints it beside herald's measured round trips.
 */
export const ROUND_TRIPS_PER_CREDIT = 1 + CREDIT_STATEMENTS.length + 1;

export async function credit(sql: SQL, userId: number, idemKey: string): Promise<void> {
  const now = new Date();
  const at = now.toISOString();
  await sql.begin(async (tx) => {
    await tx.unsafe(IDEM_SELECT, ["hk_live_bench", idemKey]);
    await tx.unsafe(USER, [userId, "Bench", "live"]);
    const [{ balance_minor: after }] = await tx.unsafe(UPSERT, [userId, "Bench", "live", 125, at]);
    const [{ id }] = await tx.unsafe(LEDGER, [userId, "Bench", "live", 125, after, "bench_credit", "bench.credit", "hk_live_bench", idemKey, at]);
    const data = {
      user_id: String(userId),
      delta: 1.25,
      balance: Number(after) / 100,
      ledger_entry_id: Number(id),
      reason: "bench_credit",
      source: "bench.credit",
    };
    await tx.unsafe(EVENT, [`evt_${randomBytes(12).toString("hex")}`, "Bench", "live", "salutes.credit", JSON.stringify(data), at]);
    await tx.unsafe(HOOKS, ["Bench", "live", "salutes.credit"]);
    const response = {
      success: true,
      user_id: String(userId),
      balance: Number(after) / 100,
      delta: 1.25,
      ledger_entry_id: Number(id),
      idempotency_key: idemKey,
    };
    await tx.unsafe(IDEM_STORE, [
      "hk_live_bench",
      idemKey,
      randomBytes(32).toString("hex"),
      JSON.stringify(response),
      at,
      new Date(now.getTime() + 86_400_000).toISOString(),
    ]);
  });
}

/** `count` credits with `connections` in flight; each credit's latency into `latencies` when given. */
async function fire(sql: SQL, users: number[], count: number, connections: number, prefix: string, latencies?: Float64Array): Promise<void> {
  let next = 0;
  const worker = async () => {
    while (next < count) {
      const i = next++;
      const t0 = performance.now();
      await credit(sql, users[i % users.length]!, `${prefix}-${i}`);
      if (latencies) latencies[i] = performance.now() - t0;
    }
  };
  await Promise.all(Array.from({ length: Math.min(connections, count) }, worker));
}

async function main(): Promise<void> {
  const { values } = parseArgs({
    args: process.argv.slice(2),
    strict: true,
    options: {
      url: { type: "string" },
      users: { type: "string" },
      credits: { type: "string" },
      warmup: { type: "string" },
      connections: { type: "string" },
      pool: { type: "string" },
    },
  });
  if (!values.url || !values.users)
    throw new Error("usage: bun bench/credit-postgres.ts --url URL --users 1,2 [--credits N] [--warmup N] [--connections N] [--pool N]");
  const users = values.users.split(",").map(Number);
  const credits = Number(values.credits ?? 20_000);
  const warmup = Number(values.warmup ?? 1_000);
  const connections = Number(values.connections ?? 50);
  const sql = new SQL({ url: values.url, max: Number(values.pool ?? 10) });
  await fire(sql, users, warmup, connections, "w");
  const latencies = new Float64Array(credits);
  const started = performance.now();
  await fire(sql, users, credits, connections, "m", latencies);
  const seconds = (performance.now() - started) / 1000;
  await sql.close();
  process.stdout.write(floorResultLine(credits, seconds, latencies));
}

if (import.meta.main) await main();
