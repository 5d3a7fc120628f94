// Several Herald instances' webhook machinery over ONE database, without building apps: each instance has its own
// store (its own SQLite connections on the file, or its own PostgreSQL pool) and its own dispatcher, as separate
// processes would. `engines()` lists the engines present: SQLite always, PostgreSQL when Debian's package is
// installed (a throwaway cluster, test/support/engine.ts). The webhook verbs and the dispatcher need only this
// much of a context (src/webhooks/deps.ts).
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { resolveMasterKey } from "../../src/auth/secret-box";
import { loadConfig } from "../../src/config";
import { openDatabase } from "../../src/db/client";
import { migrate } from "../../src/db/migrate";
import type { Store } from "../../src/db/port";
import { PostgresStore } from "../../src/db/postgres-engine";
import { SqliteStore } from "../../src/db/sqlite-engine";
import { createLogger } from "../../src/log";
import type { WebhookContext } from "../../src/webhooks/deps";
import { Dispatcher } from "../../src/webhooks/dispatcher";
import { FakeClock, seededRng } from "../support/clock";
import { freshPostgresDatabase } from "../support/engine";
import { postgresPresent } from "../support/postgres";

export type Engine = "sqlite" | "postgres";

export interface Instance {
  ctx: WebhookContext & { dispatcher: Dispatcher };
  store: Store;
  clock: FakeClock;
}

export interface Instances {
  engine: Engine;
  all: Instance[];
  /** Another instance over the same database (e.g. the one that takes over after a crash), with its own clock. */
  add(clock?: FakeClock): Instance;
  close(): Promise<void>;
}

export function engines(testFile: string): Engine[] {
  return postgresPresent(testFile) ? ["sqlite", "postgres"] : ["sqlite"];
}

const MASTER_KEY = "cd".repeat(32);

/** `n` instances over one fresh, migrated database on `engine`, sharing one clock unless given their own. */
export async function openInstances(engine: Engine, n: number, env: Record<string, string> = {}): Promise<Instances> {
  const dir = mkdtempSync(join(tmpdir(), "herald-instances-"));
  const path = join(dir, "herald.db");
  const closers: Array<() => void | Promise<void>> = [];
  let url = "";
  if (engine === "sqlite") {
    const first = openDatabase(path);
    migrate(first);
    first.close();
  } else {
    const pg = await freshPostgresDatabase();
    url = pg.url;
    closers.push(() => pg.drop());
  }
  const config = loadConfig({
    NODE_ENV: "test",
    HERALD_DB_PATH: path,
    HERALD_MASTER_KEY: MASTER_KEY,
    LOG_LEVEL: "silent",
    JOBS_ENABLED: "0",
    WEBHOOK_ALLOW_PRIVATE_TARGETS: "1",
    ...env,
  });
  const log = createLogger("silent");
  const secrets = resolveMasterKey(config, log);
  const shared = new FakeClock();
  const all: Instance[] = [];
  const add = (clock = shared): Instance => {
    let store: Store;
    if (engine === "sqlite") {
      const db = openDatabase(path);
      store = new SqliteStore(db.sqlite);
      closers.unshift(async () => {
        await store.close();
        db.close();
      });
    } else {
      store = new PostgresStore({ url, poolMax: 4 });
      closers.unshift(() => store.close());
    }
    const base = { config, store, clock, rng: seededRng(`instance-${all.length}`), log, secrets };
    const ctx = Object.assign(base, { dispatcher: undefined as unknown as Dispatcher });
    ctx.dispatcher = new Dispatcher(base);
    const instance = { ctx, store, clock };
    all.push(instance);
    return instance;
  };
  for (let i = 0; i < n; i++) add();
  return {
    engine,
    all,
    add,
    async close() {
      for (const i of all) await i.ctx.dispatcher.idle();
      for (const close of closers) await close();
      rmSync(dir, { recursive: true, force: true });
    },
  };
}
