// Backups off the event loop (issue 71): the snapshot, the integrity check of the copy and its sha256 run in a
// worker with its own bun:sqlite connection, so a real server keeps answering — /healthz and a signed credit —
// while a backup of a database large enough to take seconds runs. One backup at a time (409 backup_in_progress),
// its progress readable at GET /admin/backup/status and in the log, and a backup name only ever given to a
// checked copy: whatever fails, no file is left under a backup's name nor under its temp name.
import { afterEach, expect, setDefaultTimeout } from "bun:test";
import { createHash } from "node:crypto";
import { existsSync, readdirSync, readFileSync, symlinkSync } from "node:fs";
import { join } from "node:path";
import { type BackupResult, runBackup } from "../../../src/ops/backups/backup";
import { AppError } from "../../../src/http/errors/errors";
import { createLogger } from "../../../src/log";
import { openTestApp, type TestApp } from "../../support/app";
import { createAdminToken, createKey, signedInit } from "../../support/partner";
import { textById } from "../../support/console";
import { testOn } from "../../support/skipped";
import { body, createUser } from "../../salutes/support";

setDefaultTimeout(120_000);

const FILE = "test/ops/backups/off-loop.test.ts";
// VACUUM INTO copies of the SQLite file: on PostgreSQL the routes answer 409 backup_not_on_postgres instead.
const sqliteOnly = testOn("sqlite", FILE);
const postgresOnly = testOn("postgres", FILE);

/**
 * Every request on a connection of its own. The server's idle timeout is 2 s (below), so a pooled keep-alive
 * connection left idle while the test hashes a 200 MB file may be closed by the server just as the client reuses
 * it: ECONNRESET (seen once in CI). A fresh connection per request takes that race away.
 */
const fetchOnce = (url: string, init: RequestInit = {}): Promise<Response> =>
  globalThis.fetch(url, { ...init, keepalive: false, headers: { ...(init.headers as Record<string, string> | undefined), connection: "close" } });
/**
 * A read (GET) cut by that 2 s timeout on a loaded machine (ECONNRESET before its answer, seen in CI) is sent once
 * more: it changes nothing. Writes are sent once.
 */
const fetch = async (url: string, init: RequestInit = {}): Promise<Response> => {
  try {
    return await fetchOnce(url, init);
  } catch (err) {
    if ((init.method ?? "GET") !== "GET" || (err as { code?: string }).code !== "ECONNRESET") throw err;
    return fetchOnce(url, init);
  }
};

let h: TestApp | undefined;
let server: { stop(closeActive?: boolean): Promise<unknown> } | undefined;
afterEach(async () => {
  await server?.stop(true);
  server = undefined;
  await h?.close();
  h = undefined;
});

/**
 * ~200 MB of rows with two indexes on random values. Measured here (2 cores): built in ~2 s; its backup takes
 * ~3.5 s, most of it the integrity check of the copy (each index entry looked up in random order). The indexes are
 * made after the rows: a sorted build, far faster than a million random inserts.
 */
async function fillDatabase(app: TestApp, rows = 1_000_000): Promise<void> {
  await app.ctx.store.tx(async (t) => {
    await t.run("CREATE TABLE backup_filler (id INTEGER PRIMARY KEY, a TEXT NOT NULL, b INTEGER NOT NULL, c TEXT NOT NULL)");
    await t.run(
      `WITH RECURSIVE s(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM s WHERE i < ?)
       INSERT INTO backup_filler (a, b, c) SELECT hex(randomblob(16)), random(), hex(randomblob(24)) FROM s`,
      [rows],
    );
    await t.run("CREATE INDEX backup_filler_a ON backup_filler (a)");
    await t.run("CREATE INDEX backup_filler_bc ON backup_filler (b, c)");
  });
}

async function sha256Of(path: string): Promise<string> {
  const hash = createHash("sha256");
  for await (const chunk of Bun.file(path).stream()) hash.update(chunk);
  return hash.digest("hex");
}

