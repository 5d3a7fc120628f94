import { afterAll, beforeAll, expect, test } from "bun:test";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { postgresDdl } from "../../drizzle/postgres/generate";
import { openDatabase } from "../../src/db/client";
import { migrate } from "../../src/db/migrate";
import { PostgresStore } from "../../src/db/postgres-engine";
import { migratePostgres, postgresMigrationStatus } from "../../src/db/postgres-migrate";
import { withDatabase } from "../support/engine";
import { postgresPresent, startCluster, type TestCluster } from "../support/postgres";

// The two engines' schemas cannot drift: the SQLite file migrated by drizzle/*.sql and a PostgreSQL database
// migrated by drizzle/postgres/*.sql (the service's own runner) have the same tables, columns (type class, NOT
// NULL, default), primary keys, unique and plain indexes (names, columns, partial or not) and foreign keys.

const pg = postgresPresent("test/db/postgres-schema.test.ts");
let cluster: TestCluster | undefined;
let dir = "";

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), "herald-schema-"));
  if (pg) cluster = await startCluster();
}, 120_000);
afterAll(() => {
  cluster?.stop();
  rmSync(dir, { recursive: true, force: true });
});

interface TableShape {
  columns: Record<string, { type: string; notNull: boolean; default: string | null }>;
  primaryKey: string[];
  indexes: Record<string, { columns: string[]; unique: boolean; partial: boolean }>;
  foreignKeys: string[];
}

/** A default as both engines write it, reduced to its value: `'active'::text` and `'active'` agree, false is 0. */
function defaultValue(raw: string | null): string | null {
  if (raw === null) return null;
  const v = raw.replace(/::[\w ]+$/, "").replace(/^\((.*)\)$/, "$1");
  if (v === "false") return "0";
  if (v === "true") return "1";
  return v;
}

function sqliteShape(): Record<string, TableShape> {
  const h = openDatabase(join(dir, "schema.db"));
  migrate(h);
  const db = h.sqlite;
  const out: Record<string, TableShape> = {};
  const tables = db
    .query("SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%' AND name <> '__drizzle_migrations'")
    .all() as Array<{ name: string }>;
  for (const { name } of tables) {
    const cols = db.query(`PRAGMA table_info("${name}")`).all() as Array<{
      name: string;
      type: string;
      notnull: number;
      dflt_value: string | null;
      pk: number;
    }>;
    const shape: TableShape = { columns: {}, primaryKey: [], indexes: {}, foreignKeys: [] };
    for (const c of cols) {
      const t = c.type.toLowerCase();
      const type = t.startsWith("int") ? "integer" : t === "real" ? "real" : t === "blob" ? "blob" : "text";
      shape.columns[c.name] = { type, notNull: c.notnull === 1 || c.pk > 0, default: defaultValue(c.dflt_value) };
    }
    shape.primaryKey = cols
      .filter((c) => c.pk > 0)
      .sort((a, b) => a.pk - b.pk)
      .map((c) => c.name);
    const indexes = db.query(`PRAGMA index_list("${name}")`).all() as Array<{ name: string; unique: number; origin: string; partial: number }>;
    for (const i of indexes) {
      if (i.origin === "pk") continue;
      const columns = (db.query(`PRAGMA index_info("${i.name}")`).all() as Array<{ seqno: number; name: string }>)
        .sort((a, b) => a.seqno - b.seqno)
        .map((c) => c.name);
      // An inline UNIQUE has an automatic name; it is compared by its columns.
      const key = i.name.startsWith("sqlite_autoindex_") ? `unique(${columns.join(",")})` : i.name;
      shape.indexes[key] = { columns, unique: i.unique === 1, partial: i.partial === 1 };
    }
    const fks = db.query(`PRAGMA foreign_key_list("${name}")`).all() as Array<{ id: number; table: string; from: string; to: string; on_delete: string }>;
    const byId = new Map<number, typeof fks>();
    for (const f of fks) byId.set(f.id, [...(byId.get(f.id) ?? []), f]);
    shape.foreignKeys = [...byId.values()]
      .map(
        (parts) =>
          `(${parts.map((p) => p.from).join(",")}) → ${parts[0]!.table}(${parts.map((p) => p.to).join(",")}) on delete ${parts[0]!.on_delete.toLowerCase()}`,
      )
      .sort();
    out[name] = shape;
  }
  h.close();
  return out;
}

