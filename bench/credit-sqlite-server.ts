// The `credit` benchmark's bare servers on SQLite: Bun.serve + bun:sqlite, nothing else. Each POST
// /api/salutes/credit reads its JSON body and its Idempotency-Key, runs one `BEGIN IMMEDIATE` transaction and
// answers JSON — no signature check, no nonce, no framework, no request log:
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

const server = Bun.serve({
  hostname: "127.0.0.1",
  port: Number(values.port),
  async fetch(req) {
    const url = new URL(req.url);
    if (req.method === "GET" && url.pathname === "/") return new Response("ok");
    if (req.method !== "POST" || url.pathname !== "/api/salutes/credit") return new Response("not found", { status: 404 });
    const body = (await req.json()) as { user_id: string };
    const key = req.headers.get("idempotency-key") ?? crypto.randomUUID();
    try {
      write(Number(body.user_id), key);
      return Response.json({ success: true, user_id: body.user_id });
    } catch (err) {
      return Response.json({ success: false, error: (err as Error).message }, { status: 500 });
    }
  },
});
// SIGTERM: stop listening, close the database (its WAL checkpointed), exit 0 (a signal death reads as no exit code).
process.on("SIGTERM", () => {
  void server.stop().finally(() => {
    s.db.close();
    process.exit(0);
  });
});
