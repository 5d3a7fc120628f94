// Tests that do not run say so where a person will read it: `npm test` (test/run.ts) passes a file in
// HERALD_SKIPPED_REPORT, each skip appends a line to it, and the runner prints them all after bun's own summary,
// grouped by why and with the command that runs them. There are three kinds:
//
// - `tool`: this machine lacks what the suite needs (Chromium, PostgreSQL, HAProxy). In CI nothing may be skipped
//   quietly: .ci/run installs these, so such a skip there is a failure (reportSkipped throws under CI).
// - `engine`: the test is about one storage engine (the SQLite file's backups, PostgreSQL's deadlines) and runs on
//   that engine's pass only. CI runs both passes, so this is never a failure.
// - `optional`: a tool the docs use but CI does not install (python3, openssl); reported, never a failure.
import { appendFileSync } from "node:fs";
import { describe, test, type TestOptions } from "bun:test";

export type SkipKind = "tool" | "engine" | "optional";
export type Engine = "sqlite" | "postgres";

/** One line of the report: `what` is a test's or a describe block's name, or null for the whole file. */
export interface SkipLine {
  kind: SkipKind;
  file: string;
  what: string | null;
  reason: string;
  /** For `engine`: the engine the test runs on. */
  engine?: Engine;
}

function record(line: SkipLine): void {
  const report = process.env.HERALD_SKIPPED_REPORT;
  if (report) appendFileSync(report, `${JSON.stringify(line)}\n`);
}

/** A whole file skipped for a missing tool that CI installs: a failure under CI, a NOT RUN line elsewhere. */
export function reportSkipped(testFile: string, reason: string): void {
  if (process.env.CI === "true" || process.env.CI === "1") throw new Error(`${testFile} cannot run in CI: ${reason}`);
  console.warn(`SKIPPED ${testFile}: ${reason}`);
  record({ kind: "tool", file: testFile, what: null, reason });
}

/** A test skipped for a tool CI does not install either (python3, openssl): reported, never a failure. */
export function reportOptional(testFile: string, what: string | null, reason: string): void {
  console.warn(`SKIPPED ${testFile}${what ? ` (${what})` : ""}: ${reason}`);
  record({ kind: "optional", file: testFile, what, reason });
}

/** The engine this test process runs on (test/support/engine.ts reads the same variable). */
export const currentEngine = (): Engine => (process.env.HERALD_TEST_ENGINE === "postgres" ? "postgres" : "sqlite");

const ENGINE_REASON: Record<Engine, string> = {
  sqlite: "runs only on SQLite, the default pass",
  postgres: "runs only with HERALD_TEST_ENGINE=postgres",
};

/** Whether this process runs on `engine`; when not, `what` of `testFile` is reported as the other pass's. */
export function runsOn(engine: Engine, testFile: string, what: string): boolean {
  if (currentEngine() === engine) return true;
  record({ kind: "engine", file: testFile, what, reason: ENGINE_REASON[engine], engine });
  return false;
}

// biome-ignore lint/suspicious/noConfusingVoidType: bun:test's own type for a test body
type Body = () => void | Promise<unknown>;
type TestLike = (label: string, fn: Body, options?: number | TestOptions) => void;

/**
 * `test` for a test about one engine: on the other engine's pass it is skipped and named in the NOT RUN block.
 * `base` is the test function to use on `engine` (e.g. `test.skipIf(!chromium)` for a browser test).
 */
export function testOn(engine: Engine, testFile: string, base: TestLike = test): TestLike {
  return (label, fn, options) => {
    if (runsOn(engine, testFile, label)) base(label, fn, options);
    else test.skip(label, fn, options);
  };
}

/** `describe` for a block about one engine: on the other engine's pass the block is skipped and named. */
export function describeOn(engine: Engine, testFile: string): (label: string, fn: () => void) => void {
  return (label, fn) => {
    if (runsOn(engine, testFile, `${label} (every test of the block)`)) describe(label, fn);
    else describe.skip(label, fn);
  };
}
