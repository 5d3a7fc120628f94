// The `credit` benchmark's floor: the same writes one signed credit makes, as a bare bun:sqlite loop with no
// HTTP, no signature and no framework. Run as its own process by bench/credit.ts over a database migrated by
// herald itself (so tables and indexes are identical), WAL + synchronous=NORMAL as herald opens it.
//
//   bun bench/credit-sqlite.ts --db <path> --users 1,2,3 --credits 20000 --warmup 1000
//
// Per credit, ONE `BEGIN IMMEDIATE` transaction with what herald's credit transaction runs: idempotency lookup,
// user lookup, balance read, ledger insert, balance upsert, outbox event insert (+ the webhook fan-out query,
// which finds none), stored idempotent response. Herald also writes, outside that transaction, a nonce row
// (autocommit) and a buffered request-log row; those are NOT here, on purpose: this is the ledger's own cost.
import { Database } from "bun:sqlite";
import { randomBytes } from "node:crypto";
import { parseArgs } from "node:util";
import { floorResultLine } from "./percentiles";

export function open(path: string) {
  const db = new Database(path, { strict: true });
  db.exec("PRAGMA journal_mode = WAL");
  db.exec("PRAGMA synchronous = NORMAL");
  db.exec("PRAGMA busy_timeout = 5000");
  db.exec("PRAGMA foreign_keys = ON");
  return {
    db,
    idemSelect: db.prepare("SELECT fingerprint, state FROM idempotency_records WHERE key_id = ? AND idempotency_key = ?"),
    user: db.prepare("SELECT * FROM partner_users WHERE id = ? AND partner = ? AND mode = ?"),
    balance: db.prepare("SELECT balance_minor FROM salutes_balances WHERE user_id = ?"),
    ledger: db.prepare(
      `INSERT INTO salutes_ledger (user_id, partner, mode, delta_minor, balance_after_minor, reason, source, key_id, idempotency_key, created_at)
       VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?) RETURNING id`,
    ),
    upsert: db.prepare(
      `INSERT INTO salutes_balances (user_id, partner, mode, balance_minor, updated_at) VALUES (?1, ?2, ?3, ?4, ?5)
       ON CONFLICT (user_id) DO UPDATE SET balance_minor = ?4, updated_at = ?5`,
    ),
    event: db.prepare("INSERT INTO events (public_id, partner, mode, event_type, data, created_at) VALUES (?, ?, ?, ?, ?, ?) RETURNING id"),
    hooks: db.prepare("SELECT id FROM webhooks WHERE partner = ? AND mode = ? AND event_type = ? AND is_active = 1 AND deleted_at IS NULL"),
    idemStore: db.prepare(
      `INSERT INTO idempotency_records (key_id, idempotency_key, fingerprint, state, response_status, response_body, created_at, locked_until, expires_at)
       VALUES (?1, ?2, ?3, 'completed', 200, ?4, ?5, NULL, ?6)`,
    ),
  };
}

export function credit(s: ReturnType<typeof open>, userId: number, idemKey: string): void {
  const now = new Date();
  const at = now.toISOString();
  s.db
    .transaction(() => {
      s.idemSelect.get("hk_live_bench", idemKey);
      s.user.get(userId, "Bench", "live");
      const before = (s.balance.get(userId) as { balance_minor: number } | null)?.balance_minor ?? 0;
      const after = before + 125;
      const { id } = s.ledger.get(userId, "Bench", "live", 125, after, "bench_credit", "bench.credit", "hk_live_bench", idemKey, at) as { id: number };
      s.upsert.run(userId, "Bench", "live", after, at);
      const data = { user_id: String(userId), delta: 1.25, balance: after / 100, ledger_entry_id: id, reason: "bench_credit", source: "bench.credit" };
      s.event.get(`evt_${randomBytes(12).toString("hex")}`, "Bench", "live", "salutes.credit", JSON.stringify(data), at);
      s.hooks.all("Bench", "live", "salutes.credit");
      const response = { success: true, user_id: String(userId), balance: after / 100, delta: 1.25, ledger_entry_id: id, idempotency_key: idemKey };
      s.idemStore.run(
        "hk_live_bench",
        idemKey,
        randomBytes(32).toString("hex"),
        JSON.stringify(response),
        at,
        new Date(now.getTime() + 86_400_000).toISOString(),
      );
    })
    .immediate();
}

function main(): void {
  const { values } = parseArgs({
    args: process.argv.slice(2),
    strict: true,
    options: { db: { type: "string" }, users: { type: "string" }, credits: { type: "string" }, warmup: { type: "string" } },
  });
  if (!values.db || !values.users) throw new Error("usage: bun bench/credit-sqlite.ts --db PATH --users 1,2 [--credits N] [--warmup N]");
  const users = values.users.split(",").map(Number);
  const credits = Number(values.credits ?? 20_000);
  const warmup = Number(values.warmup ?? 1_000);
  const s = open(values.db);
  for (let i = 0; i < warmup; i++) credit(s, users[i % users.length]!, `w-${i}`);
  const latencies = new Float64Array(credits);
  const started = performance.now();
  for (let i = 0; i < credits; i++) {
    const t0 = performance.now();
    credit(s, users[i % users.length]!, `m-${i}`);
    latencies[i] = performance.now() - t0;
  }
  const seconds = (performance.now() - started) / 1000;
  s.db.close();
  process.stdout.write(floorResultLine(credits, seconds, latencies));
}

if (import.meta.main) main();
