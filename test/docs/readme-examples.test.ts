// README.md's examples run as printed against a fresh server (issue 16, item 1): a real `herald serve` over an
// empty database in a temp dir, whose first-start banner gives the credentials. The banner's "paste these lines"
// block (the `herald` function and the exports) runs first, then the banner's own examples, then every README
// block marked `example` (```sh example, ```ts example) in document order, then those of docs/*.md, each in a
// fresh bash from a scratch directory, as a reader would paste them. Each block runs twice, the second time in
// another fresh bash over what the first left: a reader pastes a block again, and it must not then trip over the
// user it made the first time (issue 54, item 6).
//
// Convention: every shell block in README.md is marked. `example` blocks run here; `setup` blocks are the
// install/start/build commands this test performs its own way (it starts the server itself).
//
// The server runs on the test run's engine: an empty SQLite file, or under HERALD_TEST_ENGINE=postgres an empty
// (migrated) PostgreSQL database, where the banner and every example must work the same — except the backup
// examples: backups are the SQLite file's (VACUUM INTO), and on PostgreSQL their routes answer 409
// backup_not_on_postgres as docs/postgres.md says, so those blocks run on SQLite only.
import { afterAll, beforeAll, describe, expect, setDefaultTimeout, test } from "bun:test";
import { mkdirSync, mkdtempSync, readFileSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { BUN, exitWithin, freePort, REPO_ROOT, spawnHerald } from "../support/process";
import { servedDatabase } from "../support/served-database";
import { testOn } from "../support/skipped";
import { documentationFiles, fencedBlocks, jsonObjectsIn } from "./markdown";

// Each block starts bash and a few `herald sign` processes: seconds on a loaded 2-core machine.
setDefaultTimeout(60_000);

const SHELLS = new Set(["sh", "bash", "shell", "console", "zsh"]);
/** The backup routes, SQLite's only (see above). */
const BACKUP_ROUTE = /\/admin\/backups?\b/;
const readme = fencedBlocks(readFileSync(join(REPO_ROOT, "README.md"), "utf8"), "README.md");
// README's examples first, then any page under docs/ that marks a block `example` the same way (same server,
// same banner lines, README's state before them).
const examples = documentationFiles().flatMap(([file, text]) => fencedBlocks(text, file).filter((b) => b.markers.includes("example")));

const dir = mkdtempSync(join(tmpdir(), "herald-readme-"));
const database = await servedDatabase(dir, join("data", "herald.db"));
const port = freePort();
let server: ReturnType<typeof spawnHerald>;
const captured = { stdout: "" };
let banner = "";

/** Reads the server's stdout into `captured` until the banner's closing rule has arrived (bounded). */
async function waitForBanner(): Promise<string> {
  const deadline = Date.now() + 30_000;
  for (let i = 0; i < 3000 && Date.now() < deadline; i++) {
    const start = captured.stdout.indexOf("Herald first start");
    const end = start === -1 ? -1 : captured.stdout.indexOf("\n====", start);
    if (end !== -1) return captured.stdout.slice(start, captured.stdout.indexOf("\n", end + 1));
    if (server.exitCode !== null) break;
    await Bun.sleep(10);
  }
  throw new Error(`no first-start banner from herald serve; stdout so far:\n${captured.stdout}`);
}

/** The indented lines of the banner section that starts with `heading`, up to the next blank line. */
function bannerSection(heading: string): string {
  const lines = banner.split("\n");
  const at = lines.findIndex((l) => l.startsWith(heading));
  if (at === -1) throw new Error(`the banner has no "${heading}" section:\n${banner}`);
  const body: string[] = [];
  for (const l of lines.slice(at + 1)) {
    if (!l.startsWith("  ")) break;
    body.push(l.slice(2));
  }
  return body.join("\n");
}

beforeAll(async () => {
  server = spawnHerald(["serve"], {
    NODE_ENV: "development",
    ...database.env,
    PORT: String(port),
    HOST: "127.0.0.1",
    JOBS_ENABLED: "0",
    LOG_LEVEL: "warn",
    // docs/sandbox.md's block makes 23 sandbox calls and the sandbox allows 30 a minute per key: a reader who
    // pastes it again waits a minute (the page says so); this test pastes it again at once.
    PARTNER_SANDBOX_RATE_LIMIT_PER_MINUTE: "120",
  });
  void (async () => {
    const decoder = new TextDecoder();
    for await (const chunk of server.stdout) captured.stdout += decoder.decode(chunk, { stream: true });
  })();
  banner = await waitForBanner();
  writeFileSync(join(dir, "banner.sh"), bannerSection("Paste these lines") + "\n");
  // The TypeScript example imports "./src/client" from a checkout's root: give its scratch directory that view.
  symlinkSync(join(REPO_ROOT, "src"), join(dir, "src"));
});

afterAll(async () => {
  server?.kill("SIGTERM");
  if (server) await exitWithin(server, 30_000);
  await database.drop();
  // The link into the checkout goes first, so that removing the scratch directory can never reach src/.
  rmSync(join(dir, "src"), { force: true });
  rmSync(dir, { recursive: true, force: true });
});

/** Runs `script` in a fresh bash (errexit, nounset, pipefail) after the banner's paste-in lines, from `dir`. */
async function runAfterBanner(script: string) {
  const full = `set -euo pipefail\nsource ${JSON.stringify(join(dir, "banner.sh"))}\n${script}\n`;
  const p = Bun.spawn(["bash", "-c", full], {
    cwd: dir,
    // The examples write only under $TMPDIR (never into the checkout they are pasted in): here, the scratch directory.
    env: { PATH: process.env.PATH ?? "/usr/bin:/bin", HOME: process.env.HOME ?? "/tmp", TMPDIR: dir },
    stdout: "pipe",
    stderr: "pipe",
  });
  const out = Promise.all([new Response(p.stdout).text(), new Response(p.stderr).text()]);
  const code = await exitWithin(p, 50_000);
  const [stdout, stderr] = await out;
  return { code, stdout, stderr };
}

/** Exit 0, some output, and every JSON answer in it a success (curl exits 0 on a 4xx: the body tells). */
function expectSucceeded(what: string, r: { code: number | null; stdout: string; stderr: string }) {
  const context = `${what}\n--- stdout\n${r.stdout.slice(0, 3000)}\n--- stderr\n${r.stderr.slice(0, 3000)}`;
  if (r.code !== 0) throw new Error(`exited ${r.code}: ${context}`);
  if (r.stdout.trim() === "") throw new Error(`printed nothing: ${context}`);
  const failures = jsonObjectsIn(r.stdout).filter((o) => "success" in o && o.success !== true);
  if (failures.length) throw new Error(`answered ${failures.map((f) => `${f.error}: ${f.message}`).join("; ")}: ${context}`);
}

/**
 * Each JSON answer on a line of its own, and the output ending with a newline: curl prints an answer without one,
 * so two answers (or an answer and the reader's next prompt) would otherwise run together on one line.
 */
function expectAnswersOnLinesOfTheirOwn(what: string, stdout: string) {
  const together = stdout.split("\n").filter((line) => {
    const answers = jsonObjectsIn(line).length;
    return answers > 1 || (answers === 1 && !/^\s*\{.*\}\s*$/.test(line));
  });
  expect(together, `${what}: answers that share a line`).toEqual([]);
  expect(stdout.endsWith("\n"), `${what}: the output does not end with a newline`).toBe(true);
}

describe("README.md's shell and TypeScript examples", () => {
  test("every shell block is marked `example` (run here) or `setup` (install, start, build)", () => {
    const unmarked = readme.filter((b) => SHELLS.has(b.lang) && !b.markers.includes("example") && !b.markers.includes("setup"));
    expect(unmarked.map((b) => `README.md:${b.line} \`\`\`${b.lang}`)).toEqual([]);
    expect(examples.filter((b) => SHELLS.has(b.lang)).length).toBeGreaterThanOrEqual(3);
    expect(examples.filter((b) => b.lang === "ts").length).toBeGreaterThanOrEqual(1);
  });

  test("the first-start banner labels a live key, a sandbox key and an admin token, each shown once", () => {
    const values = [...banner.matchAll(/^\s+(?:key id|secret|token)\s*: (\S+)$/gm)].map((m) => m[1]!);
    expect(values).toHaveLength(5);
    expect(values[0]).toMatch(/^hk_live_/);
    expect(values[1]).toMatch(/^hsk_live_/);
    expect(values[2]).toMatch(/^hk_test_/);
    expect(values[3]).toMatch(/^hsk_test_/);
    expect(values[4]).toMatch(/^hat_/);
    expect(banner).toContain("LIVE partner key");
    expect(banner).toContain("SANDBOX partner key");
    expect(banner).toContain("ADMIN token");
    // Printed once: a restart of the same database shows no banner (checked in test/auth/routes.test.ts), and
    // within this one each value appears only beside its label and in its export line.
    for (const v of values) expect(banner.split(v).length - 1).toBe(2);
  });

  test("the banner's own examples run as printed", async () => {
    const r = await runAfterBanner(bannerSection("Then try"));
    expectSucceeded("the banner's examples", r);
    expectAnswersOnLinesOfTheirOwn("the banner's examples", r.stdout);
    expect(jsonObjectsIn(r.stdout).filter((o) => o.success === true)).toHaveLength(3);
  });

  for (const block of examples) {
    const label = `${block.file}:${block.line} \`\`\`${block.lang} ${block.markers.join(" ")}`;
    const run = BACKUP_ROUTE.test(block.text) ? testOn("sqlite", "test/docs/readme-examples.test.ts") : test;
    run(
      `${label} runs as printed, and again`,
      async () => {
        let script = block.text;
        if (!SHELLS.has(block.lang)) {
          expect(block.lang).toBe("ts");
          // As README says: saved outside the checkout, run from it with `bun run - < file` (its src/ is the checkout's).
          const outside = join(dir, "outside");
          mkdirSync(outside, { recursive: true });
          const file = join(outside, `${block.file.replaceAll("/", "-")}-${block.line}.ts`);
          writeFileSync(file, block.text + "\n");
          // HeraldClient throws on any refusal, so exit 0 means every call succeeded.
          script = `${JSON.stringify(BUN)} run - < ${JSON.stringify(file)}`;
        }
        for (const pass of ["first run", "second run (pasted again)"]) {
          const r = await runAfterBanner(script);
          expectSucceeded(`${pass} of ${label}:\n${block.text}`, r);
          expectAnswersOnLinesOfTheirOwn(`${pass} of ${label}`, r.stdout);
        }
      },
      120_000,
    );
  }
});