/** The files the backups folder holds besides finished backups and their manifests: temp copies, anything else. */
const strays = (dir: string) => (existsSync(dir) ? readdirSync(dir).filter((n) => !/^herald-[0-9TZ-]+\.db(\.json)?$/.test(n)) : []);
const backupFiles = (dir: string) => (existsSync(dir) ? readdirSync(dir).filter((n) => /^herald-[0-9TZ-]+\.db$/.test(n)) : []);

interface Status {
  running: { id: string; phase: string; percent: number; started_at: string } | null;
  last: { id: string; outcome: "ok" | "failed"; name: string | null; error: string | null; duration_ms: number } | null;
}

/**
 * A real server on a loopback port over the test app, with an admin token. Its idle timeout is 2 s (Bun's default
 * is 10 s; the large backup below takes ~3.5 s): a request waiting for a backup longer than that must not be cut off
 * (the route lifts it). 1 s cut a request still on its way to the route on a loaded CI machine.
 */
async function serving(app: TestApp) {
  const listening = app.app.listen({ hostname: "127.0.0.1", port: 0, reusePort: false, idleTimeout: 2 });
  server = { stop: (closeActive) => listening.stop(closeActive) };
  const base = `http://127.0.0.1:${listening.server!.port}`;
  const auth = { authorization: `Bearer ${await createAdminToken(app)}` };
  const status = async (): Promise<Status> => {
    const res = await fetch(`${base}/admin/backup/status`, { headers: auth });
    expect(res.status).toBe(200);
    return (await res.json()) as Status;
  };
  /** Polls the status until nothing runs: the backup's real work, not a clock, decides when it ends. */
  const ended = async (): Promise<Status> => {
    for (;;) {
      const s = await status();
      if (!s.running) return s;
      await Bun.sleep(100);
    }
  };
  return { base, auth, status, ended };
}

