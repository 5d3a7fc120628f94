// Backups on PostgreSQL: Herald's own (VACUUM INTO copies of the SQLite file, Litestream) do not apply there, and
// every way in says so — 409 backup_not_on_postgres from the API (after authentication and validation, as before),
// the console page pointing at pg_dump / pg_basebackup, `herald backup` and `herald restore` exiting 2 with the same
// hint — and nothing is written to the folder. The HTTP part runs in the PostgreSQL run (HERALD_TEST_ENGINE=postgres);
// the CLI part needs no server (the refusal comes before any connection) and runs on both.
import { afterEach, describe, expect, setDefaultTimeout, test } from "bun:test";
import { existsSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { openTestApp, type TestApp } from "../support/app";
import { FakeClock } from "../support/clock";
import { csrfOf, formPost, pageAs, signedInCookie } from "../support/console";
import { createAdminToken } from "../support/partner";
import { spawnHerald } from "../support/process";
import { describeOn } from "../support/skipped";

setDefaultTimeout(60_000);

let h: TestApp | undefined;
afterEach(async () => {
  await h?.close();
  h = undefined;
});

const HINT = /pg_dump.*pg_basebackup.*docs\/postgres\.md/;

describeOn("postgres", "test/ops/backups-postgres.test.ts")("backups over HTTP on PostgreSQL", () => {
  test("run, list and download answer 409 backup_not_on_postgres with the way to back up; 403 and 400 come first", async () => {
    h = await openTestApp({ clock: new FakeClock("2026-04-01T12:00:00.000Z") });
    const auth = { authorization: `Bearer ${await createAdminToken(h, "ops")}` };
    for (const [path, method] of [
      ["/admin/backup/run", "POST"],
      ["/admin/backups", "GET"],
      ["/admin/backups?limit=1&offset=0", "GET"],
      ["/admin/backups/herald-2026-01-01T00-00-00-000Z.db", "GET"],
    ] as const) {
      const r = await h.json(path, { method, headers: auth });
      expect({ path, status: r.status, error: r.body.error }).toEqual({ path, status: 409, error: "backup_not_on_postgres" });
      expect(r.body.message).toMatch(HINT);
    }
    // Credentials and validation are checked before the engine: the answers a client saw before stay the same.
    expect((await h.json("/admin/backup/run", { method: "POST" })).status).toBe(403);
    expect((await h.json("/admin/backups")).status).toBe(403);
    expect((await h.json("/admin/backups?limit=0", { headers: auth })).status).toBe(400);
    expect((await h.json("/admin/backups/..%2Fherald.db", { headers: auth })).status).toBe(400);
    // Nothing was made on disk, nothing audited.
    expect(existsSync(join(h.dir, "backups"))).toBe(false);
    expect(await h.ctx.store.get("SELECT count(*) AS n FROM admin_audit WHERE action LIKE 'backup%'")).toEqual({ n: 0 });
    // The catalog explains the code.
    const catalog = await h.json("/developers/api-errors.json");
    expect(catalog.body.by_code.backup_not_on_postgres).toMatchObject({ http_status: 409, endpoint_groups: ["admin"], status_rationale: null });
  });

  test("the console's backups page says where backups are; its form answers 409 as the page; /metrics has no backup age", async () => {
    h = await openTestApp({ clock: new FakeClock("2026-04-01T12:00:00.000Z") });
    const token = await createAdminToken(h, "ops");
    const cookie = await signedInCookie(h, token);
    const page = await pageAs(h, "/admin/console/backups", cookie);
    expect(page.status).toBe(200);
    expect(page.html).toMatch(/id="database-engine">PostgreSQL \d/);
    expect(page.html).toMatch(/id="backups-not-applicable">[^<]*<strong[^>]*>[^<]*<\/strong>\. .*pg_dump/);
    expect(page.html).not.toContain('id="run-form"');
    const csrf = csrfOf((await pageAs(h, "/admin/ops/readiness", cookie)).html);
    const run = await formPost(h, "/admin/console/backups/run", cookie, { csrf_token: csrf });
    expect(run.status).toBe(409);
    expect(await run.text()).toContain('id="backups-not-applicable"');
    const metrics = await (await h.request("/metrics", { headers: { authorization: `Bearer ${token}` } })).text();
    expect(metrics).not.toContain("herald_backup_age_seconds");
  });

  test("the preflight guards name the engine, and the SQLite file's variables say they do not apply", async () => {
    h = await openTestApp();
    const auth = { authorization: `Bearer ${await createAdminToken(h, "ops")}` };
    const g = await h.json("/admin/ops/preflight-guards.json?include_env_rows=1", { headers: auth });
    const byField = Object.fromEntries(
      (g.body.guards as Array<{ section: string; field: string; value: string }>).map((r) => [`${r.section}.${r.field}`, r.value]),
    );
    expect(byField["artifact.database_engine"]).toBe("postgres");
    expect(byField["artifact.migration_last_tag"]).toMatch(/^\d{4}_/);
    expect(Number(byField["artifact.migrations_applied"])).toBe(Number(byField["artifact.migrations_total"]));
    expect(byField["env.HERALD_DB_PATH"]).toBe("n/a on PostgreSQL (the SQLite file and its backups are not used)");
    expect(byField["env.BACKUP_KEEP"]).toBe("n/a on PostgreSQL (the SQLite file and its backups are not used)");
  });
});

describeOn("sqlite", "test/ops/backups-postgres.test.ts")("the engine on SQLite", () => {
  test("the preflight guards name it, and its variables keep their values", async () => {
    h = await openTestApp();
    const auth = { authorization: `Bearer ${await createAdminToken(h, "ops")}` };
    const g = await h.json("/admin/ops/preflight-guards.json?include_env_rows=1", { headers: auth });
    const byField = Object.fromEntries(
      (g.body.guards as Array<{ section: string; field: string; value: string }>).map((r) => [`${r.section}.${r.field}`, r.value]),
    );
    expect(byField["artifact.database_engine"]).toBe("sqlite");
    expect(byField["env.BACKUP_KEEP"]).toBe("7");
  });
});

describe("herald backup and herald restore with DATABASE_URL", () => {
  const dir = mkdtempSync(join(tmpdir(), "herald-backup-pg-"));
  // Never contacted: both commands refuse before opening anything.
  const env = {
    NODE_ENV: "test",
    LOG_LEVEL: "warn",

    DATABASE_URL: "postgres://herald@127.0.0.1:1/none",
    HERALD_DB_PATH: join(dir, "herald.db"),
  };
  const run = async (args: string[]) => {
    const p = spawnHerald(args, env);
    const [stdout, stderr, code] = await Promise.all([new Response(p.stdout).text(), new Response(p.stderr).text(), p.exited]);
    return { stdout, stderr, code };
  };

  test("both exit 2 with the way to back up and restore PostgreSQL, and touch nothing", async () => {
    const file = join(dir, "herald-2026-01-01T00-00-00-000Z.db");
    writeFileSync(file, "not used");
    try {
      for (const args of [["backup"], ["restore", file]]) {
        const r = await run(args);
        expect({ args, code: r.code }).toEqual({ args, code: 2 });
        expect(r.stderr).toContain("DATABASE_URL points at PostgreSQL");
        expect(r.stderr).toMatch(HINT);
        expect(r.stdout).toBe("");
      }
      expect(existsSync(join(dir, "herald.db"))).toBe(false);
      expect(existsSync(join(dir, "backups"))).toBe(false);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
