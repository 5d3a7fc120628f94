// Issue 52 (the same features in visibly less code), re-verified: what a test can hold of its claims beyond
// test/conventions (which holds "no issue numbers in code" in citations.test.ts).
import { expect, test } from "bun:test";
import { readFileSync } from "node:fs";
import { Glob } from "bun";

// Issue 52: "the digest's baseline modes are written in three places (BASELINE_MODES, a literal union in the model,
// and another in the console page)" → "baseline modes from one list". The console page spelled its own union until
// this re-verification found it.
test("issue 52: the digest's baseline modes are written once (BASELINE_MODES), not as literals elsewhere", () => {
  const spelled: string[] = [];
  for (const file of new Glob("src/**/*.ts").scanSync(".")) {
    if (file === "src/ops/digest/findings.ts") continue;
    readFileSync(file, "utf8")
      .split("\n")
      .forEach((line, i) => {
        if (/["']same_weekday_hour_4w["']/.test(line)) spelled.push(`${file}:${i + 1}`);
      });
  }
  expect(spelled).toEqual([]);
});
