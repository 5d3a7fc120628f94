// The Litestream drill: herald runs under `litestream replicate -exec` with the repo's litestream.yml and a file
// replica; rows are written through the API and the CLI; SIGTERM goes to Litestream (which forwards it to herald
// and does a final sync); then the replica is restored and compared with the original, row for row.
import { Database } from "bun:sqlite";
import { afterAll, expect, test } from "bun:test";
import { existsSync, mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { BUN, MAIN, REPO_ROOT, freePort, spawnHerald, waitForHttp, exitWithin } from "../support/process";
import { reportOptional, testOn } from "../support/skipped";

const LITESTREAM = join(REPO_ROOT, "node_modules", "@flydotio", "litestream-linux-x64", "litestream");
const CONFIG = join(REPO_ROOT, "litestream.yml");
const hasLitestream = existsSync(LITESTREAM);
if (!hasLitestream) reportOptional("test/ops/litestream.test.ts", "litestream drill", `${LITESTREAM} is absent (npm install on linux-x64 provides it)`);

const REQUESTS = 50;
/** Health probes are kept out of request_log; this cheap public route is logged (and not rate-limited). */
const LOGGED_ROUTE = "/api/partner/errors.json";
const LATE_REQUESTS = 10;
const dirs: string[] = [];

afterAll(() => {
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
});

type Child = ReturnType<typeof Bun.spawn>;

/** The child processes of `pid` (Linux), so a killed Litestream does not leave herald running. */
function childPids(pid: number): number[] {
  try {
    return readFileSync(`/proc/${pid}/task/${pid}/children`, "utf8").trim().split(/\s+/).filter(Boolean).map(Number);
  } catch {
    return [];
  }
}

/**
 * SIGTERM to Litestream (it forwards the signal to herald) and its exit code; if it is still running after
 * `ms`, Litestream and its children (herald) are killed and the result is null.
 */
async function stopReplicate(proc: Child, ms: number): Promise<number | null> {
  if (proc.exitCode !== null) return proc.exitCode;
  const children = childPids(proc.pid);
  proc.kill("SIGTERM");
  const code = await exitWithin(proc, ms);
  if (code === null) {
    for (const pid of children) {
      try {
        process.kill(pid, "SIGKILL");
      } catch {
        // already gone
      }
    }
  }
  return code;
}

/** Bounded: a pipe held open by a stray grandchild must not hang the report. */
const settle = (text: Promise<string>, ms = 2_000) => Promise.race([text, Bun.sleep(ms).then(() => "(still open)")]);

/** Runs the litestream binary to completion (bounded); the npm wrapper would swallow its exit code. */
async function litestream(args: string[], env: Record<string, string>) {
  const proc = Bun.spawn([LITESTREAM, ...args], { cwd: REPO_ROOT, env, stdout: "pipe", stderr: "pipe" });
  const [stdout, stderr] = [new Response(proc.stdout).text(), new Response(proc.stderr).text()];
  const code = await exitWithin(proc, 60_000);
  return { code, output: `${await stdout}${await stderr}` };
}

interface Snapshot {
  integrity: unknown;
  requestLog: number;
  jobRuns: number;
  /** Every request_log and job_runs row, in id order: equal fingerprints mean equal contents. */
  fingerprint: string;
}

function snapshot(path: string): Snapshot {
  const db = new Database(path, { readonly: true });
  try {
    const count = (table: string) => (db.query(`SELECT count(*) AS n FROM ${table}`).get() as { n: number }).n;
    const rows = [
      ...db.query("SELECT id, at, method, route, status, request_id FROM request_log ORDER BY id").values(),
      ...db.query("SELECT id, name, started_at, finished_at, ok, trigger FROM job_runs ORDER BY id").values(),
    ];
    return {
      integrity: (db.query("PRAGMA integrity_check").get() as { integrity_check: string }).integrity_check,
      requestLog: count("request_log"),
      jobRuns: count("job_runs"),
      fingerprint: new Bun.CryptoHasher("sha256").update(JSON.stringify(rows)).digest("hex"),
    };
  } finally {
    db.close();
  }
}

/** request_log rows visible to a separate read-only connection (0 before the table exists). */
function committedRequestLogRows(path: string): number {
  if (!existsSync(path)) return 0;
  const db = new Database(path, { readonly: true });
  try {
    return (db.query("SELECT count(*) AS n FROM request_log").get() as { n: number }).n;
  } catch {
    return 0;
  } finally {
    db.close();
  }
}

/**
 * Litestream 0.3's file replica can lose a race with itself at shutdown: the replica's own sync loop and the
 * final sync on close both write the same WAL segment's `.tmp` file, and the loser exits 1 with "stat
 * …wal.lz4.tmp: no such file or directory". That is Litestream's, not herald's (herald has exited by then);
 * the drill is run once more, in a fresh directory, when and only when that is how it failed.
 */
const LITESTREAM_SHUTDOWN_RACE = /stat \S+\.wal\.lz4\.tmp: no such file or directory/;

// Litestream replicates the SQLite file: nothing of it runs on PostgreSQL (its own WAL archiving is the database's).
testOn("sqlite", "test/ops/litestream.test.ts", test.skipIf(!hasLitestream))(
  "litestream drill: replicate under -exec, SIGTERM, restore, identical rows",
  async () => {
    let stopped = await drill();
    if (stopped.code !== 0 && LITESTREAM_SHUTDOWN_RACE.test(stopped.output)) stopped = await drill();
    expect(stopped.code, stopped.output).toBe(0);
    expect(stopped.output).toContain("litestream shut down");
    await checkRestores(stopped.dir);
  },
  240_000,
);

/** Runs herald under Litestream, writes through the API and the CLI, SIGTERMs; Litestream's exit code and logs. */
async function drill(): Promise<{ dir: string; code: number | null; output: string }> {
  const dir = mkdtempSync(join(tmpdir(), "herald-litestream-"));
  dirs.push(dir);
  // litestream splits the -exec string on spaces: none of these paths may contain one.
  for (const p of [dir, BUN, MAIN]) expect(p).not.toContain(" ");
  const dbPath = join(dir, "herald.db");
  const replicaUrl = `file://${join(dir, "replica")}`;
  const port = freePort();
  const base = `http://127.0.0.1:${port}`;
  const env: Record<string, string> = {
    PATH: process.env.PATH ?? "",
    HOME: process.env.HOME ?? "/tmp",
    HERALD_DB_PATH: dbPath,
    LITESTREAM_REPLICA_URL: replicaUrl,
    PORT: String(port),
    HOST: "127.0.0.1",
    NODE_ENV: "test",
    LOG_LEVEL: "warn",
    JOBS_ENABLED: "0",
    REQUEST_LOG_FLUSH_MS: "100",
  };

  const proc = Bun.spawn([LITESTREAM, "replicate", "-config", CONFIG, "-exec", `${BUN} ${MAIN} serve`], {
    cwd: REPO_ROOT,
    env,
    stdout: "pipe",
    stderr: "pipe",
  });
  const stdoutText = new Response(proc.stdout).text();
  const stderrText = new Response(proc.stderr).text();
  const logs = async () => `stdout:\n${await settle(stdoutText)}\nstderr:\n${await settle(stderrText)}`;

  try {
    await waitForHttp(`${base}/readyz`, 30_000);
    // Litestream takes hold of the database on its first sync (about a second after start) and only then
    // replicates anything; a run shorter than that leaves no backup at all. Wait (bounded) for a generation.
    const deadline = Date.now() + 20_000;
    let generations = "";
    for (let i = 0; i < 100 && Date.now() < deadline; i++) {
      const out = await litestream(["generations", "-config", CONFIG, dbPath], env);
      generations = out.output;
      if (out.code === 0 && /^file\s+[0-9a-f]{16}\s/m.test(out.output)) break;
      await Bun.sleep(200);
    }
    expect(generations).toMatch(/^file\s+[0-9a-f]{16}\s/m);

    // Writes through the API: each request becomes a request_log row (batched every 100 ms).
    for (let i = 0; i < REQUESTS; i++) {
      const res = await fetch(`${base}${LOGGED_ROUTE}`, { signal: AbortSignal.timeout(10_000) });
      expect(res.status).toBe(200);
      await res.arrayBuffer();
    }
    // A second writer process beside the server: `herald jobs run` records a job_runs row.
    const cli = spawnHerald(["jobs", "run", "request-log-prune"], env);
    const cliOut = Promise.all([new Response(cli.stdout).text(), new Response(cli.stderr).text()]);
    const cliCode = await exitWithin(cli, 60_000);
    expect(cliCode, (await cliOut).join("\n")).toBe(0);

    // Wait (bounded) until the batched request-log rows are committed, as a read-only reader sees them.
    const flushDeadline = Date.now() + 15_000;
    let committed = 0;
    for (let i = 0; i < 300 && Date.now() < flushDeadline; i++) {
      committed = committedRequestLogRows(dbPath);
      if (committed >= REQUESTS) break;
      await Bun.sleep(50);
    }
    expect(committed).toBeGreaterThanOrEqual(REQUESTS);

    // Late writes right before the SIGTERM: only the shutdown flush and Litestream's final sync carry them.
    for (let i = 0; i < LATE_REQUESTS; i++) {
      const res = await fetch(`${base}${LOGGED_ROUTE}`, { signal: AbortSignal.timeout(10_000) });
      expect(res.status).toBe(200);
      await res.arrayBuffer();
    }
  } catch (err) {
    await stopReplicate(proc, 20_000);
    throw new Error(`${String(err)}\n${await logs()}`);
  }

  // Litestream forwards SIGTERM to herald, waits for it to exit, then syncs a last time and exits.
  const code = await stopReplicate(proc, 60_000);
  return { dir, code, output: await logs() };
}

/** The database and both restores of its replica (through the config, and from the URL) hold the same rows. */
async function checkRestores(dir: string) {
  const dbPath = join(dir, "herald.db");
  const replicaUrl = `file://${join(dir, "replica")}`;
  const env: Record<string, string> = {
    PATH: process.env.PATH ?? "",
    HOME: process.env.HOME ?? "/tmp",
    HERALD_DB_PATH: dbPath,
    LITESTREAM_REPLICA_URL: replicaUrl,
  };
  const original = snapshot(dbPath);
  expect(original.integrity).toBe("ok");
  expect(original.requestLog).toBeGreaterThanOrEqual(REQUESTS);
  expect(original.jobRuns).toBeGreaterThanOrEqual(1);

  // Restore the way the operations guide says: through the config (the DB path names the replica)...
  const restoredPath = join(dir, "restored.db");
  const viaConfig = await litestream(["restore", "-config", CONFIG, "-o", restoredPath, dbPath], env);
  expect(viaConfig.code, viaConfig.output).toBe(0);
  // ...and straight from the replica URL, with no config at all.
  const restoredUrlPath = join(dir, "restored-from-url.db");
  const viaUrl = await litestream(["restore", "-o", restoredUrlPath, replicaUrl], env);
  expect(viaUrl.code, viaUrl.output).toBe(0);

  for (const path of [restoredPath, restoredUrlPath]) {
    const restored = snapshot(path);
    expect(restored.integrity).toBe("ok");
    expect(restored.requestLog).toBe(original.requestLog);
    expect(restored.jobRuns).toBe(original.jobRuns);
    expect(restored.fingerprint).toBe(original.fingerprint);
  }
}
