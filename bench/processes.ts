// The servers under test as child processes on 127.0.0.1: free ports, temp dirs, start and wait until ready
// (bounded), Herald's launch (binary or source), its CLI, its metrics and database after a run, its log.
// Every child and temp dir is tracked so that a harness that dies takes them along.
import { Database } from "bun:sqlite";
import { existsSync, mkdirSync, mkdtempSync, readdirSync, rmSync, statSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { Subprocess } from "bun";
import { HOST, processJiffies, ROOT, UsageError, type BenchOptions } from "./support-core";
import { children, tempDirs } from "./children";

export interface RunningServer {
  name: string;
  baseUrl: string;
  proc: Subprocess;
  /** Where the child's stdout/stderr went. */
  logPath: string;
  /** SIGTERM, wait up to `graceMs`, then SIGKILL. Resolves to the exit code (null if it had to be killed). */
  stop(graceMs?: number): Promise<number | null>;
}

export async function freePort(): Promise<number> {
  const probe = Bun.serve({ hostname: HOST, port: 0, fetch: () => new Response() });
  const port = probe.port!;
  await probe.stop(true);
  return port;
}

export function tempDir(prefix: string): { path: string; remove(): void } {
  const path = mkdtempSync(join(tmpdir(), `herald-bench-${prefix}-`));
  tempDirs.add(path);
  return {
    path,
    remove: () => {
      rmSync(path, { recursive: true, force: true });
      tempDirs.delete(path);
    },
  };
}

/** Polls `url` until it answers 200: every 100 ms, at most `timeoutMs`; fails early if the child exits. */
async function waitReady(proc: Subprocess, url: string, timeoutMs: number, logPath: string): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  let exited = false;
  void proc.exited.then(() => (exited = true));
  let last = "no answer";
  for (let attempt = 0; attempt < Math.ceil(timeoutMs / 100) && Date.now() < deadline; attempt++) {
    if (exited) throw new Error(`server exited with ${proc.exitCode} before ${url} was ready; see ${logPath}:\n${await tail(logPath)}`);
    try {
      const res = await fetch(url, { signal: AbortSignal.timeout(1000) });
      last = `HTTP ${res.status}`;
      await res.arrayBuffer();
      if (res.status === 200) return;
    } catch (err) {
      last = (err as Error).message;
    }
    await Bun.sleep(100);
  }
  proc.kill("SIGKILL");
  throw new Error(`${url} not ready after ${timeoutMs} ms (last: ${last}); see ${logPath}:\n${await tail(logPath)}`);
}

async function tail(path: string, lines = 20): Promise<string> {
  try {
    return (await Bun.file(path).text()).split("\n").slice(-lines).join("\n");
  } catch {
    return "(no log)";
  }
}

export async function startChild(
  name: string,
  cmd: string[],
  env: Record<string, string>,
  readyPath: string,
  logPath: string,
  port: number,
): Promise<RunningServer> {
  const proc = Bun.spawn(cmd, { cwd: ROOT, env, stdin: "ignore", stdout: Bun.file(logPath), stderr: Bun.file(`${logPath}.err`) });
  children.add(proc);
  const baseUrl = `http://${HOST}:${port}`;
  await waitReady(proc, baseUrl + readyPath, 20_000, logPath);
  return {
    name,
    baseUrl,
    proc,
    logPath,
    async stop(graceMs = 15_000) {
      proc.kill("SIGTERM");
      const timedOut = await Promise.race([proc.exited.then(() => false), Bun.sleep(graceMs).then(() => true)]);
      if (timedOut) proc.kill("SIGKILL");
      await proc.exited;
      children.delete(proc);
      return timedOut ? null : proc.exitCode;
    },
  };
}

// A clean environment: nothing from the caller's shell (a stray HERALD_* or RATE_LIMIT_*) skews the run.
const baseEnv = (): Record<string, string> => ({ PATH: process.env.PATH ?? "/usr/bin:/bin", HOME: process.env.HOME ?? "/tmp", TMPDIR: tmpdir() });

