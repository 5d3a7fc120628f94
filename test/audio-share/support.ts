import { createHash } from "node:crypto";
import { expect } from "bun:test";
import { buildApp } from "../../src/app";
import { closeContext, openContextAsync } from "../../src/bootstrap";
import { loadConfig } from "../../src/config";
import type { Clock } from "../../src/clock";
import type { AppContext } from "../../src/context";
import { createLogger } from "../../src/log";
import { openTestApp, type TestApp } from "../support/app";
import { FakeClock, seededRng } from "../support/clock";

export const API = "/api/public/audio-share-links";
export const BROWSER_UA = "Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/126.0 Safari/537.36";

/** A test app whose policy allows allowed.example (and *.cdn.example for files) besides the base host. */
export const AUDIO_ENV = { AUDIO_SHARE_ALLOWED_HOSTS: "allowed.example,*.cdn.example", AUDIO_SHARE_DENIED_HOSTS: "evil.test" };

export function audioApp(env: Record<string, string> = {}): Promise<TestApp> {
  return openTestApp({ env: { ...AUDIO_ENV, ...env } });
}

/** Another instance over the same database as `h` (its SQLite file, or its PostgreSQL database): its own context. */
export interface Instance {
  ctx: AppContext;
  clock: FakeClock;
  request(path: string, init?: RequestInit): Promise<Response>;
  json<T = Record<string, any>>(path: string, init?: RequestInit): Promise<{ status: number; body: T }>;
  close(): Promise<void>;
}

export async function anotherInstance(h: TestApp, opts: { env?: Record<string, string>; clock?: FakeClock; seed?: string } = {}): Promise<Instance> {
  const clock = opts.clock ?? new FakeClock(h.clock.now().toISOString());
  const shared = h.ctx.config.database.engine === "postgres" ? { DATABASE_URL: h.ctx.config.database.url!, DATABASE_POOL_MAX: "4" } : {};
  const config = loadConfig({
    NODE_ENV: "test",
    HERALD_DB_PATH: h.ctx.config.database.engine === "postgres" ? `${h.dir}/unused.db` : h.ctx.config.dbPath,
    LOG_LEVEL: "silent",
    JOBS_ENABLED: "0",
    PUBLIC_BASE_URL: h.ctx.config.publicBaseUrl,
    ...shared,
    ...AUDIO_ENV,
    ...opts.env,
  });
  const ctx = await openContextAsync(config, { clock: clock as Clock, rng: seededRng(opts.seed ?? "another-instance"), log: createLogger("silent") });
  const app = buildApp(ctx);
  const request = (path: string, init?: RequestInit) => app.handle(new Request(`http://localhost${path}`, init));
  return {
    ctx,
    clock,
    request,
    async json(path, init) {
      const res = await request(path, init);
      return { status: res.status, body: JSON.parse(await res.text()) };
    },
    async close() {
      await ctx.requestLog.stop();
      await ctx.jobs.stop();
      await closeContext(ctx);
    },
  };
}

export const q = (params: Record<string, string | number>) =>
  new URLSearchParams(Object.entries(params).map(([k, v]): [string, string] => [k, String(v)])).toString();

/** GET the builder; asserts nothing. */
export const build = (h: TestApp, params: Record<string, string | number>) => h.json(`${API}?${q(params)}`);

/** A short link through the public API; returns the build body. */
export async function shortLink(h: TestApp, params: Record<string, string | number> = {}) {
  const r = await build(h, { track_url: "/tracks/42", use_short: 1, ...params });
  expect(r.status).toBe(200);
  return r.body as { short_code: string; short_url: string; token: string | null; expires_at: string; destination_url: string };
}

/** The checksum header must be the SHA-256 of the exact bytes received. */
export async function expectChecksum(res: Response): Promise<any> {
  const text = await res.text();
  expect(res.headers.get("x-audio-share-checksum")).toBe(createHash("sha256").update(text).digest("hex"));
  return JSON.parse(text);
}

export const jsonPost = (body: unknown, headers: Record<string, string> = {}): RequestInit => ({
  method: "POST",
  headers: { "content-type": "application/json", ...headers },
  body: typeof body === "string" ? body : JSON.stringify(body),
});