sqliteOnly("while a large backup runs in its worker, /healthz and a signed credit answer, a second run is 409 backup_in_progress", async () => {
  const lines: string[] = [];
  h = await openTestApp({ log: createLogger("info", (line) => lines.push(line)) });
  const app = h;
  const key = await createKey(app);
  const user = await createUser(app);
  await fillDatabase(app);
  // Large enough that the backup takes seconds (measured in fillDatabase), not a size a timer could race.
  expect(Bun.file(join(app.dir, "herald.db")).size).toBeGreaterThan(150 * 1024 * 1024);
  const { base, auth, status, ended } = await serving(app);
  const dir = join(app.dir, "backups");

  const started = await fetch(`${base}/admin/backup/run?wait=false`, { method: "POST", headers: auth });
  expect(started.status).toBe(202);
  const accepted = (await started.json()) as { success: true; backup_id: string; status_url: string };
  expect(accepted.backup_id).toMatch(/^bkp_[0-9a-f]{16}$/);
  expect(accepted).toEqual({ success: true, backup_id: accepted.backup_id, status_url: "/admin/backup/status" });

  const health = await fetch(`${base}/healthz`);
  expect(health.status).toBe(200);
  const credit = await fetch(`${base}/api/salutes/credit`, signedInit(app, key, "POST", "/api/salutes/credit", { body: body(user, 5) }));
  expect(credit.status).toBe(200);
  expect(((await credit.json()) as { balance: number }).balance).toBe(5);
  const second = await fetch(`${base}/admin/backup/run`, { method: "POST", headers: auth });
  expect(second.status).toBe(409);
  const refusal = (await second.json()) as { error: string; details: Record<string, unknown> };
  expect(refusal.error).toBe("backup_in_progress");
  expect(refusal.details).toMatchObject({ backup_id: accepted.backup_id, status_url: "/admin/backup/status" });
  // They answered while the backup was still running: the status says so after them (not a timing bound).
  const during = await status();
  expect(during.running).toMatchObject({ id: accepted.backup_id, started_at: "2026-01-01T00:00:00.000Z" });
  expect(["snapshot", "integrity_check", "checksum"]).toContain(during.running!.phase);
  // Its job_runs row was written as it began (trigger manual); unfinished while it runs. (A loaded machine may end
  // the backup between the status above and this read: then the row has ended too, with ok.)
  const begun = await app.ctx.store.all<{ trigger: string; finished_at: string | null; ok: number | null }>(
    "SELECT trigger, finished_at, ok FROM job_runs WHERE name = 'backup'",
  );
  expect(begun).toHaveLength(1);
  expect(begun[0]!.trigger).toBe("manual");
  expect(begun[0]!.finished_at === null ? begun[0]!.ok : 1).toBe(begun[0]!.finished_at === null ? null : begun[0]!.ok);
  // Only the temp copy exists meanwhile: nothing under a backup's name before it is checked.
  expect(backupFiles(dir)).toEqual([]);
  expect(readdirSync(dir).filter((n) => !n.startsWith(".herald-2026-01-01T00-00-00-000Z.db.partial"))).toEqual([]);

  // The console's backups page shows it too.
  const page = await (await fetch(`${base}/admin/console/backups`, { headers: auth })).text();
  expect(textById(page, "running-id")).toBe(accepted.backup_id);
  expect(textById(page, "running-phase")).toMatch(/^(copying|checking|hashing) /);

  const after = await ended();
  expect(after.last).toMatchObject({ id: accepted.backup_id, outcome: "ok", name: "herald-2026-01-01T00-00-00-000Z.db", error: null });
  const file = join(dir, after.last!.name!);
  const manifest = JSON.parse(readFileSync(`${file}.json`, "utf8"));
  expect(manifest).toEqual({ sha256: await sha256Of(file), size_bytes: Bun.file(file).size, created_at: "2026-01-01T00:00:00.000Z", integrity: "ok" });
  expect(strays(dir)).toEqual([]);
  const audit = await app.ctx.store.all<{ target: string; details: string }>("SELECT target, details FROM admin_audit WHERE action = 'backup.run'");
  expect(audit.map((a) => [a.target, JSON.parse(a.details).backup_id])).toEqual([[file, accepted.backup_id]]);
  const row = await app.ctx.store.get<{ ok: number; error: string | null; finished_at: string | null }>(
    "SELECT ok, error, finished_at FROM job_runs WHERE name = 'backup' ORDER BY id LIMIT 1",
  );
  expect(row).toMatchObject({ ok: 1, error: null });
  expect(row!.finished_at).not.toBeNull();

  // The log followed it: each phase from 0 to 100, a line per 10 % at most.
  const progress = lines.map((l) => JSON.parse(l)).filter((l) => l.msg === "backup progress");
  for (const phase of ["snapshot", "integrity_check", "checksum"]) {
    const percents = progress.filter((l) => l.phase === phase && l.id === accepted.backup_id).map((l) => l.percent);
    expect({ phase, first: percents[0], last: percents.at(-1) }).toEqual({ phase, first: 0, last: 100 });
    expect(new Set(percents).size).toBe(percents.length);
    for (const p of percents) expect(p % 10).toBe(0);
  }

  // Waiting for the answer (wait=true, the default) frees the loop just as well: the pending request is answered
  // with the backup once it is made — after the server's 2 s idle timeout — and /healthz answers meanwhile.
  app.clock.advanceSeconds(60);
  const pending = fetch(`${base}/admin/backup/run`, { method: "POST", headers: auth });
  // Its failure, if any, is this test's at `await pending` below, not an unhandled rejection while the status is polled.
  pending.catch(() => {});
  let running = await status();
  while (!running.running) running = await status();
  expect((await fetch(`${base}/healthz`)).status).toBe(200);
  expect((await status()).running?.id).toBe(running.running!.id);
  const waited = await pending;
  expect(waited.status).toBe(200);
  const made = (await waited.json()) as BackupResult;
  expect(made.backup).toMatchObject({ name: "herald-2026-01-01T00-01-00-000Z.db", integrity: "ok", sha256: await sha256Of(made.backup.path) });
  expect(made.pruned).toEqual([]);
  expect((await status()).last).toMatchObject({ id: running.running!.id, outcome: "ok", name: made.backup.name });
  expect(textById(await (await fetch(`${base}/admin/console/backups`, { headers: auth })).text(), "last-run")).toContain(`made ${made.backup.name}`);
  expect(backupFiles(dir).sort()).toEqual(["herald-2026-01-01T00-00-00-000Z.db", "herald-2026-01-01T00-01-00-000Z.db"]);
  expect(strays(dir)).toEqual([]);
});

