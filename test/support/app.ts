import { Database } from "bun:sqlite";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { buildApp, type HeraldApp } from "../../src/app";
import { openContext, openContextAsync } from "../../src/bootstrap";
import { loadConfig } from "../../src/config";
import type { AppContext } from "../../src/context";
import type { Clock, Rng } from "../../src/clock";
import { createLogger, type Logger } from "../../src/log";
import { flushCounts } from "../../src/messenger/counters";
import { FakeClock, seededRng } from "./clock";
import { contractLogging, recordExchange } from "./contract-log";
import { freshPostgresDatabase, testEngine } from "./engine";
// With HERALD_STATEMENT_LOG set, every statement the stores of this process send is recorded for the query-plan guard.
import "./statement-log";

export interface TestApp {
  ctx: AppContext;
  app: HeraldApp;
  clock: FakeClock;
  dir: string;
  /** `app.handle` on a path (`/healthz?x=1`) with a real host, as Elysia needs. */
  request(path: string, init?: RequestInit): Promise<Response>;
  json<T = Record<string, any>>(path: string, init?: RequestInit): Promise<{ status: number; body: T; headers: Headers }>;
  /** Stops what the app started and removes its database (awaiting is needed only on PostgreSQL). */
  close(): void | Promise<void>;
}

export interface TestAppOptions {
  env?: Record<string, string>;
  clock?: FakeClock;
  rng?: Rng;
  log?: Logger;
}

function testConfig(dir: string, opts: TestAppOptions, extra: Record<string, string> = {}) {
  return loadConfig({
    NODE_ENV: "test",
    HERALD_DB_PATH: join(dir, "herald.db"),
    LOG_LEVEL: "silent",
    JOBS_ENABLED: "0",
    PUBLIC_BASE_URL: "http://localhost:3000",
    ...extra,
    ...opts.env,
  });
}

function testAppOf(ctx: AppContext, clock: FakeClock, dir: string, dispose: () => Promise<void> | void): TestApp {
  const app = buildApp(ctx);
  if (contractLogging) {
    // Every answer, also of tests that call app.handle themselves, goes to the contract check's log.
    const handle = app.handle.bind(app);
    app.handle = async (request: Request) => recordExchange(request, await handle(request));
  }
  const request = (path: string, init?: RequestInit) => app.handle(new Request(`http://localhost${path}`, init));
  return {
    ctx,
    app,
    clock,
    dir,
    request,
    async json(path, init) {
      const res = await request(path, init);
      const text = await res.text();
      let body: any;
      try {
        body = JSON.parse(text);
      } catch {
        throw new Error(`${path} answered ${res.status} with non-JSON: ${text.slice(0, 200)}`);
      }
      return { status: res.status, body, headers: res.headers };
    },
    close() {
      // Buffered request-log rows are written and held leases released before the database closes (many tests
      // call close() without awaiting it: nothing after it needs this app).
      return (async () => {
        await ctx.requestLog.stop();
        await flushCounts(ctx);
        await ctx.jobs.stop();
        closeTestSqlite(ctx);
        await ctx.store.close();
        await dispose();
        rmSync(dir, { recursive: true, force: true });
      })();
    },
  };
}

/** A real app over a fresh SQLite file in its own temp dir, migrations applied, jobs not started. */
export function createTestApp(opts: TestAppOptions = {}): TestApp {
  const dir = mkdtempSync(join(tmpdir(), "herald-test-"));
  const clock = opts.clock ?? new FakeClock();
  const ctx = openContext(testConfig(dir, opts), { clock: clock as Clock, rng: opts.rng ?? seededRng(), log: opts.log ?? createLogger("silent") });
  return testAppOf(ctx, clock, dir, () => {});
}

/**
 * createTestApp on the engine HERALD_TEST_ENGINE names: the SQLite file by default, or a fresh database on a
 * throwaway PostgreSQL cluster (test/support/engine.ts). The suites of the domains on the storage port use this,
 * and CI runs them on both engines.
 */
export async function openTestApp(opts: TestAppOptions = {}): Promise<TestApp> {
  if (testEngine() === "sqlite") return createTestApp(opts);
  const dir = mkdtempSync(join(tmpdir(), "herald-test-"));
  const pg = await freshPostgresDatabase();
  const clock = opts.clock ?? new FakeClock();
  const config = testConfig(dir, opts, { DATABASE_URL: pg.url, DATABASE_POOL_MAX: "4" });
  const ctx = await openContextAsync(config, { clock: clock as Clock, rng: opts.rng ?? seededRng(), log: opts.log ?? createLogger("silent") });
  return testAppOf(ctx, clock, dir, async () => {
    await ctx.store.close();
    await pg.drop();
  });
}

export const jsonInit = (method: string, body: unknown, headers: Record<string, string> = {}): RequestInit => ({
  method,
  headers: { "content-type": "application/json", ...headers },
  body: typeof body === "string" ? body : JSON.stringify(body),
});

/**
 * Lets the after-response hooks of requests already answered run (the request log records a request there, on a
 * later turn of the event loop — a turn later still when the route's guards are async). A few turns, never a
 * sleep: bounded, and no timing is asserted.
 */
export async function afterResponses(turns = 4): Promise<void> {
  for (let i = 0; i < turns; i++) await new Promise<void>((resolve) => setImmediate(resolve));
}

const testConnections = new WeakMap<AppContext, Database>();

/**
 * A connection of the test's own to a SQLite test app's file, for the tests that are about SQLite and set up or
 * read rows with synchronous SQL (the app itself reaches the database only through ctx.store). WAL lets both work
 * on the file; closed with the app.
 */
export function sqliteOf(h: { ctx: AppContext }): Database {
  if (h.ctx.store.dialect !== "sqlite") throw new Error("sqliteOf: this test app runs on PostgreSQL; use ctx.store");
  let db = testConnections.get(h.ctx);
  if (!db) {
    db = new Database(h.ctx.config.dbPath, { strict: true });
    db.exec("PRAGMA busy_timeout = 5000");
    testConnections.set(h.ctx, db);
  }
  return db;
}

function closeTestSqlite(ctx: AppContext): void {
  testConnections.get(ctx)?.close();
  testConnections.delete(ctx);
}
