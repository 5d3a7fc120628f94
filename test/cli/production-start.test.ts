// `herald serve` with NODE_ENV=production as a real child process (issue 74, item 9): PUBLIC_BASE_URL must be given
// and https (the same exit 78 as every refused setting), and a start with no operator token says how to make the
// first one, until one exists (or ADMIN_TOKEN gives it). On the test run's engine: a SQLite file, or under
// HERALD_TEST_ENGINE=postgres a fresh PostgreSQL database.
import { afterAll, describe, expect, setDefaultTimeout, test } from "bun:test";
import { mkdtempSync, readdirSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { exitWithin, freePort, spawnHerald } from "../support/process";
import { servedDatabase } from "../support/served-database";

setDefaultTimeout(90_000);

const dir = mkdtempSync(join(tmpdir(), "herald-production-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const PRODUCTION = {
  NODE_ENV: "production",
  HERALD_MASTER_KEY: "12".repeat(32),
  HOST: "127.0.0.1",
  LOG_LEVEL: "info",
  JOBS_ENABLED: "0",
  SHUTDOWN_DRAIN_DELAY_MS: "0",
};
const HINT = "no operator token: nobody can use /admin or the console yet";

async function run(args: string[], env: Record<string, string>, cwd?: string) {
  const p = spawnHerald(args, env, cwd);
  const [stdout, stderr] = await Promise.all([new Response(p.stdout).text(), new Response(p.stderr).text()]);
  return { stdout, stderr, code: await exitWithin(p, 60_000) };
}

const logLines = (stdout: string) =>
  stdout
    .split("\n")
    .filter((l) => l.startsWith("{"))
    .map((l) => JSON.parse(l) as Record<string, unknown>);

/** Starts the server, waits for its listening line, stops it with SIGTERM; its stdout. */
async function startAndStop(env: Record<string, string>): Promise<string> {
  const p = spawnHerald(["serve"], { ...env, PORT: String(freePort()) });
  let stdout = "";
  const reading = (async () => {
    const decoder = new TextDecoder();
    for await (const chunk of p.stdout) stdout += decoder.decode(chunk, { stream: true });
  })();
  try {
    for (let i = 0; i < 3000 && !stdout.includes('"msg":"herald listening"') && p.exitCode === null; i++) await Bun.sleep(10);
    expect(stdout).toContain('"msg":"herald listening"');
    p.kill("SIGTERM");
    expect(await exitWithin(p, 30_000)).toBe(0);
    await reading;
    return stdout;
  } finally {
    p.kill("SIGKILL");
    await p.exited;
  }
}

describe("production: PUBLIC_BASE_URL", () => {
  test("unset or http is refused at start (exit 78) with what to give instead; nothing is created", async () => {
    const empty = mkdtempSync(join(dir, "refused-"));
    const env = { ...PRODUCTION, PORT: String(freePort()), HERALD_DB_PATH: "./data/herald.db" };
    const unset = await run(["serve"], env, empty);
    expect(unset.code).toBe(78);
    expect(unset.stderr).toBe(
      "herald: invalid configuration:\n  PUBLIC_BASE_URL is required when NODE_ENV=production: the https address clients reach Herald at (e.g. https://herald.example.com, usually the TLS proxy in front of it)\n",
    );
    const http = await run(["serve"], { ...env, PUBLIC_BASE_URL: "http://herald.example.com" }, empty);
    expect(http.code).toBe(78);
    expect(http.stderr).toContain('PUBLIC_BASE_URL="http://herald.example.com" is refused when NODE_ENV=production: it must be https');
    expect(readdirSync(empty)).toEqual([]);
  });
});

describe("production: the first operator token", () => {
  test("a start with none says how to make it, once; after `herald admin-token create` (or with ADMIN_TOKEN) nothing is said", async () => {
    const db = await servedDatabase(dir, "first-token.db");
    const env = { ...PRODUCTION, ...db.env, PUBLIC_BASE_URL: "https://herald.example.com" };
    try {
      const first = await startAndStop(env);
      // Production never prints credentials; it says how to make the operator's.
      expect(first).not.toContain("Herald first start");
      const hints = logLines(first).filter((l) => l.msg === HINT);
      expect(hints).toHaveLength(1);
      expect(hints[0]).toMatchObject({ level: "warn", command: "herald admin-token create --name <your name>" });
      expect(String(hints[0]!.note)).toContain("ADMIN_TOKEN");
      // The command it names, with the same environment, makes one; the next start is quiet.
      const made = await run(["admin-token", "create", "--name", "ops", "--json"], env);
      expect(made.code).toBe(0);
      expect(JSON.parse(made.stdout).token).toMatch(/^hat_/);
      expect(await startAndStop(env)).not.toContain(HINT);
      // Revoked, it is none again.
      const id = String(JSON.parse(made.stdout).id);
      expect((await run(["admin-token", "revoke", "--id", id], env)).code).toBe(0);
      expect(logLines(await startAndStop(env)).filter((l) => l.msg === HINT)).toHaveLength(1);
      // ADMIN_TOKEN gives one from the environment: nothing to say.
      expect(await startAndStop({ ...env, ADMIN_TOKEN: `op_${"z".repeat(40)}` })).not.toContain(HINT);
    } finally {
      await db.drop();
    }
  });
});
