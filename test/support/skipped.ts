// Suites that cannot run on this machine say so where a person will read it: `npm test` (test/run.ts) passes a
// file in HERALD_SKIPPED_REPORT, each skipped suite appends a line to it, and the runner prints them all after
// bun's own summary. In CI nothing may be skipped quietly: .ci/run installs what the suites need, so a skip there
// is a failure.
import { appendFileSync } from "node:fs";

export function reportSkipped(testFile: string, reason: string): void {
  if (process.env.CI === "true" || process.env.CI === "1") throw new Error(`${testFile} cannot run in CI: ${reason}`);
  console.warn(`SKIPPED ${testFile}: ${reason}`);
  const report = process.env.HERALD_SKIPPED_REPORT;
  if (report) appendFileSync(report, `${testFile}: ${reason}\n`);
}
