// A CLI command against a database whose master key it does not have, as real processes: it names the key the
// database expects, where it looked and how to give it, exits 78 and writes nothing — no master.key, no data folder,
// no row, no error-level "master key mismatch" in the log. The list commands run without the key and say so. Both
// engines: the SQLite file in a folder, and PostgreSQL from another folder (a cluster of this file's own).
import { afterAll, beforeAll, describe, expect, setDefaultTimeout, test } from "bun:test";
import { existsSync, mkdirSync, mkdtempSync, readdirSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { SecretBox } from "../../src/auth/secret-box";
import { PostgresStore } from "../../src/db/postgres-engine";
import { withDatabase } from "../support/engine";
import { postgresPresent, startCluster, type TestCluster } from "../support/postgres";
import { spawnHerald } from "../support/process";

setDefaultTimeout(120_000);

const KEY_A = "a7".repeat(32);
const KEY_B = "b8".repeat(32);
const FP_A = new SecretBox(Buffer.from(KEY_A, "hex")).fingerprint;
const FP_B = new SecretBox(Buffer.from(KEY_B, "hex")).fingerprint;
const root = mkdtempSync(join(tmpdir(), "herald-key-cli-"));
afterAll(() => rmSync(root, { recursive: true, force: true }));

async function run(args: string[], env: Record<string, string>, cwd?: string) {
  const p = spawnHerald(args, { NODE_ENV: "test", LOG_LEVEL: "info", ...env }, cwd);
  const [stdout, stderr, code] = await Promise.all([new Response(p.stdout).text(), new Response(p.stderr).text(), p.exited]);
  return { stdout, stderr, code };
}

/** Nothing an operator would have to clean up, and nothing logged at error level. */
function expectQuiet(r: { stdout: string; stderr: string }) {
  expect(r.stdout + r.stderr).not.toContain('"level":"error"');
  expect(r.stdout + r.stderr).not.toContain("master key mismatch");
  expect(r.stdout + r.stderr).not.toContain("operators have been told");
}

describe("on a SQLite file made with another key", () => {
  const dir = join(root, "sqlite");
  const db = join(dir, "herald.db");
  const env = { HERALD_DB_PATH: db };
  let keyId = "";

  beforeAll(async () => {
    mkdirSync(dir);
    const made = await run(["keys", "create", "--partner", "Acme", "--mode", "live", "--scopes", "read", "--json"], { ...env, HERALD_MASTER_KEY: KEY_A });
    expect(made.code).toBe(0);
    keyId = JSON.parse(made.stdout).key_id;
  });

  test("keys create without the key: exit 78, one line naming the fingerprint, where it looked and how to give it; nothing written", async () => {
    const before = readdirSync(dir).sort();
    const r = await run(["keys", "create", "--partner", "Acme", "--mode", "live", "--scopes", "read"], env);
    expect(r.code).toBe(78);
    expect(r.stdout).toBe("");
    expect(r.stderr).toBe(
      `herald: this database expects the master key with fingerprint ${FP_A}; HERALD_MASTER_KEY is not set and there is no ${join(dir, "master.key")}. ` +
        `Give the command the key the service runs with (HERALD_MASTER_KEY=… herald …) or copy the service's master.key to ${join(dir, "master.key")}. Nothing was changed.\n`,
    );
    expect(readdirSync(dir).sort()).toEqual(before);
    expect(existsSync(join(dir, "master.key"))).toBe(false);
  });

  test("with another key: exit 78 naming both fingerprints, never the key; nothing written", async () => {
    const r = await run(["keys", "rotate", keyId], { ...env, HERALD_MASTER_KEY: KEY_B });
    expect(r.code).toBe(78);
    expect(r.stderr).toContain(`this database expects the master key with fingerprint ${FP_A}, but HERALD_MASTER_KEY has fingerprint ${FP_B}`);
    expect(r.stderr + r.stdout).not.toContain(KEY_B);
    expectQuiet(r);
    for (const args of [
      ["admin-token", "create", "--name", "ops"],
      ["jobs", "run", "job-runs-prune"],
    ]) {
      const other = await run(args, env);
      expect({ args, code: other.code }).toEqual({ args, code: 78 });
    }
    const listed = await run(["keys", "list", "--json"], { ...env, HERALD_MASTER_KEY: KEY_A });
    expect(JSON.parse(listed.stdout).keys.map((k: { key_id: string }) => k.key_id)).toEqual([keyId]);
    const jobs = await run(["jobs", "list", "--json"], { ...env, HERALD_MASTER_KEY: KEY_A });
    expect(JSON.parse(jobs.stdout).jobs.every((j: { last_run: unknown }) => j.last_run === null)).toBe(true);
  });

  test("keys list, admin-token list and jobs list run without the key, with a note; no key file is made", async () => {
    for (const args of [
      ["keys", "list", "--json"],
      ["admin-token", "list", "--json"],
      ["jobs", "list", "--json"],
    ]) {
      const r = await run(args, env);
      expect({ args, code: r.code }).toEqual({ args, code: 0 });
      JSON.parse(r.stdout);
      expect(r.stderr).toContain(`note: this database expects the master key with fingerprint ${FP_A}; HERALD_MASTER_KEY is not set`);
      expect(r.stderr).toContain("Listing only; to change the database, give the command the key the service runs with");
      expectQuiet(r);
    }
    expect(existsSync(join(dir, "master.key"))).toBe(false);
  });

  test("with its key the same commands work", async () => {
    const r = await run(["keys", "create", "--partner", "Acme", "--mode", "sandbox", "--scopes", "read", "--json"], { ...env, HERALD_MASTER_KEY: KEY_A });
    expect(r.code).toBe(0);
    expect(r.stderr).toBe("");
  });
});

const pg = postgresPresent("test/cli/master-key-cli.test.ts");

describe.if(pg)("on PostgreSQL, from another folder", () => {
  let cluster: TestCluster;
  let url = "";
  // The folder an operator runs the command from: no data/ in it, and none must appear.
  const elsewhere = join(root, "elsewhere");

  beforeAll(async () => {
    cluster = await startCluster();
    const admin = new PostgresStore({ url: cluster.url, poolMax: 1 });
    await admin.run("CREATE DATABASE keyed");
    await admin.close();
    url = withDatabase(cluster.url, "keyed");
    mkdirSync(elsewhere);
    // The instances' key is recorded by the first command that has it.
    const made = await run(["keys", "create", "--partner", "Acme", "--mode", "live", "--scopes", "read", "--json"], {
      DATABASE_URL: url,
      HERALD_MASTER_KEY: KEY_A,
      HERALD_DB_PATH: join(root, "instances", "herald.db"),
    });
    expect(made.code).toBe(0);
  });
  afterAll(() => cluster?.stop());

  test("jobs list and keys list run, write no ./data/master.key and log no mismatch", async () => {
    for (const args of [
      ["jobs", "list"],
      ["keys", "list"],
    ]) {
      const r = await run(args, { DATABASE_URL: url }, elsewhere);
      expect({ args, code: r.code }).toEqual({ args, code: 0 });
      expect(r.stderr).toContain(
        `note: this database expects the master key with fingerprint ${FP_A}; HERALD_MASTER_KEY is not set and there is no ${join(elsewhere, "data", "master.key")}`,
      );
      expectQuiet(r);
    }
    expect(readdirSync(elsewhere)).toEqual([]);
  });

  test("keys create says which key the database expects and exits 78, with nothing written", async () => {
    const store = new PostgresStore({ url, poolMax: 1 });
    try {
      const rows = async () => (await store.get<{ n: number }>("SELECT (SELECT count(*) FROM partner_keys) + (SELECT count(*) FROM admin_audit) AS n"))!.n;
      const before = await rows();
      const r = await run(["keys", "create", "--partner", "Acme", "--mode", "live", "--scopes", "read"], { DATABASE_URL: url }, elsewhere);
      expect(r.code).toBe(78);
      expect(r.stderr).toStartWith(`herald: this database expects the master key with fingerprint ${FP_A}; HERALD_MASTER_KEY is not set`);
      expect(r.stderr).toContain("Nothing was changed.");
      expect(r.stderr.trim().split("\n")).toHaveLength(1);
      const wrong = await run(
        ["keys", "create", "--partner", "Acme", "--mode", "live", "--scopes", "read"],
        { DATABASE_URL: url, HERALD_MASTER_KEY: KEY_B },
        elsewhere,
      );
      expect(wrong.code).toBe(78);
      expect(wrong.stderr).toContain(`but HERALD_MASTER_KEY has fingerprint ${FP_B}`);
      expectQuiet(wrong);
      expect(await rows()).toBe(before);
      expect(readdirSync(elsewhere)).toEqual([]);
      const right = await run(
        ["keys", "create", "--partner", "Acme", "--mode", "live", "--scopes", "read", "--json"],
        { DATABASE_URL: url, HERALD_MASTER_KEY: KEY_A },
        elsewhere,
      );
      expect(right.code).toBe(0);
      expect(readdirSync(elsewhere)).toEqual([]);
    } finally {
      await store.close();
    }
  });
});
