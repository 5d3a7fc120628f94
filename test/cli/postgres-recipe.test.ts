// docs/postgres.md's "Try it on one machine" block runs as printed, twice in a row: a PostgreSQL cluster of its own
// in a temp folder, two `herald serve` instances with one master key, a ready answer from each, and nothing left
// behind — no folder, no process. Too slow for the README examples' run (a cluster and two servers, 20–40 s on a
// loaded 2-core machine), so it runs here, in a fresh bash with `herald` defined as the first-start banner defines it.
// It starts its own cluster whatever the test run's engine.
import { expect, setDefaultTimeout, test } from "bun:test";
import { existsSync, readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { fencedBlocks } from "../docs/markdown";
import { postgresPresent } from "../support/postgres";
import { BUN, exitWithin, MAIN, REPO_ROOT } from "../support/process";

setDefaultTimeout(400_000);

const pg = postgresPresent("test/cli/postgres-recipe.test.ts");
const blocks = fencedBlocks(readFileSync(join(REPO_ROOT, "docs", "postgres.md"), "utf8"), "docs/postgres.md").filter(
  (b) => b.lang === "sh" && b.markers.includes("try-it"),
);

/** Processes whose command line names `path` (a server or PostgreSQL still running from the removed folder). */
function processesUnder(path: string): string[] {
  const found: string[] = [];
  for (const pid of readdirSync("/proc").filter((n) => /^\d+$/.test(n))) {
    try {
      const cmd = readFileSync(`/proc/${pid}/cmdline`, "utf8").replaceAll("\0", " ");
      if (cmd.includes(path)) found.push(`${pid}: ${cmd}`);
    } catch {
      // gone meanwhile
    }
  }
  return found;
}

async function runBlock(text: string) {
  const herald = `herald() { ${JSON.stringify(BUN)} ${JSON.stringify(MAIN)} "$@"; }`;
  const p = Bun.spawn(["bash", "-c", `set -euo pipefail\n${herald}\n${text}\n`], {
    cwd: REPO_ROOT,
    env: { PATH: process.env.PATH ?? "/usr/bin:/bin", HOME: process.env.HOME ?? "/tmp" },
    stdout: "pipe",
    stderr: "pipe",
  });
  const out = Promise.all([new Response(p.stdout).text(), new Response(p.stderr).text()]);
  const code = await exitWithin(p, 180_000);
  if (code === null) p.kill("SIGKILL");
  const [stdout, stderr] = await out;
  return { code, stdout, stderr };
}

test("docs/postgres.md has one `sh try-it` block", () => {
  expect(blocks).toHaveLength(1);
});

test.skipIf(!pg)(
  "the local PostgreSQL recipe runs as printed, twice, and cleans up after itself",
  async () => {
    for (let run = 1; run <= 2; run++) {
      const r = await runBlock(blocks[0]!.text);
      const context = `run ${run}\n--- stdout\n${r.stdout.slice(0, 3000)}\n--- stderr\n${r.stderr.slice(0, 3000)}`;
      // The diff of a failed toEqual elides the unchanged context, so a failure prints it whole.
      if (r.code !== 0) console.error(`the recipe failed (exit ${r.code}), ${context}`);
      expect({ code: r.code, context }).toEqual({ code: 0, context });
      const answers = r.stdout
        .split("\n")
        .filter((l) => l.startsWith("{"))
        .map((l) => JSON.parse(l));
      expect(answers).toHaveLength(2);
      for (const a of answers) expect(a).toMatchObject({ ready: true, database: { engine: "postgres" }, checks: { master_key: { ok: true } } });
      // Both instances accept the same key.
      expect(answers[0].checks.master_key.detail).toBe(answers[1].checks.master_key.detail);
      const removed = /removed (\S+)$/m.exec(r.stdout)?.[1];
      expect(removed).toBeDefined();
      expect(existsSync(removed!)).toBe(false);
      expect(processesUnder(removed!)).toEqual([]);
    }
  },
  400_000,
);
