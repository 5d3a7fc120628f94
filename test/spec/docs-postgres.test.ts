// Docs audit: the parts of docs/postgres.md that run on one machine — /readyz, the backup routes' refusal and the
// PostgreSQL-only series — against the real app on the engine HERALD_TEST_ENGINE names.
import { afterEach, describe, expect, test } from "bun:test";
import { openTestApp, type TestApp } from "../support/app";
import { createAdminToken } from "../support/partner";

let h: TestApp;
afterEach(async () => {
  await h?.close();
  h = undefined as unknown as TestApp;
});

describe("docs/postgres.md", () => {
  // docs/postgres.md:42-43 — /readyz answers database.engine and its checks
  test("/readyz names the engine", async () => {
    h = await openTestApp();
    const r = await h.json("/readyz");
    expect(r.status).toBe(200);
    expect(JSON.stringify(r.body)).toContain(h.ctx.store.dialect === "sqlite" ? "sqlite" : "postgres");
  });

  // docs/postgres.md:685-689 — on PostgreSQL every backup route answers 409 backup_not_on_postgres; /metrics has no backup age
  test("backup routes on PostgreSQL", async () => {
    h = await openTestApp({ env: { METRICS_PUBLIC: "1" } });
    if (h.ctx.store.dialect !== "postgres") return;
    const auth = { authorization: `Bearer ${await createAdminToken(h)}` };
    for (const [m, p] of [
      ["POST", "/admin/backup/run"],
      ["GET", "/admin/backup/status"],
      ["GET", "/admin/backups"],
      ["GET", "/admin/backups/herald-2026-01-01T00-00-00-000Z.db"],
    ] as const) {
      const r = await h.json(p, { method: m, headers: auth });
      expect([p, r.status, r.body.error]).toEqual([p, 409, "backup_not_on_postgres"]);
    }
    const text = await (await h.request("/metrics")).text();
    expect(text).not.toContain("\nherald_backup_age_seconds ");
    // docs/http-conventions.md:349-352 — the PostgreSQL-only series are there
    for (const s of [
      "herald_db_round_trips_total",
      "herald_db_statements_total",
      "herald_db_batches_together_total",
      "herald_db_batches_redone_total",
      "herald_db_pool_max",
      "herald_db_pool_busy",
    ])
      expect([s, text.includes(`\n${s} `)]).toEqual([s, true]);
    expect(text).toMatch(/\nherald_db_pool_max 4\n/);
  });
});
