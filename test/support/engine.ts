// Which storage engine a test app runs on: HERALD_TEST_ENGINE=postgres runs the ported domains' suites against
// PostgreSQL (a throwaway cluster from Debian's package, one per test process, started on first use), anything
// else the SQLite file. Each PostgreSQL test app gets a database of its own, cloned from a template that the
// service's own migration runner (src/db/postgres-migrate.ts) migrated once — a few milliseconds instead of
// migrating each time.
import { PostgresStore } from "../../src/db/postgres-engine";
import { migratePostgres } from "../../src/db/postgres-migrate";
import { postgresPresent, startCluster, type TestCluster } from "./postgres";

export type TestEngine = "sqlite" | "postgres";

export function testEngine(): TestEngine {
  return process.env.HERALD_TEST_ENGINE === "postgres" ? "postgres" : "sqlite";
}

interface Shared {
  cluster: TestCluster;
  admin: PostgresStore;
}

let shared: Promise<Shared> | null = null;
let made = 0;

/** The database URL `url` with its database name replaced. */
export const withDatabase = (url: string, name: string) => url.replace(/\/[^/?]*(\?|$)/, `/${name}$1`);

async function sharedCluster(): Promise<Shared> {
  shared ??= (async () => {
    if (!postgresPresent("HERALD_TEST_ENGINE=postgres")) throw new Error("HERALD_TEST_ENGINE=postgres needs PostgreSQL (apt-get install -y postgresql)");
    const cluster = await startCluster();
    process.once("exit", () => cluster.stop());
    const admin = new PostgresStore({ url: cluster.url, poolMax: 2 });
    await admin.run("CREATE DATABASE herald_template");
    const template = new PostgresStore({ url: withDatabase(cluster.url, "herald_template"), poolMax: 1 });
    await migratePostgres(template, new Date(0).toISOString());
    await template.close();
    return { cluster, admin };
  })();
  return shared;
}

/** Databases made ahead of their test (one at a time), and the drops still running. */
let ahead: Promise<string> | null = null;
let drops: Promise<unknown> = Promise.resolve();

async function createDatabase(): Promise<string> {
  const { admin } = await sharedCluster();
  const name = `herald_t${process.pid}_${++made}`;
  await admin.run(`CREATE DATABASE ${name} TEMPLATE herald_template`);
  return name;
}

/**
 * A fresh, migrated PostgreSQL database for one test app; `drop` removes it. The next test's database is made
 * while this one runs and the drop goes on in the background (drops run one after another), so a test app waits
 * for neither: with the cluster on tmpfs (test/support/postgres.ts) a create takes ~30 ms, on this VM's disk
 * 150–300 ms once the tests have dirtied buffers (each create and drop is a checkpoint).
 */
export async function freshPostgresDatabase(): Promise<{ url: string; drop(): Promise<void> }> {
  const { cluster, admin } = await sharedCluster();
  const name = await (ahead ?? createDatabase());
  ahead = createDatabase();
  ahead.catch(() => {});
  return {
    url: withDatabase(cluster.url, name),
    async drop() {
      drops = drops.then(() => admin.run(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`)).catch(() => {});
    },
  };
}
