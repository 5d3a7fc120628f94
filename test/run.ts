// `npm test`: bun's test runner, then — after bun's own summary, where a person reads — the suites that were
// skipped because this machine lacks what they need (test/support/skipped.ts), with how to get it. A green run
// that silently left out the browser tests reads as if the pages had been checked; this makes the gap loud.
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";

const dir = mkdtempSync(join(tmpdir(), "herald-test-run-"));
const report = join(dir, "skipped.txt");
const proc = Bun.spawn([process.execPath, "test", "--timeout", "60000", ...process.argv.slice(2)], {
  stdio: ["inherit", "inherit", "inherit"],
  env: { ...process.env, HERALD_SKIPPED_REPORT: report },
});
const code = await proc.exited;
let skipped: string[] = [];
try {
  skipped = [...new Set(readFileSync(report, "utf8").split("\n").filter(Boolean))];
} catch {
  // No suite was skipped: the file was never written.
}
rmSync(dir, { recursive: true, force: true });
if (skipped.length) {
  const rule = "!".repeat(78);
  console.error(
    [
      "",
      rule,
      `NOT RUN: ${skipped.length} test file(s) were skipped on this machine — their checks did not happen:`,
      ...skipped.map((s) => `  - ${s}`),
      "Install what they need (Debian: apt-get install -y chromium) and run `npm test` again; CI (.ci/run) installs it.",
      rule,
    ].join("\n"),
  );
}
process.exit(code);
