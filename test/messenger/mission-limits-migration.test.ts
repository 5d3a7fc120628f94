// Missions on event types the server does not observe became self_reported in SQLite migration 0021 but kept the
// caps and rewards they had, so they paid more on the client's word than a new self-reported mission may.
// SQLite migration 0028 and PostgreSQL migration 0004 bring them within SELF_REPORTED_LIMITS; server-counted
// missions and self-reported ones already within the limits are left as they are.
import { afterEach, expect } from "bun:test";
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { openDatabase } from "../../src/db/client";
import { createTestApp, openTestApp, sqliteOf, type TestApp } from "../support/app";
import { migrateFirst } from "../support/migrations";
import { testOn } from "../support/skipped";

let h: TestApp | undefined;
const dirs: string[] = [];
afterEach(async () => {
  await h?.close();
  h = undefined;
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
});

const COLUMNS = "mission_key, progress_source, daily_cap, per_minute_cap, reward_free_spins, reward_missiles, reward_points, reward_salutes, revision";
const INSERT = `INSERT INTO messenger_missions (mission_key, title, event_type, progress_source, target, reward_free_spins, reward_missiles, reward_points, reward_salutes, daily_cap, per_minute_cap, active, created_at, revision)
  VALUES (?, 'm', ?, ?, 3, ?, ?, ?, ?, ?, ?, 1, '2026-01-01T00:00:00.000Z', 1)`;
/** key, event type, source, free spins, missiles, points, salutes, daily cap, per-minute cap */
const ROWS: Array<[string, string, string, number, number, number, string | null, number, number]> = [
  ["legacy-quiz", "anything.at.all", "self_reported", 50, 500, 5000, "50", 1000, 100],
  ["small-quiz", "quiz.answer", "self_reported", 1, 2, 10, null, 5, 1],
  ["spin-lots", "spin_wheel.play", "server", 50, 500, 5000, "50", 1000, 100],
];
const EXPECTED = [
  {
    mission_key: "legacy-quiz",
    progress_source: "self_reported",
    daily_cap: 20,
    per_minute_cap: 5,
    reward_free_spins: 5,
    reward_missiles: 20,
    reward_points: 1000,
    reward_salutes: null,
    revision: 2,
  },
  {
    mission_key: "small-quiz",
    progress_source: "self_reported",
    daily_cap: 5,
    per_minute_cap: 1,
    reward_free_spins: 1,
    reward_missiles: 2,
    reward_points: 10,
    reward_salutes: null,
    revision: 1,
  },
  {
    mission_key: "spin-lots",
    progress_source: "server",
    daily_cap: 1000,
    per_minute_cap: 100,
    reward_free_spins: 50,
    reward_missiles: 500,
    reward_points: 5000,
    reward_salutes: "50",
    revision: 1,
  },
];
const values = (r: (typeof ROWS)[number]) => [r[0], r[1], r[2], r[3], r[4], r[5], r[6], r[7], r[8]];

testOn("sqlite", "test/messenger/mission-limits-migration.test.ts")(
  "SQLite 0028: a file migrated up to 0027 has its loose self-reported missions brought within the limits",
  () => {
    const dir = mkdtempSync(join(tmpdir(), "herald-migration-"));
    dirs.push(dir);
    const dbPath = join(dir, "herald.db");
    const old = openDatabase(dbPath);
    migrateFirst(old, 28); // 0000 … 0027
    for (const r of ROWS) old.sqlite.query(INSERT).run(...(values(r) as Array<string | number | null>));
    old.close();

    h = createTestApp({ env: { HERALD_DB_PATH: dbPath } });
    expect(sqliteOf(h).query(`SELECT ${COLUMNS} FROM messenger_missions ORDER BY mission_key`).all()).toEqual(EXPECTED);
  },
);

testOn("postgres", "test/messenger/mission-limits-migration.test.ts")("PostgreSQL 0004: the same rows, the same outcome", async () => {
  h = await openTestApp();
  const sql = readFileSync(join(import.meta.dir, "..", "..", "drizzle", "postgres", "0004_self_reported_mission_limits.sql"), "utf8");
  await h.ctx.store.tx(async (t) => {
    for (const r of ROWS) await t.run(INSERT, values(r));
    await t.run(sql.replace(/--[^\n]*\n/g, ""));
  });
  expect(await h.ctx.store.all(`SELECT ${COLUMNS} FROM messenger_missions ORDER BY mission_key`)).toEqual(EXPECTED);
});
