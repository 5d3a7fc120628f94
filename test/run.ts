// `npm test`: bun's test runner, then — after bun's own summary, where a person reads — every test that did not
// run (test/support/skipped.ts), grouped by why, with the command that runs it, and the run's duration. A green
// run that silently left out the browser tests, or PostgreSQL's, reads as if they had been checked; this makes
// the gap loud. Arguments go to `bun test` (`npm test -- test/salutes` runs one folder).
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { SkipLine } from "./support/skipped";

const dir = mkdtempSync(join(tmpdir(), "herald-test-run-"));
const report = join(dir, "skipped.txt");
const started = performance.now();
const proc = Bun.spawn([process.execPath, "test", "--timeout", "60000", ...process.argv.slice(2)], {
  stdio: ["inherit", "inherit", "inherit"],
  env: { ...process.env, HERALD_SKIPPED_REPORT: report },
});
const code = await proc.exited;
const seconds = Math.round((performance.now() - started) / 1000);
let lines: SkipLine[] = [];
try {
  const unique = [...new Set(readFileSync(report, "utf8").split("\n").filter(Boolean))];
  lines = unique.map((l) => JSON.parse(l) as SkipLine);
} catch {
  // Nothing was skipped: the file was never written.
}
rmSync(dir, { recursive: true, force: true });

const files = (ls: SkipLine[]) => [...new Set(ls.map((l) => l.file))].sort();
const item = (l: SkipLine) => `  - ${l.file}${l.what ? `: ${l.what}` : " (the whole file)"}${l.kind === "engine" ? "" : ` — ${l.reason}`}`;

function notRun(): string[] {
  const out: string[] = [];
  const onEngine = (engine: "sqlite" | "postgres") => lines.filter((l) => l.kind === "engine" && l.engine === engine);
  const pg = onEngine("postgres");
  if (pg.length) {
    out.push(
      "",
      `On PostgreSQL only (${pg.length}): each is about PostgreSQL's own behaviour. Run them with`,
      `  HERALD_TEST_ENGINE=postgres npm test -- ${files(pg).join(" ")}`,
      "(needs Debian's postgresql package for initdb/pg_ctl; each test process starts a throwaway cluster on 127.0.0.1;",
      "CI runs the whole suite a second time this way):",
      ...pg.map(item),
    );
  }
  const lite = onEngine("sqlite");
  if (lite.length) {
    out.push(
      "",
      `On SQLite only (${lite.length}): each is about the SQLite file (its backups, WAL, locks, migrations). Run them with`,
      `  npm test -- ${files(lite).join(" ")}`,
      ...lite.map(item),
    );
  }
  const tools = lines.filter((l) => l.kind === "tool");
  if (tools.length) {
    out.push("", `Missing on this machine (${tools.length}): install it and run \`npm test\` again (CI, .ci/run, installs it):`, ...tools.map(item));
  }
  const optional = lines.filter((l) => l.kind === "optional");
  if (optional.length) out.push("", `Optional tools absent (${optional.length}):`, ...optional.map(item));
  return out;
}

/** What the person typed, as npm (or bun) names the script it runs: `npm test`, `npm run test:quick`. */
function runName(): string {
  const script = process.env.npm_lifecycle_event;
  if (!script) return "test/run.ts";
  return script === "test" ? "npm test" : `npm run ${script}`;
}

if (lines.length) {
  const rule = "!".repeat(78);
  console.error(["", rule, `NOT RUN: ${lines.length} test(s) or blocks skipped in this run — their checks did not happen here:`, ...notRun(), rule].join("\n"));
}
console.error(`${runName()}: ${Math.floor(seconds / 60)} min ${seconds % 60} s`);
process.exit(code);
