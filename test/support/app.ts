import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { buildApp, type HeraldApp } from "../../src/app";
import { openContext } from "../../src/bootstrap";
import { loadConfig } from "../../src/config";
import type { AppContext } from "../../src/context";
import type { Clock, Rng } from "../../src/clock";
import { createLogger, type Logger } from "../../src/log";
import { FakeClock, seededRng } from "./clock";

export interface TestApp {
  ctx: AppContext;
  app: HeraldApp;
  clock: FakeClock;
  dir: string;
  /** `app.handle` on a path (`/healthz?x=1`) with a real host, as Elysia needs. */
  request(path: string, init?: RequestInit): Promise<Response>;
  json<T = Record<string, any>>(path: string, init?: RequestInit): Promise<{ status: number; body: T; headers: Headers }>;
  close(): void;
}

export interface TestAppOptions {
  env?: Record<string, string>;
  clock?: FakeClock;
  rng?: Rng;
  log?: Logger;
}

/** A real app over a fresh SQLite file in its own temp dir, migrations applied, jobs not started. */
export function createTestApp(opts: TestAppOptions = {}): TestApp {
  const dir = mkdtempSync(join(tmpdir(), "herald-test-"));
  const config = loadConfig({
    NODE_ENV: "test",
    HERALD_DB_PATH: join(dir, "herald.db"),
    LOG_LEVEL: "silent",
    JOBS_ENABLED: "0",
    PUBLIC_BASE_URL: "http://localhost:3000",
    ...opts.env,
  });
  const clock = opts.clock ?? new FakeClock();
  const ctx = openContext(config, { clock: clock as Clock, rng: opts.rng ?? seededRng(), log: opts.log ?? createLogger("silent") });
  const app = buildApp(ctx);
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
      ctx.requestLog.stop();
      void ctx.jobs.stop();
      ctx.db.close();
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

export const jsonInit = (method: string, body: unknown, headers: Record<string, string> = {}): RequestInit => ({
  method,
  headers: { "content-type": "application/json", ...headers },
  body: typeof body === "string" ? body : JSON.stringify(body),
});
