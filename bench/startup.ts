// startup: how long `herald serve` takes from exec to answering, as a deploy script or a newcomer meets it (#54):
//   exec → first 200 from GET /healthz, and exec → first 200 from a signed GET /api/partner/capabilities,
// from an empty folder (the first start: migrations, a development master key, the first-start credentials, whose
// live key the signed call uses once the banner shows it) and from a database with --rows request_log rows (default
// 1,000,000, spread over the last 29 days, put in with one SQL statement; a preparation start first levels the
// hourly rollups with them, as a database in service has them, and makes the key). Each is also timed to the
// "herald listening" line. Source (bun src/main.ts) and dist/herald when it exists (--source / --binary: one of
// them); --starts N starts per case (default 5), the cases alternating round after round so that noise is shared.
// Target (#54): ≤ 1 s for both on an idle machine.
import { Database } from "bun:sqlite";
import { copyFileSync, existsSync, readFileSync } from "node:fs";
import { join } from "node:path";
import type { Subprocess } from "bun";
import { signRequest } from "../src/client/sign";
import { openDatabase } from "../src/db/client";
import { migrate } from "../src/db/migrate";
import { children } from "./children";
import { freePort, heraldEnv, HOST, median, progress, ROOT, tempDir, type Benchmark, type BenchReport } from "./support";

const POLL_MS = 5; // fine enough for starts of a few hundred ms, without the polling taking a core
const START_TIMEOUT_MS = 60_000;
const SIGNED_ROUTE = "/api/partner/capabilities";

interface Launch {
  label: string;
  cmd: string[];
}

interface Timing {
  healthz_ms: number;
  signed_ms: number;
  listening_ms: number;
  /** CPU time (user + system, every thread) the process had used when /healthz first answered 200. */
  cpu_ms: number | null;
}

/** A process's CPU time so far (user + system, in clock ticks of 10 ms), from /proc; null off Linux. */
function cpuMs(pid: number): number | null {
  try {
    const fields = readFileSync(`/proc/${pid}/stat`, "utf8").split(") ")[1]!.split(" ");
    return (Number(fields[11]) + Number(fields[12])) * 10;
  } catch {
    return null;
  }
}

interface Key {
  keyId: string;
  secret: string;
}

/** The live key of a first-start banner, once it has been printed. */
function bannerKey(stdout: string): Key | null {
  const keyId = /key id : (hk_live_\S+)/.exec(stdout)?.[1];
  const secret = /secret : (\S+)/.exec(stdout)?.[1];
  return keyId && secret ? { keyId, secret } : null;
}

/** One start of `launch` in `dir` over `dbPath`: its three times, with the process stopped after. */
async function timeStart(launch: Launch, dir: string, dbPath: string, key: Key | null): Promise<Timing & { key: Key }> {
  const port = await freePort();
  const base = `http://${HOST}:${port}`;
  // LOG_LEVEL=info for the "herald listening" line; no request is logged per line at that level (the request log is a table).
  const env = heraldEnv(dir, port, { HERALD_DB_PATH: dbPath, LOG_LEVEL: "info", BOOTSTRAP_CREDENTIALS: "1" });
  const t0 = performance.now();
  const proc = Bun.spawn([...launch.cmd, "serve"], { cwd: dir, env, stdin: "ignore", stdout: "pipe", stderr: "pipe" });
  children.add(proc);
  let stdout = "";
  let listeningMs: number | null = null;
  const reading = (async () => {
    const decoder = new TextDecoder();
    for await (const chunk of proc.stdout) {
      stdout += decoder.decode(chunk, { stream: true });
      if (listeningMs === null && stdout.includes('"msg":"herald listening"')) listeningMs = performance.now() - t0;
    }
  })();
  const stderr = new Response(proc.stderr).text();
  try {
    const deadline = t0 + START_TIMEOUT_MS;
    let healthzMs: number | null = null;
    let cpu: number | null = null;
    for (let i = 0; healthzMs === null; i++) {
      if (proc.exitCode !== null || performance.now() > deadline || i > START_TIMEOUT_MS / POLL_MS)
        throw new Error(
          `${launch.label}: /healthz never answered 200 (exit ${proc.exitCode}): ${(await Promise.race([stderr, Bun.sleep(100).then(() => "")])).slice(0, 300)}`,
        );
      try {
        const res = await fetch(`${base}/healthz`, { signal: AbortSignal.timeout(5_000) });
        await res.arrayBuffer();
        if (res.status === 200) {
          healthzMs = performance.now() - t0;
          cpu = cpuMs(proc.pid);
        }
      } catch {
        // not listening yet
      }
      if (healthzMs === null) await Bun.sleep(POLL_MS);
    }
    let signedMs: number | null = null;
    let used = key;
    for (let i = 0; signedMs === null; i++) {
      if (performance.now() > deadline || i > START_TIMEOUT_MS / POLL_MS) throw new Error(`${launch.label}: the signed call never answered 200`);
      used ??= bannerKey(stdout);
      if (used) {
        const signed = signRequest({ keyId: used.keyId, secret: used.secret, method: "GET", target: SIGNED_ROUTE, body: "", nonce: null });
        const res = await fetch(base + SIGNED_ROUTE, { headers: { ...signed.headers }, signal: AbortSignal.timeout(5_000) });
        await res.arrayBuffer();
        if (res.status === 200) signedMs = performance.now() - t0;
        else if (res.status !== 503) throw new Error(`${launch.label}: the signed call answered ${res.status}`);
      }
      if (signedMs === null) await Bun.sleep(POLL_MS);
    }
    for (let i = 0; listeningMs === null && i < START_TIMEOUT_MS / POLL_MS; i++) await Bun.sleep(POLL_MS);
    if (listeningMs === null) throw new Error(`${launch.label}: no "herald listening" line`);
    return { healthz_ms: round(healthzMs), signed_ms: round(signedMs), listening_ms: round(listeningMs), cpu_ms: cpu, key: used! };
  } finally {
    await stop(proc);
    await reading.catch(() => {});
  }
}

