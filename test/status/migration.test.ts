// The status migration that adds operator incidents (status_incidents rebuilt so an incident may have no
// snapshot, plus updates, subscribers and their deliveries) on a database written before it: existing
// incidents keep every field and become `automatic`; the open one is still closed by the next ok snapshot.
import { afterEach, expect } from "bun:test";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { openDatabase } from "../../src/db/client";
import { CHECK_NAMES } from "../../src/status/checks/engine";
import { storeSnapshot } from "../../src/status/snapshots";
import { openTestApp, type TestApp } from "../support/app";
import { FakeClock } from "../support/clock";
import { migrateFirst, sqliteMigrations } from "../support/migrations";
import { createAdminToken } from "../support/partner";
import { operator } from "./support";
import { testOn } from "../support/skipped";

const dirs: string[] = [];
let h: TestApp | undefined;
afterEach(async () => {
  await h?.close();
  h = undefined;
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
});

// The upgrade of a SQLite file written by an older release: PostgreSQL databases begin at the port's own first
// migration (drizzle/postgres/), which has every table already, so there is nothing of this kind to upgrade there.
testOn("sqlite", "test/status/migration.test.ts")(
  "existing incidents survive the rebuild as automatic ones; operator incidents and the automatic logic work on the upgraded file",
  async () => {
    const dir = mkdtempSync(join(tmpdir(), "herald-status-mig-"));
    dirs.push(dir);
    const dbPath = join(dir, "herald.db");
    const ours = sqliteMigrations().findIndex((m) => m.sql.some((s) => s.includes("CREATE TABLE `status_incident_updates`")));
    expect(ours).toBeGreaterThan(0);
    const old = openDatabase(dbPath);
    migrateFirst(old, ours);
    const row = old.sqlite.query(
      "INSERT INTO status_incidents (started_at, ended_at, severity, current_severity, checks, summary, opened_snapshot_id, closed_snapshot_id, updated_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)",
    );
    row.run(
      "2026-01-01T00:00:00.000Z",
      "2026-01-01T00:30:00.000Z",
      "bad",
      "warn",
      '{"database":"bad"}',
      '{"database":"migrations behind"}',
      3,
      9,
      "2026-01-01T00:30:00.000Z",
    );
    row.run("2026-01-01T01:00:00.000Z", null, "warn", "warn", '{"jobs":"warn"}', '{"jobs":"stale"}', 12, null, "2026-01-01T01:00:00.000Z");
    old.close();

    h = await openTestApp({ env: { HERALD_DB_PATH: dbPath }, clock: new FakeClock("2026-01-01T02:00:00.000Z") });
    expect(
      await h.ctx.store.all(
        "SELECT id, source, started_at, ended_at, severity, current_severity, checks, summary, opened_snapshot_id, closed_snapshot_id, title, state FROM status_incidents ORDER BY id",
      ),
    ).toEqual([
      {
        id: 1,
        source: "automatic",
        started_at: "2026-01-01T00:00:00.000Z",
        ended_at: "2026-01-01T00:30:00.000Z",
        severity: "bad",
        current_severity: "warn",
        checks: '{"database":"bad"}',
        summary: '{"database":"migrations behind"}',
        opened_snapshot_id: 3,
        closed_snapshot_id: 9,
        title: null,
        state: null,
      },
      {
        id: 2,
        source: "automatic",
        started_at: "2026-01-01T01:00:00.000Z",
        ended_at: null,
        severity: "warn",
        current_severity: "warn",
        checks: '{"jobs":"warn"}',
        summary: '{"jobs":"stale"}',
        opened_snapshot_id: 12,
        closed_snapshot_id: null,
        title: null,
        state: null,
      },
    ]);
    expect(await h.ctx.store.all("PRAGMA foreign_key_check")).toHaveLength(0);

    // An operator incident takes the next id; the automatic one is closed by an ok snapshot and only it.
    const admin = operator(h, await createAdminToken(h));
    const op = await admin.post("/admin/status/incidents", { title: "Planned failover ran long", message: "Investigating.", severity: "warn" });
    expect(op.body.incident.id).toBe(3);
    const closed = await storeSnapshot(
      h.ctx,
      {
        generated_at: "2026-01-01T02:00:00.000Z",
        overall: "ok",
        policy_version: "t",
        checks: Object.fromEntries(CHECK_NAMES.map((n) => [n, { status: "ok" as const, summary: "s" }])),
      },
      null,
    );
    expect(closed.incident).toMatchObject({ action: "closed", incident_id: 2 });
    expect((await h.json("/api/public/system-status/incidents")).body.incidents.map((i: any) => [i.id, i.status])).toEqual([
      [3, "open"],
      [2, "resolved"],
      [1, "resolved"],
    ]);
  },
);
