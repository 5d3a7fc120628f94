// Which storage engine a test app runs on: HERALD_TEST_ENGINE=postgres runs the ported domains' suites against
// PostgreSQL (a throwaway cluster from Debian's package, one per test process, started on first use), anything
// else the SQLite file. Each PostgreSQL test app gets a database of its own, cloned from a template that the
// service's own migration runner (src/db/postgres-migrate.ts) migrated once — a few milliseconds instead of
// migrating each time.
import { readFileSync } from "node:fs";
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

/**
 * The test harness's own connections to the shared cluster (creating and dropping each test's database) wait as long
 * as a loaded 2-core machine needs: Herald's production deadlines (5 s a statement, src/db/postgres-engine.ts) are
 * for answering clients, and a CREATE DATABASE queued behind a checkpoint while the suite runs may take longer. A
 * harness statement that failed on such a deadline used to fail every later test of the run in a millisecond.
 */
const HARNESS_DEADLINES = { connectTimeoutMs: 30_000, acquireTimeoutMs: 60_000, queryTimeoutMs: 120_000, transactionTimeoutMs: 120_000 };

async function sharedCluster(): Promise<Shared> {
  shared ??= (async () => {
    if (!postgresPresent("HERALD_TEST_ENGINE=postgres")) throw new Error("HERALD_TEST_ENGINE=postgres needs PostgreSQL (apt-get install -y postgresql)");
    const cluster = await startCluster();
    process.once("exit", () => cluster.stop());
    const admin = new PostgresStore({ url: cluster.url, poolMax: 2, ...HARNESS_DEADLINES });
    await admin.run("CREATE DATABASE herald_template");
    const template = new PostgresStore({ url: withDatabase(cluster.url, "herald_template"), poolMax: 1, ...HARNESS_DEADLINES });
    await migratePostgres(template, new Date(0).toISOString());
    await template.close();
    return { cluster, admin };
  })();
  // A cluster that failed to start is tried again by the next test instead of failing the rest of the run.
  shared.catch(() => {
    shared = null;
  });
  return shared;
}

/** Databases made ahead of their test (one at a time), and the drops still running. */
let ahead: Promise<{ url: string; name: string; admin: PostgresStore }> | null = null;
let drops: Promise<unknown> = Promise.resolve();

/** Prints why the harness could not make a database, with the end of the cluster's own log, to the test output. */
function reportHarnessFailure(cluster: TestCluster, err: unknown): void {
  let log = "";
  try {
    log = readFileSync(cluster.log, "utf8").split("\n").slice(-30).join("\n");
  } catch {
    // the log is gone with the cluster
  }
  console.error(`[test cluster] creating a test database failed: ${(err as Error)?.stack ?? err}\n[test cluster] the server's log ends:\n${log}`);
}

/** Tests in a row that got no database: past 3, each tries once (a cluster that cannot make one fails fast). */
let failedInARow = 0;

/**
 * Creates a test database from the template, trying again (up to 5 times in ~15 s) when the cluster is busy. A
 * shared cluster whose postmaster is gone is started afresh (with its template) for the next try.
 */
async function createDatabase(): Promise<{ url: string; name: string; admin: PostgresStore }> {
  for (let attempt = 1; ; attempt++) {
    const { cluster, admin } = await sharedCluster();
    const name = `herald_t${process.pid}_${++made}`;
    try {
      await admin.run(`CREATE DATABASE ${name} TEMPLATE herald_template`);
      failedInARow = 0;
      return { url: withDatabase(cluster.url, name), name, admin };
    } catch (err) {
      reportHarnessFailure(cluster, err);
      if (!cluster.alive()) {
        console.error("[test cluster] the shared cluster's postmaster is gone: a new cluster is started");
        shared = null;
      } else if (await admin.get("SELECT 1 AS ok FROM pg_database WHERE datname = ?", [name]).catch(() => null)) {
        // A CREATE that the deadline cancelled may still have committed.
        failedInARow = 0;
        return { url: withDatabase(cluster.url, name), name, admin };
      }
      if (attempt >= (failedInARow >= 3 ? 1 : 5)) {
        failedInARow++;
        throw err;
      }
      await Bun.sleep(1_000 * attempt);
    }
  }
}

/**
 * A fresh, migrated PostgreSQL database for one test app; `drop` removes it. The next test's database is made
 * while this one runs and the drop goes on in the background (drops run one after another), so a test app waits
 * for neither: with the cluster on tmpfs (test/support/postgres.ts) a create takes ~30 ms, on this VM's disk
 * 150–300 ms once the tests have dirtied buffers (each create and drop is a checkpoint). A database made ahead that
 * failed is made again for this test, never handed on as a failure to every later one.
 */
export async function freshPostgresDatabase(): Promise<{ url: string; drop(): Promise<void> }> {
  const premade = ahead;
  ahead = null;
  const { url, name, admin } = (premade ? await premade.catch(() => null) : null) ?? (await createDatabase());
  ahead = createDatabase();
  ahead.catch(() => {});
  return {
    url,
    async drop() {
      drops = drops.then(() => admin.run(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`)).catch(() => {});
    },
  };
}