/** The raw Bun.serve JSON endpoint (bench/baseline-server.ts) as a child process. */
export async function startBaseline(dir: string): Promise<RunningServer> {
  const port = await freePort();
  return startChild(
    "baseline",
    [process.execPath, join(ROOT, "bench", "baseline-server.ts")],
    { ...baseEnv(), PORT: String(port) },
    "/",
    join(dir, "baseline.log"),
    port,
  );
}

export interface HeraldLaunch {
  /** The herald command without its subcommand: `[dist/herald]` or `[bun, src/main.ts]`. */
  cmd: string[];
  /** "binary (dist/herald)" or "source (bun src/main.ts)", for the report. */
  mode: string;
  warning?: string;
}

const BINARY = join(ROOT, "dist", "herald");

/** Newest mtime under src/ (bounded walk), to tell whether dist/herald is older than the code. */
function newestSourceMtimeMs(): number {
  let newest = 0;
  const stack = [join(ROOT, "src")];
  for (let seen = 0; stack.length > 0 && seen < 10_000; seen++) {
    const dir = stack.pop()!;
    for (const entry of readdirSync(dir, { withFileTypes: true })) {
      const p = join(dir, entry.name);
      if (entry.isDirectory()) stack.push(p);
      else newest = Math.max(newest, statSync(p).mtimeMs);
    }
  }
  return newest;
}

export function heraldLaunch(choice: BenchOptions["herald"]): HeraldLaunch {
  const hasBinary = existsSync(BINARY);
  if (choice === "binary" && !hasBinary) throw new UsageError("--binary: dist/herald does not exist; build it with `npm run build`");
  if (choice === "source" || !hasBinary) return { cmd: [process.execPath, join(ROOT, "src", "main.ts")], mode: "source (bun src/main.ts)" };
  const stale = statSync(BINARY).mtimeMs < newestSourceMtimeMs();
  return {
    cmd: [BINARY],
    mode: "binary (dist/herald)",
    warning: stale ? "dist/herald is older than files in src/: it may not be the code you think; rebuild or pass --source" : undefined,
  };
}

/**
 * Herald as a child process over a fresh database in `dir`. NODE_ENV=development because production may refuse
 * to start without secrets; LOG_LEVEL=warn because a JSON line per request would measure stdout, not herald;
 * jobs off so that no cron work lands inside a measurement.
 */
export async function startHerald(dir: string, launch: HeraldLaunch, extraEnv: Record<string, string> = {}): Promise<RunningServer> {
  const port = await freePort();
  const server = await startChild("herald", [...launch.cmd, "serve"], heraldEnv(dir, port, extraEnv), "/readyz", join(dir, "herald.log"), port);
  // Ready is not idle: after it listens, `serve` builds the API documents in a worker (1–8 s of CPU on this machine),
  // starts the SQLite read worker and runs the request log's start-up catch-up. A benchmark that measured herald's
  // CPU from here counted that start-up as the first requests' cost (credit, one run each on a loaded machine: 184 µs
  // of CPU a credit with it inside the window, 1.58× the bare server's 116; after it, 157 against 137, 1.15×). So the
  // documents are asked for (the request waits for their build) and then the process must be idle.
  await (await fetch(`${server.baseUrl}/api/openapi.json`)).arrayBuffer();
  await idle(server.proc.pid);
  return server;
}

/** The environment herald runs with (see startHerald), over the database `<dir>/herald.db`. */
export function heraldEnv(dir: string, port: number, extraEnv: Record<string, string> = {}): Record<string, string> {
  return {
    ...baseEnv(),
    NODE_ENV: "development",
    PORT: String(port),
    HOST,
    HERALD_DB_PATH: join(dir, "herald.db"),
    LOG_LEVEL: "warn",
    JOBS_ENABLED: "0",
    ...extraEnv,
  };
}

/**
 * Another server script (e.g. bench/unsigned-server.ts) run by this Bun with herald's environment over
 * `<dir>/herald.db`, ready when `readyPath` answers 200.
 */
export async function startHeraldLike(
  name: string,
  script: string,
  dir: string,
  readyPath: string,
  extraEnv: Record<string, string> = {},
): Promise<RunningServer> {
  const port = await freePort();
  return startChild(name, [process.execPath, script], heraldEnv(dir, port, extraEnv), readyPath, join(dir, `${name}.log`), port);
}