const round = (ms: number) => Number(ms.toFixed(1));

async function stop(proc: Subprocess): Promise<void> {
  proc.kill("SIGINT");
  const timedOut = await Promise.race([proc.exited.then(() => false), Bun.sleep(15_000).then(() => true)]);
  if (timedOut) proc.kill("SIGKILL");
  await proc.exited;
  children.delete(proc);
}

/** `rows` request_log rows, 2.5 s apart and ending now, in one INSERT … SELECT over a recursive counter. */
function seedRequestLog(path: string, rows: number): number {
  const h = openDatabase(path);
  migrate(h);
  h.sqlite.close();
  const db = new Database(path, { readwrite: true });
  const t0 = performance.now();
  const firstEpoch = Date.now() / 1000 - rows * 2.5;
  db.run(
    `WITH RECURSIVE n(i) AS (SELECT 0 UNION ALL SELECT i + 1 FROM n WHERE i < ?)
     INSERT INTO request_log (at, method, route, status, latency_us, key_ref, client_ip, request_id, error_code)
     SELECT strftime('%Y-%m-%dT%H:%M:%fZ', ? + i * 2.5, 'unixepoch'), 'GET', '/api/partner/users',
            CASE WHEN i % 17 = 0 THEN 404 ELSE 200 END, 300 + i % 900, NULL, '203.0.113.7', 'req_' || i, NULL FROM n`,
    [rows - 1, firstEpoch],
  );
  db.run("PRAGMA wal_checkpoint(TRUNCATE)");
  db.close();
  return performance.now() - t0;
}

/** A preparation start over the seeded file: the rollup catch-up runs to its end, and the banner gives the key. */
async function prepare(launch: Launch, dir: string, dbPath: string): Promise<Key> {
  const port = await freePort();
  const proc = Bun.spawn([...launch.cmd, "serve"], {
    cwd: dir,
    env: heraldEnv(dir, port, { HERALD_DB_PATH: dbPath, LOG_LEVEL: "info", BOOTSTRAP_CREDENTIALS: "1" }),
    stdin: "ignore",
    stdout: "pipe",
    stderr: "ignore",
  });
  children.add(proc);
  let stdout = "";
  const reading = (async () => {
    const decoder = new TextDecoder();
    for await (const chunk of proc.stdout) stdout += decoder.decode(chunk, { stream: true });
  })();
  try {
    for (let i = 0; i < 600 && !stdout.includes('"msg":"request-log rollups caught up"'); i++) {
      if (proc.exitCode !== null) throw new Error(`the preparation start exited ${proc.exitCode}`);
      await Bun.sleep(500);
    }
    if (!stdout.includes("rollups caught up")) throw new Error("the preparation start did not level the rollups within 300 s");
    const key = bannerKey(stdout);
    if (!key) throw new Error("the preparation start printed no first-start key");
    return key;
  } finally {
    await stop(proc);
    await reading.catch(() => {});
  }
}

const fmt = (xs: number[]) =>
  xs.length === 0 ? "-" : `${median(xs).toFixed(0)} ms${xs.length > 1 ? ` (${Math.min(...xs).toFixed(0)}–${Math.max(...xs).toFixed(0)})` : ""}`;

