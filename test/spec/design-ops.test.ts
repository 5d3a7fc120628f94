// Design audit: persistence and operations (docs/design.md §8) and the README's command-line claims.
import { afterEach, expect, test } from "bun:test";
import { createHash } from "node:crypto";
import { existsSync, mkdtempSync, readFileSync, rmSync, statSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { openTestApp, type TestApp } from "../support/app";
import { testEngine } from "../support/engine";
import { createAdminToken, signedJson } from "../support/partner";
import { exitWithin, freePort, spawnHerald, waitForHttp } from "../support/process";

let h: TestApp | undefined;
const dirs: string[] = [];
afterEach(async () => {
  await h?.close();
  h = undefined;
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
});
const tempDir = () => {
  const d = mkdtempSync(join(tmpdir(), "herald-design-ops-"));
  dirs.push(d);
  return d;
};

// "POST /admin/backup/run makes a consistent snapshot (VACUUM INTO …) and reports its path, size and sha256";
// "On PostgreSQL the backup routes answer 409 backup_not_on_postgres"
test("POST /admin/backup/run: the reported size and sha256 are the file's; 409 backup_not_on_postgres on PostgreSQL", async () => {
  h = await openTestApp();
  const admin = await createAdminToken(h);
  const r = await h.json("/admin/backup/run", { method: "POST", headers: { authorization: `Bearer ${admin}` } });
  if (testEngine() === "postgres") {
    expect([r.status, r.body.error]).toEqual([409, "backup_not_on_postgres"]);
    return;
  }
  expect(r.status).toBe(200);
  const { path, size_bytes, sha256 } = r.body.backup;
  expect(statSync(path).size).toBe(size_bytes);
  expect(createHash("sha256").update(readFileSync(path)).digest("hex")).toBe(sha256);
  expect(readFileSync(path).subarray(0, 16).toString("latin1")).toBe("SQLite format 3\u0000");
});

// README "Command line": "An unknown command, or an option the command does not take, is refused with the usage
// text on stderr and exit code 2"; "version … print and exit 0; they never start the server".
test("the CLI: an unknown command and an unknown option exit 2; version exits 0 and creates no database", async () => {
  const dir = tempDir();
  const env = { HERALD_DB_PATH: join(dir, "data", "herald.db"), LOG_LEVEL: "silent" };
  const bogus = spawnHerald(["bogus"], env, dir);
  expect(await exitWithin(bogus, 30_000)).toBe(2);
  expect(await new Response(bogus.stderr).text()).toContain("Usage");
  expect(await exitWithin(spawnHerald(["keys", "list", "--bogus"], env, dir), 30_000)).toBe(2);
  const version = spawnHerald(["version"], env, dir);
  expect(await exitWithin(version, 30_000)).toBe(0);
  expect(existsSync(join(dir, "data"))).toBe(false);
});

// README step 4: "A start on a port in use stops at once with that reason, before creating anything."
// docs/design.md §8: "SIGTERM: stop accepting, finish in-flight requests, stop jobs, flush buffers, checkpoint WAL, exit 0."
test.skipIf(testEngine() === "postgres")(
  "herald serve: a port in use stops it before creating anything; SIGTERM exits 0",
  async () => {
    const dir = tempDir();
    const port = freePort();
    const env = { HERALD_DB_PATH: join(dir, "data", "herald.db"), PORT: String(port), HOST: "127.0.0.1", LOG_LEVEL: "warn", NODE_ENV: "test" };
    const server = spawnHerald(["serve"], env, dir);
    try {
      await waitForHttp(`http://127.0.0.1:${port}/healthz`, 30_000);
      const dir2 = tempDir();
      const second = spawnHerald(["serve"], { ...env, HERALD_DB_PATH: join(dir2, "data", "herald.db") }, dir2);
      const code = await exitWithin(second, 30_000);
      expect(code).not.toBeNull();
      expect(code).not.toBe(0);
      expect(existsSync(join(dir2, "data"))).toBe(false);
      server.kill("SIGTERM");
      expect(await exitWithin(server, 30_000)).toBe(0);
    } finally {
      server.kill("SIGKILL");
    }
  },
  120_000,
);

// docs/design.md §8 "SQLite: journal_mode=WAL, synchronous=NORMAL, busy_timeout=5000, foreign_keys=ON"
test.skipIf(testEngine() === "postgres")("the SQLite connection runs WAL, synchronous NORMAL, busy_timeout 5000, foreign keys on", async () => {
  h = await openTestApp();
  const pragma = async (name: string) => Object.values((await h!.ctx.store.get(`PRAGMA ${name}`, [])) as Record<string, unknown>)[0];
  expect(await pragma("journal_mode")).toBe("wal");
  expect(await pragma("synchronous")).toBe(1);
  expect(await pragma("busy_timeout")).toBe(5000);
  expect(await pragma("foreign_keys")).toBe(1);
});

// README "Command line": "The CLI works on the same database file as a running server"; docs/design.md §8 coordination
// state in the database (a key made or disabled by the CLI is seen by the server, whose cache re-checks a version row).
test.skipIf(testEngine() === "postgres")(
  "a key created and then disabled by `herald keys` on the server's file works, then is refused",
  async () => {
    h = await openTestApp();
    const env = { HERALD_DB_PATH: h.ctx.config.dbPath, LOG_LEVEL: "silent", NODE_ENV: "test" };
    const made = spawnHerald(["keys", "create", "--partner", "Cli", "--mode", "live", "--scopes", "read,users", "--json"], env);
    expect(await exitWithin(made, 30_000)).toBe(0);
    const k = JSON.parse(await new Response(made.stdout).text()) as { key_id: string; secret: string };
    const key = { keyId: k.key_id, secret: k.secret, mode: "live" as const };
    h.clock.advance(1_500);
    expect((await signedJson(h, key, "GET", "/api/partner/users")).status).toBe(200);
    expect(await exitWithin(spawnHerald(["keys", "disable", k.key_id, "--reason", "audit", "--json"], env), 30_000)).toBe(0);
    h.clock.advance(1_500);
    const refused = await signedJson(h, key, "GET", "/api/partner/users");
    expect([refused.status, refused.body.error]).toEqual([403, "forbidden"]);
  },
  90_000,
);