/**
 * One herald CLI command (e.g. `keys create … --json`) over `<dir>/herald.db` with the server's environment;
 * resolves to its stdout. Killed after `timeoutMs`; a non-zero exit throws with its stderr.
 */
export async function runHeraldCli(
  dir: string,
  launch: HeraldLaunch,
  args: string[],
  extraEnv: Record<string, string> = {},
  timeoutMs = 30_000,
): Promise<string> {
  mkdirSync(dir, { recursive: true });
  const proc = Bun.spawn([...launch.cmd, ...args], { cwd: ROOT, env: heraldEnv(dir, 0, extraEnv), stdin: "ignore", stdout: "pipe", stderr: "pipe" });
  children.add(proc);
  const killer = setTimeout(() => proc.kill("SIGKILL"), timeoutMs);
  const [out, err, code] = await Promise.all([new Response(proc.stdout).text(), new Response(proc.stderr).text(), proc.exited]);
  clearTimeout(killer);
  children.delete(proc);
  if (code !== 0) throw new Error(`herald ${args.join(" ")} exited with ${code}: ${err.trim() || out.trim()}`);
  return out;
}

// ---------------------------------------------------------------------------------------------- after a run

/** A counter or gauge from herald's /metrics (needs METRICS_PUBLIC=1), or null. */
export async function readMetric(server: RunningServer, name: string, labels = ""): Promise<number | null> {
  try {
    const res = await fetch(`${server.baseUrl}/metrics`, { signal: AbortSignal.timeout(2000) });
    if (res.status !== 200) return null;
    const line = (await res.text()).split("\n").find((l) => l.startsWith(`${name}${labels} `));
    return line ? Number(line.split(" ").pop()) : null;
  } catch {
    return null;
  }
}

/** What a server left behind: request_log rows and the database size, read after it stopped. */
export function inspectDatabase(dbPath: string): { rows: number | null; bytes: number } {
  let bytes = 0;
  for (const suffix of ["", "-wal"]) {
    try {
      bytes += statSync(dbPath + suffix).size;
    } catch {
      // no WAL after a clean checkpoint
    }
  }
  try {
    const db = new Database(dbPath, { readonly: true });
    const row = db.query("SELECT count(*) AS n FROM request_log").get() as { n: number } | null;
    db.close();
    return { rows: row?.n ?? null, bytes };
  } catch {
    return { rows: null, bytes };
  }
}

/** The first 200 non-empty lines a child wrote to stdout and stderr. */
export async function logLines(logPath: string): Promise<string[]> {
  const text =
    (await Bun.file(logPath)
      .text()
      .catch(() => "")) +
    (await Bun.file(`${logPath}.err`)
      .text()
      .catch(() => ""));
  return text
    .split("\n")
    .filter((l) => l.trim() !== "")
    .slice(0, 200);
}

/**
 * "level: msg" ×count for the JSON log lines, the five most frequent. Other lines are only counted, never
 * echoed: herald's first start in development prints a live and a sandbox secret and an operator token as plain text.
 */
export function summariseLog(lines: string[]): string {
  const counts = new Map<string, number>();
  let plain = 0;
  for (const line of lines) {
    try {
      const parsed = JSON.parse(line) as { level?: string; msg?: string };
      const key = `${parsed.level ?? "?"}: ${parsed.msg ?? "(no msg)"}`;
      counts.set(key, (counts.get(key) ?? 0) + 1);
    } catch {
      plain++;
    }
  }
  const top = [...counts]
    .sort((a, b) => b[1] - a[1])
    .slice(0, 5)
    .map(([k, n]) => `"${k}" ×${n}`);
  if (plain) top.push(`${plain} plain-text line(s), not shown`);
  return top.join("; ");
}

/**
 * Resolves once `pid` used at most 2 jiffies (20 ms) of CPU in each of two 250 ms intervals in a row (under 8 % of a
 * core: an idle server's timers), or after 30 s at most.
 */
async function idle(pid: number): Promise<void> {
  let quiet = 0;
  let last = processJiffies(pid);
  for (let i = 0; i < 120 && quiet < 2; i++) {
    await Bun.sleep(250);
    const now = processJiffies(pid);
    quiet = now - last <= 2 ? quiet + 1 : 0;
    last = now;
  }
}
