// Every child process (servers, wrk) and temp dir the harness makes, so that a harness that dies (Ctrl-C, an
// exception) takes them along.
import { rmSync } from "node:fs";
import type { Subprocess } from "bun";

export const children = new Set<Subprocess>();
export const tempDirs = new Set<string>();
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
