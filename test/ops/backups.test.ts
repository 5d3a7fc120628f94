import { afterEach, expect, test } from "bun:test";
import { createHash } from "node:crypto";
import { copyFileSync, createReadStream, existsSync, readdirSync, readFileSync, symlinkSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { ConfigError, loadConfig } from "../../src/config";
import { openTestApp, type TestApp } from "../support/app";
import { createAdminToken } from "../support/partner";
import { testOn } from "../support/skipped";

let h: TestApp;
afterEach(async () => {
  await h?.close();
});

// Herald's own backups of the SQLite file: on PostgreSQL every route here answers 409 backup_not_on_postgres after
// its authentication and validation (test/ops/backups-postgres.test.ts).
const sqliteOnly = testOn("sqlite", "test/ops/backups.test.ts");

/** sha256 of a file read as a stream, independently of the code under test. */
async function streamedSha256(path: string): Promise<string> {
  const hash = createHash("sha256");
  for await (const chunk of createReadStream(path, { highWaterMark: 64 * 1024 })) hash.update(chunk as Buffer);
  return hash.digest("hex");
}

async function setup(env: Record<string, string> = {}) {
  h = await openTestApp({ env });
  const auth = { authorization: `Bearer ${await createAdminToken(h)}` };
  const run = async () => {
    const res = await h.json("/admin/backup/run", { method: "POST", headers: auth });
    expect(res.status).toBe(200);
    h.clock.advanceSeconds(60);
    return res.body as {
      backup: { name: string; path: string; sha256: string; size_bytes: number; created_at: string };
      pruned: Array<{ name: string; size_bytes: number; created_at: string }>;
    };
  };
  return { auth, run, backupsDir: join(h.dir, "backups") };
}

sqliteOnly("two runs are listed newest first with their streamed sha256, size and recorded integrity", async () => {
  const { auth, run, backupsDir } = await setup();
  const first = await run();
  const second = await run();
  const res = await h.json("/admin/backups", { headers: auth });
  expect(res.status).toBe(200);
  expect(res.body).toMatchObject({ success: true, count: 2, total: 2, keep: 7, query: { limit: 50, offset: 0 } });
  expect(res.body.backups.map((b: { name: string }) => b.name)).toEqual([second.backup.name, first.backup.name]);
  for (const b of res.body.backups) {
    const path = join(backupsDir, b.name);
    expect(b.sha256).toBe(await streamedSha256(path));
    expect(b.size_bytes).toBe(readFileSync(path).byteLength);
    expect(b.size).toBe(b.size_bytes); // the name the operators' list was asked with
    expect(b.integrity).toBe("ok");
    expect(b.path).toBeUndefined(); // the list names files; it does not reveal the server's layout
    // The manifest beside the file says the same.
    expect(JSON.parse(readFileSync(`${path}.json`, "utf8"))).toEqual({ sha256: b.sha256, size_bytes: b.size_bytes, created_at: b.created_at, integrity: "ok" });
  }
  expect(res.body.backups[0].created_at).toBe("2026-01-01T00:01:00.000Z");

  const page1 = await h.json("/admin/backups?limit=1", { headers: auth });
  expect(page1.body).toMatchObject({ count: 1, total: 2, pagination: { has_more: true, next_offset: 1, next_cursor: null } });
  expect(page1.body.backups[0].name).toBe(second.backup.name);
  const page2 = await h.json("/admin/backups?limit=1&offset=1", { headers: auth });
  expect(page2.body).toMatchObject({ count: 1, pagination: { has_more: false, next_offset: null } });
  expect(page2.body.backups[0].name).toBe(first.backup.name);

  for (const q of ["limit=0", "limit=201", "limit=1.5", "offset=-1", "limit=1e308"]) {
    const bad = await h.json(`/admin/backups?${q}`, { headers: auth });
    expect(bad.status).toBe(400);
    expect(bad.body.error).toBe("invalid_query");
  }
});

sqliteOnly("no backups yet: an empty list, not an error", async () => {
  const { auth } = await setup();
  const res = await h.json("/admin/backups", { headers: auth });
  expect(res.status).toBe(200);
  expect(res.body).toMatchObject({ count: 0, total: 0, backups: [] });
});

sqliteOnly("a backup copied in without a manifest is listed as integrity unknown, hashed once and given a manifest", async () => {
  const { auth, run, backupsDir } = await setup();
  const made = await run();
  const copy = join(backupsDir, "herald-2025-06-01T12-00-00-000Z.db");
  copyFileSync(made.backup.path, copy);
  writeFileSync(join(backupsDir, "notes.txt"), "not a backup");
  const res = await h.json("/admin/backups", { headers: auth });
  expect(res.body.total).toBe(2);
  const listed = res.body.backups[1];
  expect(listed).toEqual({
    name: "herald-2025-06-01T12-00-00-000Z.db",
    size: made.backup.size_bytes,
    size_bytes: made.backup.size_bytes,
    sha256: await streamedSha256(copy),
    created_at: "2025-06-01T12:00:00.000Z",
    integrity: "unknown",
  });
  expect(JSON.parse(readFileSync(`${copy}.json`, "utf8"))).toMatchObject({ sha256: listed.sha256, integrity: "unknown" });
});

sqliteOnly("GET /admin/backups/{name} sends the file with its length, type, disposition and digests", async () => {
  const { auth, run } = await setup();
  const { backup } = await run();
  const res = await h.request(`/admin/backups/${backup.name}`, { headers: auth });
  expect(res.status).toBe(200);
  const bytes = Buffer.from(await res.arrayBuffer());
  const sha = createHash("sha256").update(bytes).digest();
  expect(res.headers.get("content-type")).toBe("application/vnd.sqlite3");
  expect(res.headers.get("content-length")).toBe(String(backup.size_bytes));
  expect(res.headers.get("content-disposition")).toBe(`attachment; filename="${backup.name}"`);
  expect(res.headers.get("x-backup-sha256")).toBe(sha.toString("hex"));
  expect(res.headers.get("x-backup-sha256")).toBe(backup.sha256);
  expect(res.headers.get("digest")).toBe(`sha-256=${sha.toString("base64")}`);
  expect(res.headers.get("repr-digest")).toBe(`sha-256=:${sha.toString("base64")}:`);
  expect(bytes.byteLength).toBe(backup.size_bytes);

  const head = await h.request(`/admin/backups/${backup.name}`, { method: "HEAD", headers: auth });
  expect(head.status).toBe(200);
  expect(head.headers.get("x-backup-sha256")).toBe(backup.sha256);
  expect(head.headers.get("content-length")).toBe(String(backup.size_bytes));
});

sqliteOnly("path traversal and names that are not backups are refused; symlinks are never followed", async () => {
  const { auth, run, backupsDir } = await setup();
  await run();
  // A link under a valid backup name, pointing at the live database outside the folder.
  const planted = "herald-2020-01-01T00-00-00-000Z.db";
  symlinkSync(join(h.dir, "herald.db"), join(backupsDir, planted));
  const cases: Array<[string, number, string]> = [
    ["..%2Fherald.db", 400, "invalid_query"],
    ["..%2F..%2F..%2Fetc%2Fpasswd", 400, "invalid_query"],
    ["%2Fetc%2Fpasswd", 400, "invalid_query"],
    ["%2e%2e%2Fherald.db", 400, "invalid_query"],
    ["..%252Fherald.db", 400, "invalid_query"],
    ["herald-..db", 400, "invalid_query"],
    ["herald.db", 400, "invalid_query"],
    ["herald-2026-01-01T00-00-00-000Z.db.json", 400, "invalid_query"],
    ["herald-2026-01-01T00-00-00-000Z.db%00", 400, "invalid_query"],
    ["herald-2026-01-01T00-00-00-000Z.db%2F..%2F..%2Fherald.db", 400, "invalid_query"],
    [planted, 404, "not_found"],
    ["herald-2030-01-01T00-00-00-000Z.db", 404, "not_found"],
  ];
  for (const [name, status, code] of cases) {
    const res = await h.request(`/admin/backups/${name}`, { headers: auth });
    const text = await res.text();
    expect({ name, status: res.status }).toEqual({ name, status });
    expect(JSON.parse(text)).toMatchObject({ success: false, error: code });
    expect(text).not.toContain("SQLite format 3");
  }
  // Normalised by the URL parser to /admin/, which only points at the console: no file, no backup.
  const dots = await h.request("/admin/backups/%2e%2e", { headers: auth });
  expect({ status: dots.status, location: dots.headers.get("location") }).toEqual({ status: 303, location: "/admin/console" });
  expect(await dots.text()).not.toContain("SQLite format 3");
  const list = await h.json("/admin/backups", { headers: auth });
  expect(list.body.backups.map((b: { name: string }) => b.name)).not.toContain(planted);
});

sqliteOnly("BACKUP_KEEP=2: each run deletes the oldest beyond two with their manifests, audited, and says which", async () => {
  const { auth, run, backupsDir } = await setup({ BACKUP_KEEP: "2" });
  const first = await run();
  const second = await run();
  expect(second.pruned).toEqual([]);
  const third = await run();
  expect(third.pruned).toEqual([{ name: first.backup.name, size_bytes: first.backup.size_bytes, created_at: first.backup.created_at }]);
  expect(readdirSync(backupsDir).sort()).toEqual([second.backup.name, `${second.backup.name}.json`, third.backup.name, `${third.backup.name}.json`].sort());
  const fourth = await run();
  expect(fourth.pruned.map((p) => p.name)).toEqual([second.backup.name]);
  expect(existsSync(first.backup.path)).toBe(false);

  const audit = await h.ctx.store.all<{ actor: string; target: string; details: string; request_id: string | null }>(
    "SELECT actor, target, details, request_id FROM admin_audit WHERE action = 'backup.pruned' ORDER BY id",
  );
  expect(audit.map((a) => a.target)).toEqual([first.backup.path, second.backup.path]);
  expect(audit[0]!.actor).toStartWith("admin:test-operator");
  expect(audit[0]!.request_id).toStartWith("req_");
  expect(JSON.parse(audit[0]!.details)).toMatchObject({ name: first.backup.name, keep: 2 });
  expect((await h.ctx.store.get<{ n: number }>("SELECT count(*) AS n FROM admin_audit WHERE action = 'backup.run'"))!.n).toBe(4);

  const list = await h.json("/admin/backups", { headers: auth });
  expect(list.body).toMatchObject({ total: 2, keep: 2 });
});

test("BACKUP_KEEP is an integer from 1 to 1000", () => {
  expect(loadConfig({}).backupKeep).toBe(7);
  expect(loadConfig({ BACKUP_KEEP: "1000" }).backupKeep).toBe(1000);
  for (const bad of ["0", "1001", "two", "1.5"]) expect(() => loadConfig({ BACKUP_KEEP: bad })).toThrow(ConfigError);
});

sqliteOnly("listing and downloading backups are for operators only", async () => {
  const { run } = await setup();
  const { backup } = await run();
  expect((await h.json("/admin/backups")).status).toBe(403);
  const res = await h.request(`/admin/backups/${backup.name}`);
  expect(res.status).toBe(403);
  expect(((await res.json()) as { error: string }).error).toBe("forbidden");
  expect((await h.json("/admin/backups", { headers: { authorization: "Bearer not-a-real-token-0123456789" } })).status).toBe(403);
});
