// Every child process (servers, wrk) and temp dir the harness makes, so that a harness that dies (Ctrl-C, an
// exception) takes them along.
import { rmSync } from "node:fs";
import type { Subprocess } from "bun";

export const children = new Set<Subprocess>();
export const tempDirs = new Set<string>();
/**
 * Processes that serve the measured requests but are not the harness's children: PostgreSQL's server processes
 * (bench/engines.ts). Each entry lists the current pids; wrk runs count their CPU as the servers', not as other work.
 */
export const serverPids = new Set<() => number[]>();
process.on("exit", () => {
  for (const c of children) c.kill("SIGKILL");
  for (const d of tempDirs) rmSync(d, { recursive: true, force: true });
});
for (const sig of ["SIGINT", "SIGTERM"] as const) {
  process.on(sig, () => {
    for (const c of children) c.kill("SIGKILL");
    process.exit(130);
  });
}
