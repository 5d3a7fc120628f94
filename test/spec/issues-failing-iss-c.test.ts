// Claims of resolved issues that do not hold on today's main (re-verification, 2026-11-29). Each test states the
// issue's words; it fails until the behaviour is restored.
import { expect, test } from "bun:test";
import { readFileSync } from "node:fs";
import { Glob } from "bun";

// Issue 28, item 1 and its closing note: "No module outside `src/db/` imports `bun:sqlite` or Bun's SQL (a
// conventions test)". No such conventions test exists (test/conventions has none), and two modules outside src/db/
// open SQLite themselves: src/cli/master-key.ts (the CLI's key check, since #54) and src/workers/read-worker.ts (the
// read worker, since store.apart).
test("issue 28: no module outside src/db/ imports bun:sqlite or Bun's SQL", () => {
  const offenders: string[] = [];
  for (const file of new Glob("src/**/*.ts").scanSync(".")) {
    if (file.startsWith("src/db/")) continue;
    const text = readFileSync(file, "utf8");
    if (/from\s+["']bun:sqlite["']|import\(\s*["']bun:sqlite["']\s*\)/.test(text)) offenders.push(`${file}: bun:sqlite`);
    if (/import\s*\{[^}]*\bSQL\b[^}]*\}\s*from\s*["']bun["']|\bBun\.SQL\b/.test(text)) offenders.push(`${file}: Bun's SQL`);
  }
  expect(offenders.sort()).toEqual([]);
});

// Issue 52, "What to build": "Comments say why, briefly; no issue numbers in code." True at its resolution (b91b176:
// none in src/); since then 17 comments cite issues 71, 72, 74 and 76 (e.g. src/db/row-held.ts:1, src/config/index.ts:80),
// and test/conventions/citations.test.ts does not look for them.
test("issue 52: no comment in src/ cites an issue number", () => {
  const cites: string[] = [];
  for (const file of new Glob("src/**/*.ts").scanSync(".")) {
    if (file.endsWith("client/api-types.ts")) continue; // generated
    readFileSync(file, "utf8")
      .split("\n")
      .forEach((line, i) => {
        if (/\bissues? #?\d+\b|\(#\d+[,)]/i.test(line)) cites.push(`${file}:${i + 1}`);
      });
  }
  expect(cites.sort()).toEqual([]);
});
