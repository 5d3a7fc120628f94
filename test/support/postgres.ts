// A throwaway PostgreSQL cluster for tests, from Debian's `postgresql` package (initdb and pg_ctl on PATH, or
// under /usr/lib/postgresql/<v>/bin): a fresh data directory in a temp dir, listening on 127.0.0.1 only, trust
// authentication, no fsync (a test cluster is thrown away), its files in /dev/shm where it has room (creating and
// dropping a database checkpoints: on tmpfs ~30 ms, on this VM's disk 150–300 ms), else in the temp dir. As root, the cluster runs as the `postgres` user
// (PostgreSQL refuses root). `startCluster({ durable: true })` (the benchmarks' default, bench/engines.ts) is a
// cluster that commits as a production one does: its files on disk (os.tmpdir(), never tmpfs, where fsync costs
// nothing) and PostgreSQL's own durability settings (fsync, synchronous_commit and full_page_writes on).
// `startCluster({ standbyOf: primary })` is a streaming standby of another test cluster (pg_basebackup -R), promoted
// with `promote()` (test/postgres/failover.test.ts). When the package is absent the caller's test file is reported
// skipped (test/support/skipped.ts); CI installs it.
import { spawn, spawnSync } from "node:child_process";
import { chmodSync, existsSync, mkdtempSync, readdirSync, readFileSync, realpathSync, rmSync, statfsSync } from "node:fs";
import { createServer } from "node:net";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { reportSkipped } from "./skipped";

function binDir(): string | null {
  for (const dir of ["/usr/local/bin", "/usr/bin"]) if (existsSync(join(dir, "initdb")) && existsSync(join(dir, "pg_ctl"))) return dir;
  const base = "/usr/lib/postgresql";
  if (!existsSync(base)) return null;
  for (const v of readdirSync(base).sort().reverse()) if (existsSync(join(base, v, "bin", "initdb"))) return join(base, v, "bin");
  return null;
}

/** Another program of the server's package: beside initdb, or where a link named initdb (in /usr/local/bin) points. */
const toolOf = (bin: string, name: string) => (existsSync(join(bin, name)) ? join(bin, name) : join(dirname(realpathSync(join(bin, "initdb"))), name));

export function postgresPresent(testFile: string): boolean {
  const present = binDir() !== null;
  if (!present) reportSkipped(testFile, "PostgreSQL's initdb/pg_ctl are absent (apt-get install -y postgresql)");
  return present;
}

/**
 * Whether /dev/shm can hold test clusters: at least 2 GiB free. A container's is often 64 MB, which a cluster and its
 * WAL outgrow within minutes — PostgreSQL then stops with "No space left on device" and every later test fails.
 */
function roomyShm(): boolean {
  try {
    const fs = statfsSync("/dev/shm");
    return fs.bavail * fs.bsize >= 2 * 1024 ** 3;
  } catch {
    return false;
  }
}

async function freePort(): Promise<number> {
  return await new Promise((resolve, reject) => {
    const s = createServer();
    s.once("error", reject);
    s.listen(0, "127.0.0.1", () => {
      const port = (s.address() as { port: number }).port;
      s.close(() => resolve(port));
    });
  });
}

export interface TestCluster {
  url: string;
  /** Its port on 127.0.0.1. */
  port: number;
  /** The server's log file (removed with the cluster). */
  log: string;
  stop(): void;
  /**
   * Sends `signal` to the postmaster and every process it started (SIGSTOP freezes the whole server, as a stalled
   * host or a network partition looks to a client; SIGCONT thaws it; SIGKILL ends it as a crashed host would, no
   * shutdown of any kind). Returns how many processes got it.
   */
  signalAll(signal: "SIGSTOP" | "SIGCONT" | "SIGKILL"): number;
  /** Whether the postmaster is still running. */
  alive(): boolean;
  /** Ends a standby's recovery and waits until it takes writes (`pg_ctl promote -w`). */
  promote(): void;
}

/**
 * A detached watchdog that shuts the cluster down (SIGQUIT, PostgreSQL's immediate shutdown) and removes its
 * directory once this process is gone, however it ended: a test run killed by a timeout or by hand never runs its
 * exit handlers, and its cluster would otherwise keep running (and holding memory) for good.
 */
function watchOwner(root: string, data: string): void {
  const script = `while kill -0 ${process.pid} 2>/dev/null; do sleep 2; done
[ -f '${data}/postmaster.pid' ] && kill -QUIT "$(head -1 '${data}/postmaster.pid')" 2>/dev/null
sleep 2; rm -rf '${root}'`;
  spawn("sh", ["-c", script], { detached: true, stdio: "ignore" }).unref();
}

