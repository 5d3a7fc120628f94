import type { MigrationMeta } from "drizzle-orm/migrator";
import { embeddedMigrations } from "./migrations-macro" with { type: "macro" };
import type { DbHandle } from "./client";
import { countOf, type Store } from "./port";
import { postgresMigrationStatus } from "./postgres-migrate";

const MIGRATIONS: MigrationMeta[] = embeddedMigrations();
const MIGRATIONS_TABLE = "__drizzle_migrations";
const statusOf = (applied: number) => ({ applied, total: MIGRATIONS.length, current: applied >= MIGRATIONS.length });

/** Applies every embedded migration not yet recorded; drizzle runs them in one transaction. */
export function migrate(handle: DbHandle): { applied: number; total: number } {
  const before = appliedCount(handle);
  // dialect.migrate is drizzle's internal API (the public migrator reads files from disk); drizzle-orm is pinned.
  const db = handle.db as unknown as { dialect: { migrate(m: MigrationMeta[], s: unknown, c: unknown): void }; session: unknown };
  db.dialect.migrate(MIGRATIONS, db.session, { migrationsTable: MIGRATIONS_TABLE });
  return { applied: appliedCount(handle) - before, total: MIGRATIONS.length };
}

export function migrationStatus(handle: DbHandle): { applied: number; total: number; current: boolean } {
  return statusOf(appliedCount(handle));
}

/**
 * migrationStatus through the storage port, on either engine (the embedded SQLite migrations, or drizzle/postgres/
 * on PostgreSQL): for code that holds only ctx.store, such as the status engine's database check.
 */
export async function migrationStatusOn(store: Store): Promise<{ applied: number; total: number; current: boolean }> {
  if (store.dialect === "postgres") return postgresMigrationStatus(store);
  const exists = await store.get("SELECT 1 AS one FROM sqlite_master WHERE type = 'table' AND name = ?", [MIGRATIONS_TABLE]);
  return statusOf(exists ? await countOf(store, `SELECT count(*) AS n FROM ${MIGRATIONS_TABLE}`) : 0);
}

function appliedCount(handle: DbHandle): number {
  const exists = handle.sqlite.query("SELECT 1 AS one FROM sqlite_master WHERE type = 'table' AND name = ?").get(MIGRATIONS_TABLE);
  return exists ? (handle.sqlite.query(`SELECT count(*) AS n FROM ${MIGRATIONS_TABLE}`).get() as { n: number }).n : 0;
}
