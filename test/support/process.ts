import { existsSync } from "node:fs";
import { join } from "node:path";

export const REPO_ROOT = join(import.meta.dir, "..", "..");
export const BUN = process.execPath;
export const MAIN = join(REPO_ROOT, "src", "main.ts");

/** Asks the OS for a free TCP port on 127.0.0.1. */
export function freePort(): number {
  const s = Bun.listen({ hostname: "127.0.0.1", port: 0, socket: { data() {} } });
  const port = s.port;
  s.stop(true);
  return port;
}

/** Debian's `haproxy` (apt-get install -y haproxy), for the tests that run the shipped deploy/haproxy*.cfg; null when absent. */
export function haproxyBinary(): string | null {
  for (const p of [Bun.which("haproxy"), "/usr/sbin/haproxy", "/usr/local/sbin/haproxy"]) if (p && existsSync(p)) return p;
  return null;
}

/** Polls until `url` answers 2xx; bounded in count and time. */
export async function waitForHttp(url: string, timeoutMs = 15_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  let lastError: unknown = null;
  for (let i = 0; i < 1000 && Date.now() < deadline; i++) {
    try {
      const res = await fetch(url);
      if (res.ok) return;
      lastError = new Error(`status ${res.status}`);
    } catch (err) {
      lastError = err;
    }
    await Bun.sleep(50);
  }
  throw new Error(`${url} did not become ready: ${String(lastError)}`);
}

/**
 * The built binary the HTTP-level suites run against when HERALD_TEST_TARGET names one (test/support/target.ts
 * reads the same variable); null when they run the source.
 */
export function targetBinary(value = process.env.HERALD_TEST_TARGET): string | null {
  if (!value || value === "app" || value === "source") return null;
  return value.startsWith("/") ? value : join(REPO_ROOT, value);
}

/** Starts `herald <args>` as a real child process (bun src/main.ts, or the target binary) with the given environment. */
export function spawnHerald(args: string[], env: Record<string, string>, cwd?: string) {
  const binary = targetBinary();
  return Bun.spawn(binary ? [binary, ...args] : [BUN, MAIN, ...args], {
    cwd: cwd ?? REPO_ROOT,
    env: { PATH: process.env.PATH ?? "", HOME: process.env.HOME ?? "/tmp", ...env },
    stdout: "pipe",
    stderr: "pipe",
  });
}

/** Resolves with the exit code, or null if the child is still running after `ms` (it is then killed). */
export async function exitWithin(proc: { exited: Promise<number>; kill(signal?: number | NodeJS.Signals): void }, ms: number): Promise<number | null> {
  let timer: ReturnType<typeof setTimeout> | undefined;
  const code = await Promise.race([
    proc.exited,
    new Promise<null>((resolve) => {
      timer = setTimeout(() => resolve(null), ms);
    }),
  ]);
  clearTimeout(timer);
  if (code === null) {
    proc.kill("SIGKILL");
    await proc.exited;
  }
  return code;
}
