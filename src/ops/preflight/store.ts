import { countOf, placeholders, type Queryable } from "../../db/port";
import type { RowOf } from "../../db/rows";
import type { opsPreflightSnapshots } from "../tables";

// ops_preflight_snapshots: the only SQL that touches it, written once for both engines; and the reads of each
// engine's migration record the guards show (SQLite: drizzle's __drizzle_migrations; PostgreSQL: herald_migrations,
// kept by src/db/postgres-migrate.ts) — per engine, as the records themselves are.

export type SnapshotRow = RowOf<typeof opsPreflightSnapshots>;

const COLUMNS = ["day", "section", "field", "value", "fingerprint", "taken_at"] as const;
const INSERT = `INSERT INTO ops_preflight_snapshots (${COLUMNS.join(", ")}) VALUES (${placeholders(COLUMNS.length)})`;
const valuesOf = (r: SnapshotRow) => COLUMNS.map((c) => r[c]);

/** Snapshot rows of days from..to (inclusive), by day, section and field. */
export const snapshotRowsBetween = (q: Queryable, from: string, to: string) =>
  q.all<SnapshotRow>(`SELECT ${COLUMNS.join(", ")} FROM ops_preflight_snapshots WHERE day >= ? AND day <= ? ORDER BY day, section, field`, [from, to]);

export async function dayTakenAt(q: Queryable, day: string): Promise<string | null> {
  return (await q.get<{ at: string | null }>("SELECT max(taken_at) AS at FROM ops_preflight_snapshots WHERE day = ?", [day]))?.at ?? null;
}

/**
 * The claim of a day's snapshot, on its first row (the lead): written when the day has no snapshot, or replaced
 * when the day's lead was taken before `dueBefore`; false when neither holds (not due, or another instance took
 * it since). One conditional upsert: on PostgreSQL a second instance claiming at once waits for the first's row
 * lock and then finds its taken_at, so of two instances one takes the day's snapshot.
 */
export async function claimDay(t: Queryable, lead: SnapshotRow, dueBefore: string): Promise<boolean> {
  const r = await t.get<{ day: string }>(
    `${INSERT}
     ON CONFLICT (day, section, field) DO UPDATE SET value = excluded.value, fingerprint = excluded.fingerprint, taken_at = excluded.taken_at
     WHERE ops_preflight_snapshots.taken_at < ?
     RETURNING day`,
    [...valuesOf(lead), dueBefore],
  );
  return r !== null;
}

/** Replaces the rest of the claimed day (every row but the lead) with `rows`. */
export async function replaceDayRest(t: Queryable, lead: SnapshotRow, rows: readonly SnapshotRow[]): Promise<void> {
  await t.run("DELETE FROM ops_preflight_snapshots WHERE day = ? AND NOT (section = ? AND field = ?)", [lead.day, lead.section, lead.field]);
  for (const r of rows) await t.run(INSERT, valuesOf(r));
}

/** The newest PostgreSQL migration applied (by name, which sorts in order: NNNN_…), or null. */
export async function lastPostgresMigration(q: Queryable): Promise<string | null> {
  return (await q.get<{ name: string }>("SELECT name FROM herald_migrations ORDER BY name DESC LIMIT 1"))?.name ?? null;
}

/** SQLite: the migrations drizzle recorded (0 before the first). Its table is SQLite's alone (PostgreSQL: below). */
export async function sqliteMigrationsApplied(q: Queryable): Promise<number> {
  const exists = await q.get("SELECT 1 AS one FROM sqlite_master WHERE type = 'table' AND name = '__drizzle_migrations'");
  return exists ? countOf(q, "SELECT count(*) AS n FROM __drizzle_migrations") : 0;
}
