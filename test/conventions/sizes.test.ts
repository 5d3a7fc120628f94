import { describe, expect, test } from "bun:test";
import { readdirSync, readFileSync, statSync } from "node:fs";
import { join, relative, resolve } from "node:path";

// The sizes of docs/design.md §1: a newcomer finds a feature in one hop. No folder of src/ holds more than 30 .ts files (a
// domain that grows gets sub-rooms by area, e.g. src/ops/digest/), and no file is longer than 400 lines (split by
// table group, template, or area), unless it says at its top, in a comment beginning `Longer than the cap on
// purpose:`, why it reads better whole: then it may reach twice the cap (docs/design.md §1). A split made only to pass
// a cap is worse than a long file. Generated files are named here with what generates them.

const SRC = resolve(import.meta.dir, "../../src");
const MAX_FILES = 30;
const MAX_LINES = 400;
const ON_PURPOSE = "Longer than the cap on purpose:";
const GENERATED = new Map([["client/api-types.ts", "sdk/generate.ts, from the OpenAPI document"]]);

function walk(dir: string): string[] {
  return readdirSync(dir).flatMap((name) => {
    const path = join(dir, name);
    return statSync(path).isDirectory() ? [path, ...walk(path)] : [];
  });
}

describe("sizes in src/", () => {
  test(`no folder holds more than ${MAX_FILES} .ts files`, () => {
    const big = [SRC, ...walk(SRC)]
      .map((d) => ({ dir: relative(SRC, d) || ".", n: readdirSync(d).filter((f) => f.endsWith(".ts")).length }))
      .filter((d) => d.n > MAX_FILES)
      .map((d) => `${d.dir}: ${d.n}`);
    expect(big).toEqual([]);
  });

  test(`no file is longer than ${MAX_LINES} lines (generated files excepted)`, () => {
    const long: string[] = [];
    for (const d of [SRC, ...walk(SRC)]) {
      for (const f of readdirSync(d).filter((n) => n.endsWith(".ts"))) {
        const rel = relative(SRC, join(d, f));
        if (GENERATED.has(rel)) continue;
        const text = readFileSync(join(d, f), "utf8");
        const lines = text.split("\n").length - 1;
        const cap = text.slice(0, 2000).includes(ON_PURPOSE) ? 2 * MAX_LINES : MAX_LINES;
        if (lines > cap) long.push(`${rel}: ${lines} (cap ${cap})`);
      }
    }
    expect(long).toEqual([]);
  });
});
