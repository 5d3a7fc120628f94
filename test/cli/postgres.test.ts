import { afterAll, expect, setDefaultTimeout, test } from "bun:test";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { PostgresStore } from "../../src/db/postgres-engine";
import { freshPostgresDatabase, withDatabase } from "../support/engine";
import { spawnHerald } from "../support/process";
import { describeOn } from "../support/skipped";

// `herald migrate` and `herald jobs list|run` against PostgreSQL (DATABASE_URL), as real
// processes. Part of the PostgreSQL run (HERALD_TEST_ENGINE=postgres), which owns the throwaway cluster; the same
// commands on the SQLite file are in cli.test.ts.

setDefaultTimeout(120_000);

// The data lives in PostgreSQL; the folder only keeps the generated master key out of the repository.
const dir = mkdtempSync(join(tmpdir(), "herald-cli-pg-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

async function run(args: string[], env: Record<string, string>) {
  const p = spawnHerald(args, { NODE_ENV: "test", LOG_LEVEL: "warn", HERALD_DB_PATH: join(dir, "herald.db"), ...env });
  const [stdout, stderr, code] = await Promise.all([new Response(p.stdout).text(), new Response(p.stderr).text(), p.exited]);
  return { stdout, stderr, code };
}

describeOn("postgres", "test/cli/postgres.test.ts")("the CLI on PostgreSQL", () => {
  test("migrate applies every PostgreSQL migration to an empty database, once, and never prints the password", async () => {
    const template = await freshPostgresDatabase();
    const admin = new PostgresStore({ url: withDatabase(template.url, "postgres"), poolMax: 1 });
    const name = `herald_cli_${process.pid}`;
    await admin.run(`CREATE DATABASE ${name}`);
    try {
      // The test cluster trusts every local connection: the password is there only to be hidden.
      const url = withDatabase(template.url, name).replace("//herald@", "//herald:s3cret-pw@");
      const first = await run(["migrate", "--json"], { DATABASE_URL: url });
      expect(first.stderr).toBe("");
      expect(first.code).toBe(0);
      expect(first.stdout).not.toContain("s3cret-pw");
      const out = JSON.parse(first.stdout);
      expect(out).toMatchObject({ success: true, db: expect.stringContaining(`/${name}`) });
      expect(out.total).toBeGreaterThanOrEqual(1);
      expect(out.applied).toBe(out.total);
      const again = JSON.parse((await run(["migrate", "--json"], { DATABASE_URL: url })).stdout);
      expect(again).toMatchObject({ applied: 0, total: out.total });
    } finally {
      await admin.run(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
      await admin.close();
      await template.drop();
    }
  });

  test("jobs list and jobs run work against the database, and runs record the instance", async () => {
    const db = await freshPostgresDatabase();
    const env = { DATABASE_URL: db.url, HERALD_INSTANCE_ID: "cli-1" };
    try {
      const list = await run(["jobs", "list", "--json"], env);
      expect(list.code).toBe(0);
      expect(JSON.parse(list.stdout).jobs.map((j: { name: string }) => j.name)).toContain("job-runs-prune");

      const ran = await run(["jobs", "run", "job-runs-prune", "--json"], env);
      expect(ran.code).toBe(0);
      expect(JSON.parse(ran.stdout).run).toMatchObject({ name: "job-runs-prune", ok: true });
      const after = JSON.parse((await run(["jobs", "list", "--json"], env)).stdout).jobs.find((j: { name: string }) => j.name === "job-runs-prune");
      expect(after.last_run).toMatchObject({ ok: true, instance_id: "cli-1" });

      const store = new PostgresStore({ url: db.url, poolMax: 1 });
      try {
        expect(await store.all("SELECT name, trigger, ok, instance_id FROM job_runs")).toEqual([
          { name: "job-runs-prune", trigger: "manual", ok: 1, instance_id: "cli-1" },
        ]);
      } finally {
        await store.close();
      }
    } finally {
      await db.drop();
    }
  });

  test("keys and admin-token create, list, rotate, disable and revoke against the database (audited)", async () => {
    const db = await freshPostgresDatabase();
    const env = { DATABASE_URL: db.url, HERALD_MASTER_KEY: "ef".repeat(32) };
    try {
      const created = await run(["keys", "create", "--partner", "Acme", "--mode", "live", "--scopes", "read,credit", "--json"], env);
      expect(created.code).toBe(0);
      const key = JSON.parse(created.stdout) as { key_id: string; secret: string };
      expect(key.secret).toStartWith("hsk_live_");
      const listed = JSON.parse((await run(["keys", "list", "--partner", "Acme", "--json"], env)).stdout).keys;
      expect(listed.map((k: { key_id: string }) => k.key_id)).toEqual([key.key_id]);
      const rotated = JSON.parse((await run(["keys", "rotate", key.key_id, "--overlap-hours", "2", "--json"], env)).stdout);
      expect(rotated.secret).not.toBe(key.secret);
      expect(rotated.previous_secret_valid_until).not.toBeNull();
      const disabled = JSON.parse((await run(["keys", "disable", key.key_id, "--reason", "test", "--json"], env)).stdout);
      expect(disabled.key).toMatchObject({ key_id: key.key_id, status: "disabled", disabled_reason: "test" });

      const token = JSON.parse((await run(["admin-token", "create", "--name", "ops", "--json"], env)).stdout);
      expect(token.token).toStartWith("hat_");
      const tokens = JSON.parse((await run(["admin-token", "list", "--json"], env)).stdout).tokens;
      expect(tokens).toEqual([expect.objectContaining({ id: token.id, name: "ops", revoked_at: null })]);
      const revoked = JSON.parse((await run(["admin-token", "revoke", "--id", String(token.id), "--json"], env)).stdout);
      expect(revoked.already_revoked).toBe(false);

      const store = new PostgresStore({ url: db.url, poolMax: 1 });
      try {
        const actions = (await store.all<{ action: string }>("SELECT action FROM admin_audit ORDER BY id")).map((r) => r.action);
        expect(actions).toEqual(["partner_key.create", "partner_key.rotate", "partner_key.disable", "admin_token.create", "admin_token.revoke"]);
        // The secret is stored sealed, never in clear.
        expect(JSON.stringify(await store.all("SELECT * FROM partner_keys"))).not.toContain(rotated.secret);
      } finally {
        await store.close();
      }
    } finally {
      await db.drop();
    }
  });
});
