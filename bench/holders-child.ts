// One measured run of the `holders` benchmark, in its own process so its peak RSS is its own:
//   bun bench/holders-child.ts floor <rpc-url> <mint>            drain the getProgramAccounts reply, parse nothing
//   bun bench/holders-child.ts snapshot <rpc-url> <mint> <dir>   herald's holders-snapshot job, end to end, over
//                                                                <dir>/herald.db, or DATABASE_URL when the harness sets it
// Prints one JSON line: wall time, what was read, and VmHWM (peak resident set) from /proc/self/status.
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { openContextAsync } from "../src/bootstrap";
import { scanBody } from "../src/solana/scan-call";
import { loadConfig } from "../src/config";
import { createLogger } from "../src/log";

const kb = (field: string): number => Number(new RegExp(`^${field}:\\s+(\\d+) kB`, "m").exec(readFileSync("/proc/self/status", "utf8"))?.[1] ?? -1);

async function floor(url: string, mint: string) {
  const t0 = performance.now();
  const res = await fetch(url, { method: "POST", headers: { "content-type": "application/json" }, body: scanBody(mint) });
  let bytes = 0;
  const reader = res.body!.getReader();
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    bytes += value.byteLength;
  }
  return { status: res.status, wall_ms: performance.now() - t0, bytes };
}

async function snapshot(url: string, mint: string, dir: string) {
  const config = loadConfig({
    NODE_ENV: "development",
    HERALD_DB_PATH: join(dir, "herald.db"),
    LOG_LEVEL: "warn",
    JOBS_ENABLED: "0",
    BOOTSTRAP_CREDENTIALS: "0",
    SOLANA_RPC_URLS: url,
    TOKEN_MINT: mint,
    SOLANA_RPC_RETRIES: "0",
    SOLANA_RPC_SCAN_TIMEOUT_MS: "900000",
    // On PostgreSQL (bench/engines.ts): the database and the master key its instances share.
    ...(process.env.DATABASE_URL ? { DATABASE_URL: process.env.DATABASE_URL, HERALD_MASTER_KEY: process.env.HERALD_MASTER_KEY ?? "" } : {}),
  });
  const ctx = await openContextAsync(config, { log: createLogger("warn", (line) => process.stderr.write(line + "\n")) });
  const rssBeforeKb = kb("VmRSS");
  const t0 = performance.now();
  const run = await ctx.jobs.runNow("holders-snapshot");
  const wall = performance.now() - t0;
  const row = await ctx.store.get("SELECT accounts_scanned, holders, total_raw, duration_ms AS scan_ms FROM chain_holder_snapshots ORDER BY id DESC LIMIT 1");
  await ctx.store.close();
  return { ok: run.ok, error: run.error, wall_ms: wall, rss_before_kb: rssBeforeKb, ...(row as object) };
}

const [mode, url, mint, dir] = process.argv.slice(2);
const out = mode === "floor" ? await floor(url!, mint!) : await snapshot(url!, mint!, dir!);
process.stdout.write(JSON.stringify({ mode, ...out, vm_hwm_kb: kb("VmHWM") }) + "\n");
process.exit(0);
