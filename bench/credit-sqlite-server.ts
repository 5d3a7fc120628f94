// The `credit` benchmark's bare servers on SQLite: Bun.serve + bun:sqlite, nothing else (bench/credit-server.ts).
// Each POST /api/salutes/credit runs one `BEGIN IMMEDIATE` transaction:
//   --writes same           bench/credit-sqlite.ts's transaction: the idempotency lookup, the user, the balance, the
//                           ledger row, the balance upsert, the outbox event, the stored answer (herald's writes);
//   --writes ledger-outbox  a ledger row and an outbox event only (the server issue 50's target names).
// Driven by the same load generator as herald (bench/credit-load.ts) over the same loopback, so the comparison
// includes HTTP on both sides.
//
//   bun bench/credit-sqlite-server.ts --db <path> --port N [--writes same|ledger-outbox]
import { randomBytes } from "node:crypto";
import { parseArgs } from "node:util";
import { credit, open } from "./credit-sqlite";
import { serveCredits } from "./credit-server";

const { values } = parseArgs({
  args: process.argv.slice(2),
  strict: true,
  options: { db: { type: "string" }, port: { type: "string" }, writes: { type: "string" } },
});
const writes = values.writes ?? "same";
if (!values.db || !values.port || (writes !== "same" && writes !== "ledger-outbox"))
  throw new Error("usage: bun bench/credit-sqlite-server.ts --db PATH --port N [--writes same|ledger-outbox]");
const s = open(values.db);

/** A ledger row and its outbox event in one transaction, nothing read first. */
function ledgerAndOutbox(userId: number, idemKey: string): void {
  const at = new Date().toISOString();
  s.db
    .transaction(() => {
      const { id } = s.ledger.get(userId, "Bench", "live", 125, 125, "bench_credit", "bench.credit", "hk_live_bench", idemKey, at) as { id: number };
      const data = { user_id: String(userId), delta: 1.25, ledger_entry_id: id, reason: "bench_credit", source: "bench.credit" };
      s.event.get(`evt_${randomBytes(12).toString("hex")}`, "Bench", "live", "salutes.credit", JSON.stringify(data), at);
    })
    .immediate();
}
const write = writes === "same" ? (userId: number, key: string) => credit(s, userId, key) : ledgerAndOutbox;

// SIGTERM closes the database (its WAL checkpointed).
serveCredits(Number(values.port), write, () => s.db.close());
