import { expect } from "bun:test";
import { buildApp } from "../../src/app";
import { closeContext, openContextAsync } from "../../src/bootstrap";
import type { Clock } from "../../src/clock";
import { loadConfig } from "../../src/config";
import type { AppContext } from "../../src/context";
import { createLogger, type Logger } from "../../src/log";
import { openTestApp, type TestApp, type TestAppOptions } from "../support/app";
import { FakeClock, seededRng } from "../support/clock";
import { createKey, signedJson, type SignOptions, type TestKey } from "../support/partner";
import type { Scope } from "../../src/auth/scopes";

export const SANDBOX = "/api/partner/sandbox";

/**
 * A test app for sandbox routes: private webhook targets allowed (the receiver is on 127.0.0.1) and the sandbox
 * rate limit off unless a test sets it — most tests make more than 30 calls with one key. On the engine
 * HERALD_TEST_ENGINE names (SQLite by default, or PostgreSQL).
 */
export function sandboxApp(opts: TestAppOptions = {}): Promise<TestApp> {
  return openTestApp({ ...opts, env: { WEBHOOK_ALLOW_PRIVATE_TARGETS: "1", PARTNER_SANDBOX_RATE_LIMIT_PER_MINUTE: "0", ...opts.env } });
}

export const sandboxKey = async (h: TestApp, opts: { partner?: string; scopes?: readonly Scope[] } = {}) => await createKey(h, { ...opts, mode: "sandbox" });

/** A signed call to /api/partner/sandbox + path. */
export const sb = (h: TestApp, key: TestKey, method: string, path: string, opts: SignOptions = {}) => signedJson(h, key, method, `${SANDBOX}${path}`, opts);

/** Every sandbox answer names the mode, the profile and the source; mutations also live_side_effects_performed. */
export function expectSandboxFields(body: Record<string, unknown>, source: "sandbox_fixture" | "sandbox_state", mutation = false) {
  expect(body.success).toBe(true);
  expect(body.mode).toBe("sandbox");
  expect(body.fixture_profile).toBe("herald-sandbox-v1");
  expect(body.source).toBe(source);
  if (mutation) expect(body.live_side_effects_performed).toBe(false);
  else expect(body.live_side_effects_performed).toBeUndefined();
}

/** Rows through the storage port, so the assertions hold on either engine (`?` placeholders, portable SQL). */
export const rows = <T = Record<string, unknown>>(h: TestApp, sql: string, ...args: Array<string | number | null>): Promise<T[]> =>
  h.ctx.store.all<T>(sql, args);

export const countWhere = async (h: TestApp, table: string, where = "1 = 1", ...args: Array<string | number>): Promise<number> =>
  (await h.ctx.store.get<{ n: number }>(`SELECT count(*) AS n FROM ${table} WHERE ${where}`, args))!.n;

/** The fixture users (fx-alice, fx-bob, fx-carol) by external id. */
export async function fixtureUsers(h: TestApp, key: TestKey) {
  const r = await sb(h, key, "GET", "/users?include_wallets=1&limit=200");
  expect(r.status).toBe(200);
  const by = Object.fromEntries((r.body.users as Array<{ external_id: string; id: number }>).map((u) => [u.external_id, u]));
  return { alice: by["fx-alice"]!, bob: by["fx-bob"]!, carol: by["fx-carol"]! } as Record<"alice" | "bob" | "carol", any>;
}

/** Waits (bounded) for the dispatcher to settle: it is nudged after commits; runOnce joins a pass in flight. */
export async function drain(h: TestApp) {
  for (let i = 0; i < 5; i++) await h.ctx.dispatcher.runOnce();
}

/**
 * A second instance over the same database as `h` (its SQLite file, or its PostgreSQL database), with its own context,
 * store and pool, serving on a port of its own — as a second `herald serve` behind a load balancer. The same master
 * key (master.key beside HERALD_DB_PATH) and a clock at the same time, so `h`'s keys sign for it too.
 */
export async function anotherSandboxInstance(
  h: TestApp,
  opts: { env?: Record<string, string>; log?: Logger } = {},
): Promise<{ ctx: AppContext; base: string; close(): Promise<void> }> {
  const pg = h.ctx.config.database.engine === "postgres";
  const config = loadConfig({
    NODE_ENV: "test",
    HERALD_DB_PATH: h.ctx.config.dbPath,
    LOG_LEVEL: "silent",
    JOBS_ENABLED: "0",
    PUBLIC_BASE_URL: h.ctx.config.publicBaseUrl,
    WEBHOOK_ALLOW_PRIVATE_TARGETS: "1",
    PARTNER_SANDBOX_RATE_LIMIT_PER_MINUTE: "0",
    ...(pg ? { DATABASE_URL: h.ctx.config.database.url!, DATABASE_POOL_MAX: "4" } : {}),
    ...opts.env,
  });
  const clock = new FakeClock(h.clock.now().toISOString());
  const ctx = await openContextAsync(config, { clock: clock as Clock, rng: seededRng("second-instance"), log: opts.log ?? createLogger("silent") });
  const server = buildApp(ctx).listen({ hostname: "127.0.0.1", port: 0 });
  return {
    ctx,
    base: `http://127.0.0.1:${server.server!.port}`,
    async close() {
      await server.stop(true);
      await ctx.requestLog.stop();
      await closeContext(ctx);
    },
  };
}
