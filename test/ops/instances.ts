// Two Herald instances' ops domain over ONE database, as two processes would be: each a whole context (its own
// store — its own SQLite connection on the file, or its own PostgreSQL pool — its own rng, its own link-inbox
// sender), on the engine HERALD_TEST_ENGINE names. They share one fake clock unless a test moves them apart.
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { openContextAsync } from "../../src/bootstrap";
import { loadConfig } from "../../src/config";
import type { AppContext } from "../../src/context";
import { createLogger } from "../../src/log";
import { FakeClock, seededRng } from "../support/clock";
import { freshPostgresDatabase, testEngine } from "../support/engine";

export interface TwoInstances {
  a: AppContext;
  b: AppContext;
  clock: FakeClock;
  close(): Promise<void>;
}

export async function openTwoInstances(env: Record<string, string> = {}, start = "2026-04-01T10:00:00.000Z"): Promise<TwoInstances> {
  const dir = mkdtempSync(join(tmpdir(), "herald-ops-instances-"));
  const pg = testEngine() === "postgres" ? await freshPostgresDatabase() : null;
  const config = loadConfig({
    NODE_ENV: "test",
    HERALD_DB_PATH: join(dir, "herald.db"),
    HERALD_MASTER_KEY: "ab".repeat(32),
    LOG_LEVEL: "silent",
    JOBS_ENABLED: "0",
    PUBLIC_BASE_URL: "http://localhost:3000",
    ...(pg ? { DATABASE_URL: pg.url, DATABASE_POOL_MAX: "4" } : {}),
    ...env,
  });
  const clock = new FakeClock(start);
  const open = (name: string) => openContextAsync(config, { clock, rng: seededRng(`instance-${name}`), log: createLogger("silent") });
  const a = await open("a");
  const b = await open("b");
  return {
    a,
    b,
    clock,
    async close() {
      for (const ctx of [a, b]) {
        await ctx.requestLog.stop();
        await ctx.jobs.stop();
        await ctx.store.close();
        await ctx.store.close();
      }
      await pg?.drop();
      rmSync(dir, { recursive: true, force: true });
    },
  };
}
