// The `credit` benchmark's naive bare server on PostgreSQL: Bun.serve + Bun's SQL client, nothing else. Each
// POST /api/salutes/credit reads its JSON body and its Idempotency-Key, then runs bench/credit-postgres.ts's
// transaction (BEGIN, the seven statements one after another, COMMIT) and answers JSON — no signature check, no
// nonce, no framework, no request log. Driven by the same load generator as herald (bench/credit-load.ts), over
// the same loopback, so the comparison includes HTTP on both sides: the server issue 49 measures herald against.
//
//   bun bench/credit-postgres-server.ts --url postgres://… --port N --pool N
import { parseArgs } from "node:util";
import { SQL } from "bun";
import { credit } from "./credit-postgres";

const { values } = parseArgs({
  args: process.argv.slice(2),
  strict: true,
  options: { url: { type: "string" }, port: { type: "string" }, pool: { type: "string" } },
});
if (!values.url || !values.port) throw new Error("usage: bun bench/credit-postgres-server.ts --url URL --port N [--pool N]");
const sql = new SQL({ url: values.url, max: Number(values.pool ?? 10) });

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
      await credit(sql, Number(body.user_id), key);
      return Response.json({ success: true, user_id: body.user_id });
    } catch (err) {
      return Response.json({ success: false, error: (err as Error).message }, { status: 500 });
    }
  },
});
// SIGTERM: stop listening, let the credits in flight finish (1 s at most), exit 0 (a signal death reads as no exit code).
process.on("SIGTERM", () => {
  void server.stop();
  void sql.close({ timeout: 1 }).finally(() => process.exit(0));
});
