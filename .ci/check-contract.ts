// The contract check of CI: every exchange the HTTP-level suites recorded (HERALD_CONTRACT_LOG, one JSON line
// each: test/support/contract-log.ts) against the served OpenAPI document, with Ajv (test/support/contract-check.ts).
// Usage: bun run .ci/check-contract.ts <log> [<log> …]; exits 1 with a grouped report when anything is off.
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { buildApp } from "../src/app";
import { closeContext, openContext } from "../src/bootstrap";
import { loadConfig } from "../src/config";
import { createLogger } from "../src/log";
import { ContractCheck, type Doc, summarise, type Violation } from "../test/support/contract-check";
import type { Exchange } from "../test/support/contract-log";

const logs = process.argv.slice(2);
if (!logs.length) {
  console.error("usage: bun run .ci/check-contract.ts <log> [<log> …]");
  process.exit(2);
}
const dir = mkdtempSync(join(tmpdir(), "herald-contract-"));
const ctx = openContext(loadConfig({ HERALD_DB_PATH: join(dir, "herald.db"), LOG_LEVEL: "silent", JOBS_ENABLED: "0" }), { log: createLogger("silent") });
let doc: Doc;
try {
  doc = (await (await buildApp(ctx).handle(new Request("http://localhost/api/openapi.json"))).json()) as Doc;
} finally {
  await closeContext(ctx);
  rmSync(dir, { recursive: true, force: true });
}
const check = new ContractCheck(doc);
const violations: Violation[] = check.securityGaps();
let exchanges = 0;
const operations = new Set<string>();
for (const log of logs) {
  for (const line of readFileSync(log, "utf8").split("\n")) {
    if (!line) continue;
    const x = JSON.parse(line) as Exchange;
    exchanges++;
    const found = check.check(x);
    violations.push(...found);
    operations.add(`${x.method} ${x.status}`);
  }
}
violations.push(...check.unsent());
const groups = summarise(violations);
for (const { violation: v, count } of groups.slice(0, 400))
  console.log(`${v.kind.padEnd(10)} ${v.operation} ${v.status ?? ""}: ${v.detail}${count > 1 ? ` (×${count})` : ""}`);
if (groups.length > 400) console.log(`… and ${groups.length - 400} more`);
const unmatched = [...check.unmatched.values()].reduce((a, b) => a + b, 0);
console.log(
  `contract: ${exchanges} exchanges checked against ${Object.keys(doc.paths).length} paths; ${violations.length} violations in ${groups.length} groups; ${unmatched} requests to no documented operation (unknown paths)`,
);
process.exit(violations.length ? 1 : 0);
