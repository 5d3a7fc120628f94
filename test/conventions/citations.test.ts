import { describe, expect, test } from "bun:test";
import { Glob } from "bun";
import { readdirSync, readFileSync, statSync } from "node:fs";
import { join, relative, resolve } from "node:path";

// Comments and docs cite only what a reader of this repository can open: the contracts live in docs/design.md, and
// a citation of one of its sections names a section that exists there.

const ROOT = resolve(import.meta.dir, "../..");
const TREES = ["src", "test", "bench", "docs", "sdk", "deploy", ".ci", "README.md"];
const TEXT = /\.(ts|md|yml|yaml|cfg|sh)$|^run$/;
// Documents that live outside the repository (spelt in pieces so that this file does not cite them itself).
const OUTSIDE = ["DESIGN", "STYLE", "STACK-NOTES", "service-interface"].map((name) => `${name}.md`).concat(["/work/" + "shared", "../" + "shared/"]);

function files(path: string): string[] {
  const full = join(ROOT, path);
  let stat: ReturnType<typeof statSync>;
  try {
    stat = statSync(full);
  } catch {
    return [];
  }
  if (!stat.isDirectory()) return TEXT.test(path.split("/").pop() ?? "") ? [path] : [];
  return readdirSync(full).flatMap((name) => (name === "node_modules" || name === "fixtures" ? [] : files(join(path, name))));
}

const all = TREES.flatMap(files).filter((f) => f !== relative(ROOT, import.meta.path));

describe("citations", () => {
  test("no file cites a document outside the repository", () => {
    const found: string[] = [];
    for (const f of all) {
      const text = readFileSync(join(ROOT, f), "utf8");
      for (const name of OUTSIDE) if (text.includes(name)) found.push(`${f}: ${name}`);
    }
    expect(found).toEqual([]);
  });

  test("every cited section of docs/design.md exists", () => {
    const design = readFileSync(join(ROOT, "docs/design.md"), "utf8");
    const sections = new Set([...design.matchAll(/^## (\d+a?)\. /gm)].map((m) => m[1]));
    expect(sections.size).toBeGreaterThan(8);
    const missing: string[] = [];
    let cited = 0;
    for (const f of all) {
      const text = readFileSync(join(ROOT, f), "utf8");
      for (const m of text.matchAll(/design\.md\)?((?:'s)? §(\d+a?)(?:[–-]§(\d+a?))?)/g)) {
        cited++;
        for (const s of [m[2], m[3]]) if (s !== undefined && !sections.has(s)) missing.push(`${f}: §${s}`);
      }
    }
    expect(cited).toBeGreaterThan(40);
    expect(missing).toEqual([]);
  });

  // Comments say why, briefly, with the figure or the doc that shows it; an issue number says nothing to a reader.
  test("no comment in src/ cites an issue number", () => {
    const cites: string[] = [];
    for (const file of new Glob("src/**/*.ts").scanSync(ROOT)) {
      if (file.endsWith("client/api-types.ts")) continue; // generated
      readFileSync(join(ROOT, file), "utf8")
        .split("\n")
        .forEach((line, i) => {
          if (/\bissues? #?\d+\b|\(#\d+[,)]/i.test(line)) cites.push(`${file}:${i + 1}`);
        });
    }
    expect(cites.sort()).toEqual([]);
  });
});
