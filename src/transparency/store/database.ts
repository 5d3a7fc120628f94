import type { Queryable } from "../../db/port";
import type { TransparencyModel } from "../model";

// What /trust.json says of the database it runs on. The settings have no common SQL: SQLite answers PRAGMA reads,
// PostgreSQL current_setting(); each engine's read is a function named for it, chosen by the store's dialect
// (src/transparency/service.ts) and tested on both engines (test/transparency/trust.test.ts).

/** What /trust.json says of the database: its engine, journal mode and synchronous level (the answer's schema says which is which). */
export type DatabaseSettings = (typeof TransparencyModel.trust.static)["data_protection"]["database"];

const SYNCHRONOUS_LEVELS: Record<string, string> = { 0: "off", 1: "normal", 2: "full", 3: "extra" };

const firstValue = (row: Record<string, unknown> | null): unknown => (row ? Object.values(row)[0] : null);

/** SQLite: PRAGMA journal_mode and PRAGMA synchronous of the connection (set at open, src/db/client.ts). */
export async function databaseSettingsSqlite(q: Queryable): Promise<DatabaseSettings> {
  const journal = firstValue(await q.get("PRAGMA journal_mode"));
  const sync = firstValue(await q.get("PRAGMA synchronous"));
  return { engine: "sqlite", journal_mode: String(journal), synchronous: SYNCHRONOUS_LEVELS[String(sync)] ?? String(sync) };
}

/** PostgreSQL: synchronous_commit as the server reports it; its write-ahead log is not a setting (always on). */
export async function databaseSettingsPostgres(q: Queryable): Promise<DatabaseSettings> {
  const row = await q.get<{ synchronous: string }>("SELECT current_setting('synchronous_commit') AS synchronous");
  return { engine: "postgres", journal_mode: "wal", synchronous: row?.synchronous ?? "unknown" };
}
