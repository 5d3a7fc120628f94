// Where the HTTP-level suites send their requests. Users run dist/herald, not the source the rest of the suite
// imports, so the suites that speak only HTTP (the OpenAPI fuzz, the README examples, the partner-auth attacks,
// the end-to-end pass over each domain in test/e2e) can run against any of three targets:
//
//   HERALD_TEST_TARGET unset     the app in this process, through app.handle (fast; the default of `npm test`)
//   HERALD_TEST_TARGET=source    `bun src/main.ts serve` as a real process on 127.0.0.1, started as `npm start` does
//   HERALD_TEST_TARGET=dist/herald (any path)   that built binary as a real process — what .ci/run does after the build
//
// Every target runs on the engine HERALD_TEST_ENGINE names (test/support/engine.ts). A served target is a real
// `herald serve` over a SQLite file in a temp dir, or with HERALD_TEST_ENGINE=postgres over a fresh database on the
// throwaway cluster (DATABASE_URL). The test keeps its own context over the same database (on SQLite, WAL lets two
// processes share the file) to make what an operator's CLI would make — partner keys, admin tokens — and to read
// effects (ledger rows, outbox events) through ctx.store. Its clock is the wall clock: a served process cannot be
// moved by a fake one, so the suites that run against every target never move time.
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import pkg from "../../package.json";
import { buildApp } from "../../src/app";
import { openContextAsync } from "../../src/bootstrap";
import { cryptoRng } from "../../src/clock";
import { loadConfig } from "../../src/config";
import { createLogger } from "../../src/log";
import { openTestApp, type TestApp, type TestAppOptions } from "./app";
import { FakeClock } from "./clock";
import { contractLogging, recordExchange } from "./contract-log";
import { BUN, exitWithin, freePort, MAIN, targetBinary } from "./process";
import { servedDatabase } from "./served-database";

export type TargetKind = "app" | "source" | "binary";

export interface Target {
  kind: TargetKind;
  /** The binary's absolute path when kind is "binary". */
  binary: string | null;
  /** "in-process app", "bun src/main.ts serve", or the binary's path: for test names and failure messages. */
  label: string;
}

/** Reads HERALD_TEST_TARGET once; a path that is not an executable file is an error, not a quiet fallback. */
export function targetFromEnv(value = process.env.HERALD_TEST_TARGET): Target {
  if (!value || value === "app") return { kind: "app", binary: null, label: "in-process app" };
  if (value === "source") return { kind: "source", binary: null, label: "bun src/main.ts serve" };
  const binary = targetBinary(value)!;
  if (!Bun.file(binary).size) throw new Error(`HERALD_TEST_TARGET=${value}: no binary at ${binary} (run npm run build first)`);
  return { kind: "binary", binary, label: binary };
}

export const TARGET = targetFromEnv();

/** A master key both processes share: secrets the test's context encrypts, the served process must open. */
const SHARED_MASTER_KEY = "a".repeat(64);

/** The runtime flags `npm start` passes to bun before the script ("bun --flag=x run src/main.ts serve"). */
export function startFlags(): string[] {
  const words = String((pkg.scripts as Record<string, string>).start ?? "").split(/\s+/);
  const flags: string[] = [];
  for (const w of words.slice(words.indexOf("bun") + 1)) {
    if (!w.startsWith("--")) break;
    flags.push(w);
  }
  return flags;
}

/** The command that starts `herald <args>` for a target: the binary itself, or bun with npm start's flags. */
export function heraldCommand(target: Target, args: string[]): string[] {
  return target.kind === "binary" ? [target.binary!, ...args] : [BUN, ...startFlags(), MAIN, ...args];
}

/** The wall clock behind the FakeClock interface; moving it is refused, since a served process could not follow. */
export class WallClock extends FakeClock {
  override now(): Date {
    return new Date();
  }
  override advance(): void {
    throw new Error("a served target runs on the wall clock: this test cannot move time (run it in-process only)");
  }
  override advanceSeconds(): void {
    this.advance();
  }
  override set(): void {
    this.advance();
  }
}

export interface TargetApp extends TestApp {
  target: Target;
  /** http://127.0.0.1:PORT for a served target; null in-process. */
  baseUrl: string | null;
  /** What the served process printed (the last 64 KiB), for failure messages. */
  output(): string;
  /** Stops the served process (SIGTERM, then SIGKILL after 15 s) and removes the temp dir and the database. */
  stop(): Promise<void>;
}

/**
 * A Herald to send HTTP requests to: the in-process app, or a served process (see the file's header), on the
 * test run's engine. `env` is the same for both; for a served target the test's context opens the same database
 * with the same settings.
 */