async function postgresShape(store: PostgresStore): Promise<Record<string, TableShape>> {
  const out: Record<string, TableShape> = {};
  const cols = await store.all<{
    table_name: string;
    column_name: string;
    data_type: string;
    is_nullable: string;
    column_default: string | null;
    is_identity: string;
  }>(
    `SELECT table_name, column_name, data_type, is_nullable, column_default, is_identity FROM information_schema.columns
     WHERE table_schema = 'public' AND table_name <> 'herald_migrations' ORDER BY table_name, ordinal_position`,
  );
  for (const c of cols) {
    const shape = (out[c.table_name] ??= { columns: {}, primaryKey: [], indexes: {}, foreignKeys: [] });
    const type = c.data_type === "bigint" ? "integer" : c.data_type === "double precision" ? "real" : c.data_type === "bytea" ? "blob" : "text";
    shape.columns[c.column_name] = { type, notNull: c.is_nullable === "NO", default: defaultValue(c.column_default) };
  }
  const indexes = await store.all<{ table_name: string; index_name: string; is_unique: boolean; is_primary: boolean; partial: boolean; columns: string }>(
    `SELECT t.relname AS table_name, i.relname AS index_name, x.indisunique AS is_unique, x.indisprimary AS is_primary, x.indpred IS NOT NULL AS partial,
            (SELECT string_agg(a.attname, ',' ORDER BY k.n) FROM unnest(x.indkey) WITH ORDINALITY AS k(attnum, n) JOIN pg_attribute a ON a.attrelid = t.oid AND a.attnum = k.attnum) AS columns
     FROM pg_index x JOIN pg_class i ON i.oid = x.indexrelid JOIN pg_class t ON t.oid = x.indrelid JOIN pg_namespace s ON s.oid = t.relnamespace
     WHERE s.nspname = 'public' AND t.relname <> 'herald_migrations'`,
  );
  for (const i of indexes) {
    const shape = out[i.table_name]!;
    const columns = i.columns.split(",");
    if (i.is_primary) shape.primaryKey = columns;
    else shape.indexes[i.index_name] = { columns, unique: i.is_unique, partial: i.partial };
  }
  const fks = await store.all<{ table_name: string; def: string; target: string; cols: string; refcols: string; on_delete: string }>(
    `SELECT t.relname AS table_name, r.relname AS target,
            (SELECT string_agg(a.attname, ',' ORDER BY k.n) FROM unnest(c.conkey) WITH ORDINALITY AS k(attnum, n) JOIN pg_attribute a ON a.attrelid = c.conrelid AND a.attnum = k.attnum) AS cols,
            (SELECT string_agg(a.attname, ',' ORDER BY k.n) FROM unnest(c.confkey) WITH ORDINALITY AS k(attnum, n) JOIN pg_attribute a ON a.attrelid = c.confrelid AND a.attnum = k.attnum) AS refcols,
            CASE c.confdeltype WHEN 'c' THEN 'cascade' WHEN 'n' THEN 'set null' WHEN 'r' THEN 'restrict' WHEN 'd' THEN 'set default' ELSE 'no action' END AS on_delete
     FROM pg_constraint c JOIN pg_class t ON t.oid = c.conrelid JOIN pg_class r ON r.oid = c.confrelid WHERE c.contype = 'f'`,
  );
  for (const f of fks) out[f.table_name]!.foreignKeys.push(`(${f.cols}) → ${f.target}(${f.refcols}) on delete ${f.on_delete}`);
  for (const shape of Object.values(out)) shape.foreignKeys.sort();
  return out;
}

/** SQLite names an inline UNIQUE's index automatically; PostgreSQL's has the name drizzle gave it. */
function comparable(shape: Record<string, TableShape>): Record<string, TableShape> {
  const out: Record<string, TableShape> = {};
  for (const [table, s] of Object.entries(shape)) {
    const indexes: TableShape["indexes"] = {};
    for (const [name, i] of Object.entries(s.indexes))
      indexes[name.endsWith("_unique") && i.unique && !i.partial ? `unique(${i.columns.join(",")})` : name] = i;
    out[table] = { ...s, indexes };
  }
  return out;
}

test.skipIf(!pg)(
  "the PostgreSQL migrations make the schema the SQLite migrations make",
  async () => {
    const admin = new PostgresStore({ url: cluster!.url, poolMax: 1 });
    await admin.run("CREATE DATABASE schema_check");
    const store = new PostgresStore({ url: withDatabase(cluster!.url, "schema_check"), poolMax: 2 });
    const first = await migratePostgres(store, "2026-11-23T00:00:00.000Z");
    expect(first.applied).toBe(first.total);
    // A second start (another instance) finds everything applied.
    expect((await migratePostgres(store, "2026-11-23T00:00:01.000Z")).applied).toBe(0);
    expect(await postgresMigrationStatus(store)).toEqual({ applied: first.total, total: first.total, current: true });
    const onPostgres = comparable(await postgresShape(store));
    const onSqlite = comparable(sqliteShape());
    expect(Object.keys(onPostgres).sort()).toEqual(Object.keys(onSqlite).sort());
    for (const table of Object.keys(onSqlite)) expect({ table, ...onPostgres[table] }).toEqual({ table, ...onSqlite[table]! });
    await store.close();
    await admin.close();
  },
  120_000,
);

test.skipIf(!pg)(
  "two instances starting together on an empty database apply each migration once",
  async () => {
    const admin = new PostgresStore({ url: cluster!.url, poolMax: 1 });
    await admin.run("CREATE DATABASE race_check");
    const stores = [1, 2, 3].map(() => new PostgresStore({ url: withDatabase(cluster!.url, "race_check"), poolMax: 2 }));
    const results = await Promise.all(stores.map((s) => migratePostgres(s, "2026-11-23T00:00:00.000Z")));
    expect(results.map((r) => r.applied).reduce((a, b) => a + b, 0)).toBe(results[0]!.total);
    for (const s of stores) await s.close();
    await admin.close();
  },
  120_000,
);

test("the generator writes the first PostgreSQL migration from the table definitions", async () => {
  const ddl = await postgresDdl(["partner_users", "wallet_links"]);
  expect(ddl).toContain('"id" bigint GENERATED BY DEFAULT AS IDENTITY PRIMARY KEY');
  expect(ddl).toContain('CREATE UNIQUE INDEX "wallet_links_one_primary_idx" ON "wallet_links" ("user_id") WHERE is_primary = 1');
  expect(ddl.indexOf('CREATE TABLE "partner_users"')).toBeLessThan(ddl.indexOf('CREATE TABLE "wallet_links"'));
  await expect(postgresDdl(["no_such_table"])).rejects.toThrow("no such table");
});
