// The query-plan guard of CI (docs/storage-port.md "The query-plan guard"): every distinct statement of Herald's code
// that the suite recorded (HERALD_STATEMENT_LOG, test/support/statement-log.ts) is planned on a fresh migrated
// database of one engine, and a full read of a growing table fails the run unless test/support/growing-tables.ts
// allows it with its reason (test/support/plan-guard.ts).
// Usage: bun run .ci/query-plans.ts <log.jsonl> [<log> …] --engine sqlite|postgres [--partial] [--any-engine] [--verbose]
//   --partial     the logs are of a part of the suite: allow-list entries that match nothing are not reported
//   --any-engine  plan the statements recorded on the other engine too (a PostgreSQL check of a SQLite run's log)
// Exits 1 on a full read or a stale allow-list entry, 2 on bad usage.
import { readFileSync } from "node:fs";

const args = process.argv.slice(2);
const flag = (name: string) => args.includes(name);
const engineAt = args.indexOf("--engine");
const engine = args[engineAt + 1];
const logs = args.filter((a, i) => !a.startsWith("--") && i !== engineAt + 1);
if (engineAt < 0 || (engine !== "sqlite" && engine !== "postgres") || !logs.length) {
  console.error("usage: bun run .ci/query-plans.ts <log.jsonl> [<log> …] --engine sqlite|postgres [--partial] [--any-engine] [--verbose]");
  process.exit(2);
}
// The guard's own statements are not recorded, and its database is of the engine asked for (test/support/engine.ts).
delete process.env.HERALD_STATEMENT_LOG;
process.env.HERALD_TEST_ENGINE = engine;

const started = performance.now();
const { openTestApp } = await import("../test/support/app");
const { planOf } = await import("../test/support/query-plans");
const { guardPlans, formatReport, guardFailed, indexesOf } = await import("../test/support/plan-guard");
const { noting, paramOf, sendersHere } = await import("../test/support/statement-log");
const { TASKS } = await import("../src/workers/read-tasks");
type Candidate = import("../test/support/plan-guard").Candidate;
type LoggedLine = import("../test/support/statement-log").LoggedLine;

const lines: LoggedLine[] = logs.flatMap((log) =>
  readFileSync(log, "utf8")
    .split("\n")
    .filter(Boolean)
    .map((l) => JSON.parse(l) as LoggedLine)
    .filter((l) => flag("--any-engine") || l.engine === engine),
);

const h = await openTestApp();
let code = 0;
try {
  const candidates: Candidate[] = [];
  for (const l of lines) if ("sql" in l) candidates.push({ sql: l.sql, params: l.params.map(paramOf), stack: l.stack });
  // The read tasks SQLite ran in its read worker: run again here, in place, to see their statements (on this empty
  // database a task sends what it sends without rows; a statement it sends only for some rows is not seen).
  let replayed = 0;
  for (const l of lines) {
    if (!("task" in l)) continue;
    const task = TASKS.get(l.task);
    if (!task) {
      console.log(`read task ${l.task} is no longer listed in src/workers/read-tasks.ts: not replayed`);
      continue;
    }
    const seen = noting(h.ctx.store, (sql, params) => candidates.push({ sql, params: params ?? [], stack: [...sendersHere(), ...l.stack] }));
    await task.run(seen, l.args).catch((err) => console.log(`read task ${l.task} failed when replayed: ${(err as Error).message}`));
    replayed++;
  }
  const indexes = await indexesOf(h.ctx.store);
  const report = await guardPlans(candidates, (sql, params) => planOf(h, sql, params), { engine, indexes, complete: !flag("--partial") });
  for (const line of formatReport(report, { verbose: flag("--verbose") })) console.log(line);
  console.log(`${lines.length} log lines (${replayed} read tasks replayed) in ${((performance.now() - started) / 1000).toFixed(1)} s`);
  if (guardFailed(report)) code = 1;
} finally {
  await h.close();
}
process.exit(code);
