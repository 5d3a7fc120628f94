// The `credit` benchmark's naive bare server on PostgreSQL: Bun.serve + Bun's SQL client, nothing else
// (bench/credit-server.ts). Each POST /api/salutes/credit runs bench/credit-postgres.ts's transaction (BEGIN, the
// seven statements one after another, COMMIT). Driven by the same load generator as herald (bench/credit-load.ts), over
// the same loopback, so the comparison includes HTTP on both sides: the server issue 49 measures herald against.
//
//   bun bench/credit-postgres-server.ts --url postgres://… --port N --pool N
import { parseArgs } from "node:util";
import { SQL } from "bun";
import { credit } from "./credit-postgres";
import { serveCredits } from "./credit-server";

const { values } = parseArgs({
  args: process.argv.slice(2),
  strict: true,
  options: { url: { type: "string" }, port: { type: "string" }, pool: { type: "string" } },
});
if (!values.url || !values.port) throw new Error("usage: bun bench/credit-postgres-server.ts --url URL --port N [--pool N]");
const sql = new SQL({ url: values.url, max: Number(values.pool ?? 10) });

// SIGTERM closes the pool with a 1 s grace for the credits in flight.
serveCredits(
  Number(values.port),
  (userId, key) => credit(sql, userId, key),
  () => sql.close({ timeout: 1 }),
);
