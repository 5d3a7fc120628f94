// Claims of resolved issues that do not hold on today's main (re-verification, 2026-11-29). Each test states the
// issue's words; it fails until the behaviour is restored.
import { expect, test } from "bun:test";
import { readFileSync } from "node:fs";
import { dirname, join } from "node:path";
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

// Issue 25: "Herald's users run dist/herald (README step 4, the Dockerfile, fly.toml)". The Dockerfile's build stage
// copies only package*.json, tsconfig.json, src, drizzle and sdk ("only what the build reads"), but the build also
// embeds files under docs/ (src/developers/portal-pages.ts imports docs/*.md as text, src/http/openapi/samples.ts
// docs/python/herald_sign.py, portal-downloads.ts docs/examples/webhook-receiver.ts through a macro): `npm run build`
// in a folder holding just those copies fails with 'Could not resolve: "../../docs/sdk.md"' and ten more.
test("issue 25: the Dockerfile's build stage copies every repository folder the build embeds files from", () => {
  const dockerfile = readFileSync("Dockerfile", "utf8");
  const buildStage = dockerfile.split(/^FROM /m)[1] ?? "";
  const copied = new Set(
    [...buildStage.matchAll(/^COPY\s+(?!--from)(.+?)\s+\S+\s*$/gm)].flatMap((m) => m[1]!.split(/\s+/)).map((p) => p.replace(/^\.\//, "").split("/")[0]!),
  );
  const needed = new Set<string>();
  for (const file of new Glob("src/**/*.ts").scanSync(".")) {
    const text = readFileSync(file, "utf8");
    for (const m of text.matchAll(/from\s+"((?:\.\.\/)+[^"]+)"\s+with\s+\{\s*type:\s*"(?:text|file)"/g)) {
      const top = join(dirname(file), m[1]!).split("/")[0]!;
      if (top !== "node_modules") needed.add(top);
    }
    for (const m of text.matchAll(/repositoryText\("([^"]+)"\)/g)) needed.add(m[1]!.split("/")[0]!);
  }
  expect([...needed].filter((top) => !copied.has(top)).sort()).toEqual([]);
});

// Issue 52: "the digest's baseline modes are written in three places (BASELINE_MODES, a literal union in the model,
// and another in the console page)" → "baseline modes from one list". The model now maps BASELINE_MODES; the console
// page (src/ops/digest/digest-page.ts:88) still spells its own t.Union of the three literals, as it did at the
// issue's resolution (b91b176, src/ops/console/digest-page.ts:99).
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
