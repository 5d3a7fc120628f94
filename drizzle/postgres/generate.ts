// Writes the PostgreSQL DDL of Herald's tables, from the same drizzle definitions (src/**/tables.ts) that
// drizzle-kit turns into the SQLite migrations: `npm run db:generate:pg -- [table …]` prints the CREATE
// statements of the tables named (all when none), in foreign-key order, to paste into the next
// drizzle/postgres/NNNN_*.sql migration. test/db/postgres-schema.test.ts checks the migrated schemas agree.
import { is } from "drizzle-orm";
import { getTableConfig, SQLiteTable } from "drizzle-orm/sqlite-core";
import { join } from "node:path";
import { inDependencyOrder, postgresDdlOf } from "../../src/db/postgres-ddl";

export async function heraldTables(): Promise<SQLiteTable[]> {
  const root = join(import.meta.dir, "..", "..");
  const tables: SQLiteTable[] = [];
  for await (const file of new Bun.Glob("src/**/tables.ts").scan(root)) {
    const mod = (await import(join(root, file))) as Record<string, unknown>;
    for (const v of Object.values(mod)) if (is(v, SQLiteTable)) tables.push(v as SQLiteTable);
  }
  return tables;
}

export async function postgresDdl(names: string[] = []): Promise<string> {
  const all = inDependencyOrder(await heraldTables());
  const chosen = names.length ? all.filter((t) => names.includes(getTableConfig(t).name)) : all;
  const missing = names.filter((n) => !all.some((t) => getTableConfig(t).name === n));
  if (missing.length) throw new Error(`no such table in src/**/tables.ts: ${missing.join(", ")}`);
  return chosen.flatMap((t) => postgresDdlOf(t)).join(";\n--> statement-breakpoint\n") + ";\n";
}

if (import.meta.main) process.stdout.write(await postgresDdl(process.argv.slice(2)));
