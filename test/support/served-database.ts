// The database of a Herald that runs as a child process (`herald serve`, the CLI's commands), on the engine the
// test run chose (test/support/engine.ts): a SQLite file in the test's temp dir, or with HERALD_TEST_ENGINE=postgres
// a fresh migrated database on the throwaway cluster. `env` is what the child needs to find it; `query` gives the
// test a connection of its own, through the port's interface and its portable SQL (docs/design.md §8a), to read what
// the child did — the same assertions on either engine.
import { Database } from "bun:sqlite";
import { join } from "node:path";
import { PostgresStore } from "../../src/db/postgres-engine";
import type { Param, Queryable } from "../../src/db/port";
import { freshPostgresDatabase, testEngine, type TestEngine } from "./engine";

export interface ServedDatabase {
  engine: TestEngine;
  /** HERALD_DB_PATH always (the first-start banner and the backups folder are placed by it); DATABASE_URL on PostgreSQL. */
  env: Record<string, string>;
  /** The SQLite file; on PostgreSQL nothing is ever written there. */
  path: string;
  /** Runs `fn` on a connection of the test's own, closed when it settles. */
  query<T>(fn: (q: Queryable) => Promise<T>): Promise<T>;
  /** Drops the PostgreSQL database (in the background); on SQLite the file goes with the test's temp dir. */
  drop(): Promise<void>;
}

/** A database named `name` (the SQLite file's name in `dir`) for a child process, on the test run's engine. */
export async function servedDatabase(dir: string, name = "herald.db"): Promise<ServedDatabase> {
  const path = join(dir, name);
  if (testEngine() === "sqlite") {
    return {
      engine: "sqlite",
      env: { HERALD_DB_PATH: path },
      path,
      async query(fn) {
        // Opened for each query and closed after it, as a child's own connection would be: the file is held only
        // while the test reads, and a missing file is an error rather than a new empty database.
        const db = new Database(path, { readwrite: true, strict: true });
        try {
          db.exec("PRAGMA busy_timeout = 5000");
          return await fn(sqliteQueryable(db));
        } finally {
          db.close();
        }
      },
      drop: async () => {},
    };
  }
  const pg = await freshPostgresDatabase();
  return {
    engine: "postgres",
    env: { HERALD_DB_PATH: path, DATABASE_URL: pg.url },
    path,
    async query(fn) {
      const store = new PostgresStore({ url: pg.url, poolMax: 1 });
      try {
        return await fn(store);
      } finally {
        await store.close();
      }
    },
    drop: () => pg.drop(),
  };
}

/** bun:sqlite's synchronous statements behind the port's async interface (`?` placeholders, as the port takes them). */
function sqliteQueryable(db: Database): Queryable {
  const bound = (params: readonly Param[] = []) => params as Array<string | number | boolean | null | Uint8Array>;
  return {
    dialect: "sqlite",
    all: async <T>(sql: string, params?: readonly Param[]) => db.query(sql).all(...bound(params)) as T[],
    get: async <T>(sql: string, params?: readonly Param[]) => (db.query(sql).get(...bound(params)) as T | null) ?? null,
    run: async (sql: string, params?: readonly Param[]) => ({ changes: db.query(sql).run(...bound(params)).changes }),
  };
}
