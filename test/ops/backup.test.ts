import { Database } from "bun:sqlite";
import { afterEach, expect, test } from "bun:test";
import { createHash } from "node:crypto";
import { readFileSync } from "node:fs";
import { openTestApp, type TestApp } from "../support/app";
import { createAdminToken, createKey } from "../support/partner";
import { testOn } from "../support/skipped";

let h: TestApp;
afterEach(async () => {
  await h?.close();
});

// VACUUM INTO copies of the SQLite file: on PostgreSQL the routes answer 409 backup_not_on_postgres instead
// (test/ops/backups-postgres.test.ts).
const sqliteOnly = testOn("sqlite", "test/ops/backup.test.ts");

sqliteOnly("POST /admin/backup/run writes a consistent snapshot and reports its path, size and sha256", async () => {
  h = await openTestApp();
  const token = await createAdminToken(h);
  await createKey(h);
  const res = await h.json("/admin/backup/run", { method: "POST", headers: { authorization: `Bearer ${token}` } });
  expect(res.status).toBe(200);
  const b = res.body.backup;
  expect(b.path).toContain(`${h.dir}/backups/herald-2026-01-01T00-00-00-000Z.db`);
  const bytes = readFileSync(b.path);
  expect(b.size_bytes).toBe(bytes.byteLength);
  expect(b.sha256).toBe(createHash("sha256").update(bytes).digest("hex"));
  const copy = new Database(b.path, { readonly: true });
  try {
    expect((copy.query("SELECT count(*) AS n FROM partner_keys").get() as { n: number }).n).toBe(1);
  } finally {
    copy.close();
  }
  const audit = await h.ctx.store.all("SELECT action, target FROM admin_audit WHERE action = 'backup.run'");
  expect(audit).toEqual([{ action: "backup.run", target: b.path }]);
});

test("backups are for operators only", async () => {
  h = await openTestApp();
  expect((await h.json("/admin/backup/run", { method: "POST" })).status).toBe(403);
});