const startup: Benchmark = {
  name: "startup",
  description: "exec → first 200 from /healthz and from a signed partner call, from an empty folder and over 1M request_log rows",
  async run(opts) {
    const starts = opts.starts ?? 5;
    const rows = opts.rows ?? 1_000_000;
    const binary = join(ROOT, "dist", "herald");
    const launches: Launch[] = [];
    if (opts.herald !== "binary") launches.push({ label: "source", cmd: [process.execPath, join(ROOT, "src", "main.ts")] });
    if (opts.herald !== "source" && existsSync(binary)) launches.push({ label: "dist/herald", cmd: [binary] });
    if (opts.herald === "binary" && launches.length === 0) throw new Error("--binary: dist/herald does not exist; build it with `npm run build`");
    const notes = [
      `each time from spawn: /healthz polled every ${POLL_MS} ms until 200; then the signed GET ${SIGNED_ROUTE} (the first start's live key, as soon as its banner is out) until 200; "listening" = the "herald listening" line on stdout`,
      `median of ${starts} starts per case (min–max); the cases alternate, round after round`,
      "CPU = the server's user + system time (all its threads, 10 ms ticks) when /healthz first answered: on a busy machine the wall times grow with the other work, this does much less, and it is close to what an idle machine's wall time would be",
      existsSync(binary) ? "dist/herald present" : "dist/herald absent: source only (npm run build for the binary)",
    ];
    const work = tempDir("startup");
    const seeded = join(work.path, "seeded.db");
    progress(`seeding ${rows.toLocaleString("en-US")} request_log rows`);
    const seedMs = seedRequestLog(seeded, rows);
    notes.push(`${rows.toLocaleString("en-US")} request_log rows seeded in ${(seedMs / 1000).toFixed(1)} s (one INSERT … SELECT)`);
    const errors: string[] = [];
    const cases = launches.flatMap((l) => [
      { launch: l, scenario: "empty folder", times: [] as Timing[], key: null as Key | null, db: "" },
      { launch: l, scenario: `${rows.toLocaleString("en-US")} request_log rows`, times: [] as Timing[], key: null as Key | null, db: "" },
    ]);
    try {
      for (const c of cases.filter((x) => x.scenario !== "empty folder")) {
        // Each launch over its own copy, so that neither leaves work (rows, rollups) for the other.
        c.db = join(work.path, `${c.launch.label.replace(/\W/g, "-")}.db`);
        copyFileSync(seeded, c.db);
        progress(`${c.launch.label}: preparation start over the seeded file (rollups, key)`);
        c.key = await prepare(c.launch, work.path, c.db);
      }
      for (let round = 1; round <= starts; round++) {
        for (const c of cases) {
          progress(`start ${round}/${starts}: ${c.launch.label}, ${c.scenario}`);
          const fresh = c.scenario === "empty folder" ? tempDir("startup-empty") : null;
          try {
            const dir = fresh?.path ?? work.path;
            const t = await timeStart(c.launch, dir, fresh ? join(dir, "data", "herald.db") : c.db, c.key);
            c.times.push({ healthz_ms: t.healthz_ms, signed_ms: t.signed_ms, listening_ms: t.listening_ms, cpu_ms: t.cpu_ms });
          } catch (err) {
            errors.push((err as Error).message);
          } finally {
            fresh?.remove();
          }
        }
      }
    } finally {
      work.remove();
    }
    const head = ["herald", "database", "→ /healthz 200", "→ signed 200", "→ listening line", "CPU used by the /healthz 200"];
    const body = cases.map((c) => [
      c.launch.label,
      c.scenario,
      fmt(c.times.map((t) => t.healthz_ms)),
      fmt(c.times.map((t) => t.signed_ms)),
      fmt(c.times.map((t) => t.listening_ms)),
      fmt(c.times.flatMap((t) => (t.cpu_ms === null ? [] : [t.cpu_ms]))),
    ]);
    const widths = head.map((h, i) => Math.max(h.length, ...body.map((r) => r[i]!.length)));
    const line = (cells: string[]) =>
      cells
        .map((x, i) => x.padEnd(widths[i]!))
        .join("  ")
        .trimEnd();
    const report: BenchReport & { starts: unknown } = {
      benchmark: "startup",
      description: startup.description,
      results: [],
      notes,
      summary: [`from exec (median of ${starts}, min–max):`, line(head), line(widths.map((w) => "-".repeat(w))), ...body.map(line)],
      errors,
      starts: cases.map((c) => ({
        herald: c.launch.label,
        database: c.scenario,
        healthz_median_ms: c.times.length ? median(c.times.map((t) => t.healthz_ms)) : null,
        signed_median_ms: c.times.length ? median(c.times.map((t) => t.signed_ms)) : null,
        times: c.times,
      })),
    };
    return report;
  },
};

export default startup;