export interface ClusterOptions {
  /**
   * On disk (os.tmpdir()) with PostgreSQL's default durability: every commit waits for its WAL flush, as in
   * production. Default false: a test cluster, on tmpfs where it has room, with fsync, synchronous_commit and
   * full_page_writes off.
   */
  durable?: boolean;
  /** Server settings (`-c name=value`) after the defaults above, which they override (`synchronous_commit: "on"`). */
  settings?: Record<string, string>;
  /**
   * A hot standby streaming from this running test cluster instead of a new one: its files copied with
   * `pg_basebackup -R` (so it follows the primary until `promote()`), the primary's settings files with them.
   */
  standbyOf?: TestCluster;
}

export async function startCluster(options: ClusterOptions = {}): Promise<TestCluster> {
  const bin = binDir();
  if (!bin) throw new Error("PostgreSQL is not installed");
  const durable = options.durable === true;
  const shm = roomyShm();
  const root = mkdtempSync(join(shm && !durable ? "/dev/shm" : tmpdir(), "herald-pg-"));
  chmodSync(root, 0o777);
  const data = join(root, "data");
  const asRoot = process.getuid?.() === 0;
  const run = (args: string[]) => {
    const cmd = asRoot ? ["su", "postgres", "-s", "/bin/sh", "-c", args.map((a) => `'${a.replaceAll("'", "'\\''")}'`).join(" ")] : args;
    const r = spawnSync(cmd[0]!, cmd.slice(1), { encoding: "utf8", timeout: 60_000 });
    if (r.status !== 0) throw new Error(`${args[0]} failed (${r.status}): ${r.stderr || r.stdout}`);
  };
  const port = await freePort();
  // Watched from the start: a copy or an initdb that fails leaves nothing behind either.
  watchOwner(root, data);
  const primary = options.standbyOf;
  if (primary) {
    // -R writes standby.signal and the primary's address; a fast checkpoint, as a spread one paces the writes of a
    // freshly filled cluster over minutes.
    const from = ["-h", "127.0.0.1", "-p", String(primary.port), "-U", "herald"];
    run([toolOf(bin, "pg_basebackup"), ...from, "-D", data, "-R", "-X", "stream", "--checkpoint=fast", "--no-sync"]);
  } else run([join(bin, "initdb"), "-D", data, "-A", "trust", "-U", "herald", "--no-sync", "-E", "UTF8"]);
  const settings = Object.entries(options.settings ?? {}).map(([k, v]) => ` -c ${k}=${v}`);
  run([
    join(bin, "pg_ctl"),
    "-D",
    data,
    "-w",
    "-t",
    "60",
    "-l",
    join(root, "log"),
    "-o",
    `-p ${port} -k ${root} -c listen_addresses=127.0.0.1` +
      (durable ? "" : " -c fsync=off -c synchronous_commit=off -c full_page_writes=off -c max_wal_size=256MB") +
      // Dynamic shared memory as files in the data directory, so removing the cluster's directory removes them: as
      // POSIX segments (/dev/shm/PostgreSQL.NNN) they outlived every cluster stopped immediately or killed. Without
      // room in /dev/shm (a container's is 64 MB) the directory is on disk. A durable cluster keeps the default.
      (shm && durable ? "" : " -c dynamic_shared_memory_type=mmap") +
      settings.join(""),
    "start",
  ]);
  const alive = () => {
    try {
      process.kill(Number(readFileSync(join(data, "postmaster.pid"), "utf8").split("\n")[0]), 0);
      return true;
    } catch {
      return false;
    }
  };
  return {
    url: `postgres://herald@127.0.0.1:${port}/postgres`,
    port,
    log: join(root, "log"),
    signalAll(signal) {
      // Every backend runs in a process group of its own (PostgreSQL's children call setsid), so each is signalled
      // by pid: the postmaster first on SIGSTOP (no backend is forked meanwhile), last on SIGCONT.
      const postmaster = Number(readFileSync(join(data, "postmaster.pid"), "utf8").split("\n")[0]);
      const children = spawnSync("pgrep", ["-P", String(postmaster)], { encoding: "utf8" })
        .stdout.split("\n")
        .filter(Boolean)
        .map(Number);
      let n = 0;
      for (const pid of signal === "SIGCONT" ? [...children, postmaster] : [postmaster, ...children]) {
        try {
          process.kill(pid, signal);
          n++;
        } catch {
          // a backend that exited between the listing and the signal
        }
      }
      return n;
    },
    alive,
    promote() {
      run([join(bin, "pg_ctl"), "-D", data, "-w", "-t", "60", "promote"]);
    },
    stop() {
      try {
        // A cluster whose postmaster was killed (signalAll("SIGKILL")) has nothing left to stop.
        if (alive()) run([join(bin, "pg_ctl"), "-D", data, "-m", "immediate", "-w", "stop"]);
      } finally {
        rmSync(root, { recursive: true, force: true });
      }
    },
  };
}
