// What a fresh clone meets through npm (issue 74, item 10): `npm install` leaves package-lock.json as it is (the lock
// records package.json's engines and dependencies), SIGTERM to `npm start` — what a supervisor sends — stops the
// server itself, leaving nothing on the port (the script execs bun, so the signal reaches the server, not a shell
// in front of it), and the test runner names the script it ran. On the test run's engine: a SQLite file, or under
// HERALD_TEST_ENGINE=postgres a fresh database.
import { afterAll, describe, expect, setDefaultTimeout, test } from "bun:test";
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import net from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { BUN, exitWithin, freePort, REPO_ROOT, waitForHttp } from "../support/process";
import { servedDatabase } from "../support/served-database";

setDefaultTimeout(90_000);

const dir = mkdtempSync(join(tmpdir(), "herald-npm-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const read = (path: string) => readFileSync(join(REPO_ROOT, path), "utf8");

/** `npm install --package-lock-only` over copies of package.json and `lock`, offline: the lock it writes. */
async function npmLock(lock: string): Promise<string> {
  const work = mkdtempSync(join(dir, "lock-"));
  writeFileSync(join(work, "package.json"), read("package.json"));
  writeFileSync(join(work, "package-lock.json"), lock);
  const p = Bun.spawn(["npm", "install", "--package-lock-only", "--ignore-scripts", "--offline", "--no-audit", "--no-fund"], {
    cwd: work,
    stdout: "pipe",
    stderr: "pipe",
  });
  const [out, err] = await Promise.all([new Response(p.stdout).text(), new Response(p.stderr).text()]);
  expect({ code: await exitWithin(p, 60_000), output: (out + err).split("\n").filter((l) => /npm error/.test(l)) }).toEqual({ code: 0, output: [] });
  return readFileSync(join(work, "package-lock.json"), "utf8");
}

describe("package-lock.json", () => {
  test("records package.json as npm does: npm install on a fresh clone rewrites nothing", async () => {
    const pkg = JSON.parse(read("package.json"));
    const lock = read("package-lock.json");
    const root = JSON.parse(lock).packages[""];
    for (const field of ["name", "version", "engines", "dependencies", "devDependencies", "optionalDependencies"])
      expect([field, root[field]]).toEqual([field, pkg[field]]);
    expect(await npmLock(lock)).toBe(lock);
    // Not vacuous: a lock without the engines (as it was) is rewritten.
    const stale = JSON.parse(lock);
    delete stale.packages[""].engines;
    expect(await npmLock(`${JSON.stringify(stale, null, 2)}\n`)).toBe(lock);
  });
});

/** One TCP connect: "refused" when nothing listens on the port. */
const connect = (port: number) =>
  new Promise<string>((resolve) => {
    const sock = net.connect(port, "127.0.0.1");
    sock.once("connect", () => {
      sock.destroy();
      resolve("accepted");
    });
    sock.once("error", (e: NodeJS.ErrnoException) => resolve(e.code === "ECONNREFUSED" ? "refused" : (e.code ?? e.message)));
  });

/** The processes `pid` started (Linux: /proc). */
const childrenOf = (pid: number) => readFileSync(`/proc/${pid}/task/${pid}/children`, "utf8").trim().split(/\s+/).filter(Boolean).map(Number);

describe("npm start", () => {
  test("SIGTERM to npm stops the server: npm exits, the server's process is gone and the port refuses connections", async () => {
    const db = await servedDatabase(dir, "npm-start.db");
    const port = freePort();
    const npm = Bun.spawn(["npm", "start"], {
      cwd: REPO_ROOT,
      env: {
        PATH: process.env.PATH ?? "",
        HOME: process.env.HOME ?? "/tmp",
        ...db.env,
        PORT: String(port),
        HOST: "127.0.0.1",
        LOG_LEVEL: "warn",
        JOBS_ENABLED: "0",
        BOOTSTRAP_CREDENTIALS: "0",
      },
      stdout: "ignore",
      stderr: "pipe",
    });
    let server: number[] = [];
    try {
      await waitForHttp(`http://127.0.0.1:${port}/healthz`, 60_000);
      // npm's one child is the server itself (exec), not a shell that would die alone and leave it running.
      server = childrenOf(npm.pid);
      // Whatever runs under it too, so that a failure here leaves no orphan behind (the finally kills them all).
      server.push(...server.flatMap((pid) => childrenOf(pid)));
      expect(server).toHaveLength(1);
      expect(readFileSync(`/proc/${server[0]}/cmdline`, "utf8").split("\0")).toContain("src/main.ts");
      npm.kill("SIGTERM");
      expect(await exitWithin(npm, 30_000)).not.toBeNull();
      for (let i = 0; i < 500 && existsSync(`/proc/${server[0]}`); i++) await Bun.sleep(10);
      expect(existsSync(`/proc/${server[0]}`)).toBe(false);
      expect(await connect(port)).toBe("refused");
    } finally {
      npm.kill("SIGKILL");
      for (const pid of server) if (existsSync(`/proc/${pid}`)) process.kill(pid, "SIGKILL");
      await db.drop();
    }
  });
});

describe("the test runner (test/run.ts)", () => {
  test("its last line names the script that ran it: npm test, npm run test:quick", async () => {
    for (const [script, name] of [
      ["test", "npm test"],
      ["test:quick", "npm run test:quick"],
    ] as const) {
      // As npm runs a script: npm_lifecycle_event names it.
      const p = Bun.spawn([BUN, "run", "test/run.ts", "test/clock.test.ts"], {
        cwd: REPO_ROOT,
        env: { PATH: process.env.PATH ?? "", HOME: process.env.HOME ?? "/tmp", npm_lifecycle_event: script },
        stdout: "pipe",
        stderr: "pipe",
      });
      const [, stderr] = await Promise.all([new Response(p.stdout).text(), new Response(p.stderr).text()]);
      expect(await exitWithin(p, 60_000)).toBe(0);
      expect(stderr.trim().split("\n").at(-1)).toMatch(new RegExp(`^${name.replace(":", "\\:")}: \\d+ min \\d+ s$`));
    }
  });
});
