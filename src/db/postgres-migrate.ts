import { countOf, type Store } from "./port";
import { embeddedPostgresMigrations } from "./postgres-migrations-macro" with { type: "macro" };

// The PostgreSQL migrations (drizzle/postgres/), embedded in the binary and applied at start like the SQLite ones.
// Several instances may start at once against one database: an advisory lock held for the transaction makes
// them take turns, so each migration runs exactly once and a late starter sees it recorded.

const MIGRATIONS = embeddedPostgresMigrations();
/** pg_advisory_xact_lock key for migrations: any constant no other code uses ("herald" in ASCII). */
const MIGRATION_LOCK = 0x68_65_72_61_6c_64;
/** How long applying the migrations at start may take before the start fails (a whole upgrade in one transaction). */
const MIGRATION_TIMEOUT_MS = 30 * 60_000;

/** Applies every embedded migration not yet recorded, in one transaction; `nowIso` is recorded with each. */
export async function migratePostgres(store: Store, nowIso: string): Promise<{ applied: number; total: number }> {
  if (store.dialect !== "postgres") throw new Error("migratePostgres needs the PostgreSQL engine");
  const applied = await store.tx(
    async (t) => {
      await t.get("SELECT pg_advisory_xact_lock(?)", [MIGRATION_LOCK]);
      await t.run("CREATE TABLE IF NOT EXISTS herald_migrations (name text PRIMARY KEY, applied_at text NOT NULL)");
      const done = new Set((await t.all<{ name: string }>("SELECT name FROM herald_migrations")).map((r) => r.name));
      let n = 0;
      for (const m of MIGRATIONS) {
        if (done.has(m.name)) continue;
        for (const statement of m.statements) await t.run(statement);
        await t.run("INSERT INTO herald_migrations (name, applied_at) VALUES (?, ?)", [m.name, nowIso]);
        n++;
      }
      return n;
      // Migrations may rewrite large tables, and an instance starting beside another waits for its turn: they have
      // the server's statement_timeout, not the request path's deadline.
    },
    { timeoutMs: MIGRATION_TIMEOUT_MS },
  );
  return { applied, total: MIGRATIONS.length };
}

export async function postgresMigrationStatus(store: Store): Promise<{ applied: number; total: number; current: boolean }> {
  const exists = await store.get<{ t: string | null }>("SELECT to_regclass('herald_migrations')::text AS t");
  const applied = exists?.t ? await countOf(store, "SELECT count(*) AS n FROM herald_migrations") : 0;
  return { applied, total: MIGRATIONS.length, current: applied >= MIGRATIONS.length };
}