export async function startTarget(opts: TestAppOptions & { target?: Target } = {}): Promise<TargetApp> {
  const target = opts.target ?? TARGET;
  if (target.kind === "app") {
    const h = await openTestApp(opts);
    return { ...h, target, baseUrl: null, output: () => "", stop: async () => h.close() };
  }
  const dir = mkdtempSync(join(tmpdir(), "herald-target-"));
  const database = await servedDatabase(dir);
  const port = freePort();
  const env: Record<string, string> = {
    NODE_ENV: "test",
    ...database.env,
    HERALD_MASTER_KEY: SHARED_MASTER_KEY,
    LOG_LEVEL: "warn",
    JOBS_ENABLED: "0",
    BOOTSTRAP_CREDENTIALS: "0",
    PUBLIC_BASE_URL: `http://127.0.0.1:${port}`,
    ...opts.env,
    HOST: "127.0.0.1",
    PORT: String(port),
  };
  const proc = Bun.spawn(heraldCommand(target, ["serve"]), {
    cwd: dir,
    env: { PATH: process.env.PATH ?? "/usr/bin:/bin", HOME: dir, ...env },
    stdin: "ignore",
    stdout: "pipe",
    stderr: "pipe",
  });
  // Both streams are drained for the whole run (a full pipe would stall the server), keeping the tail only.
  let output = "";
  const keep = (chunk: Uint8Array) => {
    output = (output + new TextDecoder().decode(chunk)).slice(-65_536);
  };
  void (async () => {
    for await (const c of proc.stdout) keep(c);
  })();
  void (async () => {
    for await (const c of proc.stderr) keep(c);
  })();
  const baseUrl = `http://127.0.0.1:${port}`;
  try {
    await waitReady(proc, `${baseUrl}/readyz`, () => output);
  } catch (err) {
    proc.kill("SIGKILL");
    await proc.exited;
    await database.drop();
    rmSync(dir, { recursive: true, force: true });
    throw err;
  }
  // The test's own context: the served process has applied the migrations, and the shared master key passes its
  // check on either engine. On PostgreSQL a small pool of its own (the served process keeps its default one).
  const config = loadConfig({ ...env, ...(database.engine === "postgres" ? { DATABASE_POOL_MAX: "4" } : {}) });
  const clock = new WallClock();
  const ctx = await openContextAsync(config, { clock, rng: opts.rng ?? cryptoRng, log: opts.log ?? createLogger("silent") });
  const app = buildApp(ctx);
  const request = async (path: string, init?: RequestInit) => {
    const res = await fetch(`${baseUrl}${path}`, { redirect: "manual", ...init, signal: AbortSignal.timeout(30_000) });
    if (!contractLogging) return res;
    return recordExchange({ method: init?.method ?? "GET", url: `${baseUrl}${path}`, headers: new Headers(init?.headers) }, res);
  };
  let stopped = false;
  const stop = async () => {
    if (stopped) return;
    stopped = true;
    proc.kill("SIGTERM");
    await exitWithin(proc, 15_000);
    await ctx.requestLog.stop();
    void ctx.jobs.stop();
    await ctx.store.close();
    await database.drop();
    rmSync(dir, { recursive: true, force: true });
  };
  return {
    ctx,
    app,
    clock,
    dir,
    request,
    async json(path, init) {
      const res = await request(path, init);
      const text = await res.text();
      try {
        return { status: res.status, body: JSON.parse(text), headers: res.headers };
      } catch {
        throw new Error(`${path} answered ${res.status} with non-JSON: ${text.slice(0, 200)}`);
      }
    },
    close: () => void stop(),
    target,
    baseUrl,
    output: () => output,
    stop,
  };
}

/** Polls until `url` answers 200, failing early with the server's output if it exits; bounded in count and time. */
async function waitReady(proc: { exitCode: number | null }, url: string, output: () => string, timeoutMs = 30_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  let last = "no answer";
  for (let i = 0; i < 3000 && Date.now() < deadline; i++) {
    if (proc.exitCode !== null) throw new Error(`herald exited with ${proc.exitCode} before it was ready:\n${output().slice(-3000)}`);
    try {
      const res = await fetch(url, { signal: AbortSignal.timeout(2000) });
      await res.arrayBuffer();
      if (res.status === 200) return;
      last = `HTTP ${res.status}`;
    } catch (err) {
      last = (err as Error).message;
    }
    await Bun.sleep(20);
  }
  throw new Error(`${url} not ready after ${timeoutMs} ms (last: ${last}):\n${output().slice(-3000)}`);
}
