// Upgrades from an older release: a SQLite file migrated with only the first migrations of drizzle/, as a
// deployment before a change left it, for a test to plant old rows in before the new code opens (and migrates) it.
import { join } from "node:path";
import { type MigrationMeta, readMigrationFiles } from "drizzle-orm/migrator";
import type { DbHandle } from "../../src/db/client";

/** The SQLite migrations in order, as the binary embeds them (drizzle/). */
export const sqliteMigrations = (): MigrationMeta[] => readMigrationFiles({ migrationsFolder: join(import.meta.dir, "..", "..", "drizzle") });

/** Applies the first `count` migrations (0000 … count−1) to an open file, through drizzle's own migrator. */
export function migrateFirst(handle: DbHandle, count: number): void {
  const db = handle.db as unknown as { dialect: { migrate(m: unknown, s: unknown, c: unknown): void }; session: unknown };
  db.dialect.migrate(sqliteMigrations().slice(0, count), db.session, { migrationsTable: "__drizzle_migrations" });
}
