// Several Herald contexts over ONE database, as separate processes (instances, or one process restarted) would
// have: each its own store (its own SQLite connection on the file, or its own PostgreSQL pool), jobs, clock and
// chain client. The engine is HERALD_TEST_ENGINE's (test/support/engine.ts): the SQLite file by default, a fresh
// database on the throwaway PostgreSQL cluster otherwise. Used by the chain and status suites for restarts and for
// the multi-instance guarantees (two contexts leasing, syncing or snapshotting at once).
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { closeContext, openContextAsync } from "../../src/bootstrap";
import type { Clock } from "../../src/clock";
import { loadConfig } from "../../src/config";
import type { AppContext } from "../../src/context";
import { createLogger } from "../../src/log";
import { FakeClock, seededRng } from "../support/clock";
import { freshPostgresDatabase, testEngine } from "../support/engine";

export interface SharedDatabase {
  /** A new context over the database; `env` adds to the test defaults, `clock` is its own unless given. */
  open(env?: Record<string, string>, clock?: FakeClock, seed?: string): Promise<AppContext>;
  /** Closes one context (its buffers written, its leases released), as a process that stops would. */
  close(ctx: AppContext): Promise<void>;
  /** Closes every context still open and removes the database. */
  dispose(): Promise<void>;
}

export async function sharedDatabase(): Promise<SharedDatabase> {
  const dir = mkdtempSync(join(tmpdir(), "herald-shared-"));
  const pg = testEngine() === "postgres" ? await freshPostgresDatabase() : null;
  const open: AppContext[] = [];
  const close = async (ctx: AppContext) => {
    const i = open.indexOf(ctx);
    if (i === -1) return;
    open.splice(i, 1);
    await ctx.jobs.stop();
    await ctx.requestLog.stop();
    await ctx.chain.flushRecords();
    await closeContext(ctx);
  };
  return {
    async open(env = {}, clock = new FakeClock(), seed = `context-${open.length}`) {
      const config = loadConfig({
        NODE_ENV: "test",
        HERALD_DB_PATH: join(dir, "herald.db"),
        LOG_LEVEL: "silent",
        JOBS_ENABLED: "0",
        PUBLIC_BASE_URL: "http://localhost:3000",
        WEBHOOK_ALLOW_PRIVATE_TARGETS: "1",
        ...(pg ? { DATABASE_URL: pg.url, DATABASE_POOL_MAX: "4" } : {}),
        ...env,
      });
      const ctx = await openContextAsync(config, { clock: clock as Clock, rng: seededRng(seed), log: createLogger("silent") });
      open.push(ctx);
      return ctx;
    },
    close,
    async dispose() {
      for (const ctx of [...open]) await close(ctx);
      await pg?.drop();
      rmSync(dir, { recursive: true, force: true });
    },
  };
}