sqliteOnly(
  "a worker that dies or a copy that fails its check leaves no file under a backup name nor a temp copy; 503 or 500, never a made backup",
  async () => {
    h = await openTestApp();
    const app = h;
    const actor = { kind: "cli", user: "test" } as const;
    const dir = join(app.dir, "backups");
    const cases = [
      { fault: { crashIn: "integrity_check" as const }, code: "service_unavailable", status: 503 },
      { fault: { crashIn: "checksum" as const }, code: "service_unavailable", status: 503 },
      { fault: { integrity: "*** in database main ***\nPage 7: btree page is never used" }, code: "server_error", status: 500 },
    ];
    for (const c of cases) {
      const error = await runBackup(app.ctx, { actor, testFault: c.fault }).then(
        () => null,
        (e: unknown) => e,
      );
      expect(error).toBeInstanceOf(AppError);
      expect({ code: (error as AppError).code as string, status: (error as AppError).status }).toEqual({ code: c.code, status: c.status });
      expect(readdirSync(dir)).toEqual([]);
      app.clock.advanceSeconds(1);
    }
    // Each failure's job_runs row ended failed, with the public message.
    const rows = await app.ctx.store.all<{ ok: number; error: string }>("SELECT ok, error FROM job_runs WHERE name = 'backup' ORDER BY id");
    expect(rows.map((r) => r.ok)).toEqual([0, 0, 0]);
    expect(rows.every((r) => r.error.length > 0)).toBe(true);
    // A failure is no run of record: no audit row, and the next backup is made as usual.
    expect(await app.ctx.store.get("SELECT count(*) AS n FROM admin_audit WHERE action LIKE 'backup%'")).toEqual({ n: 0 });
    const ok = await runBackup(app.ctx, { actor });
    expect(backupFiles(dir)).toEqual([ok.backup.name]);
    expect(strays(dir)).toEqual([]);
  },
);

sqliteOnly("wait=false on a folder the disk refuses: 202, then the status says it failed and why; wait must be a boolean", async () => {
  h = await openTestApp();
  const app = h;
  // The backups folder replaced by a place nobody can create files in (/proc): VACUUM INTO fails in the worker.
  symlinkSync("/proc/self/fdinfo", join(app.dir, "backups"));
  const { base, auth, ended } = await serving(app);
  const started = await fetch(`${base}/admin/backup/run?wait=false`, { method: "POST", headers: auth });
  expect(started.status).toBe(202);
  const { backup_id } = (await started.json()) as { backup_id: string };
  const after = await ended();
  expect(after.last).toMatchObject({ id: backup_id, outcome: "failed", name: null, error: "The backup could not be written; see the server log" });
  const waited = await fetch(`${base}/admin/backup/run?wait=true`, { method: "POST", headers: auth });
  expect(waited.status).toBe(503);
  expect(((await waited.json()) as { error: string }).error).toBe("service_unavailable");

  const bad = await fetch(`${base}/admin/backup/run?wait=maybe`, { method: "POST", headers: auth });
  expect(bad.status).toBe(400);
  expect(((await bad.json()) as { error: string }).error).toBe("invalid_query");
  expect((await fetch(`${base}/admin/backup/status`)).status).toBe(403);
  expect((await fetch(`${base}/admin/backup/run?wait=false`, { method: "POST" })).status).toBe(403);
});

postgresOnly("on PostgreSQL the status and a run with wait=false answer 409 backup_not_on_postgres", async () => {
  h = await openTestApp();
  const auth = { authorization: `Bearer ${await createAdminToken(h)}` };
  for (const [path, method] of [
    ["/admin/backup/status", "GET"],
    ["/admin/backup/run?wait=false", "POST"],
  ] as const) {
    const r = await h.json(path, { method, headers: auth });
    expect({ path, status: r.status, error: r.body.error }).toEqual({ path, status: 409, error: "backup_not_on_postgres" });
  }
});
