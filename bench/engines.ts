// Where a benchmark's herald runs (issue 28): `--engine sqlite` (default: one `herald serve` over a SQLite file) or
// `--engine postgres --instances N` (N separate `herald serve` processes over one database on a throwaway
// PostgreSQL cluster, Debian's package as the tests start it: test/support/postgres.ts). What every benchmark
// shares lives here: the engine option, the cluster, a fresh database per deployment, starting and stopping the
// instances, spreading wrk's load over them, seeding large tables the fast way on each engine, and the topology
// line the report prints.
//
// On PostgreSQL (issue 49) the cluster is durable by default — on disk with PostgreSQL's own durability settings, as
// production commits (`--fsync on`); `--fsync off` is the tests' cluster (tmpfs, fsync off). `--latency-ms X` puts
// the database X ms of round trip away: every service under test (herald, a benchmark's bare floor) reaches it
// through bench/delay-proxy.ts (a child process holding each chunk X/2 ms each way), whose real added round trip is
// measured once the cluster is up and printed in the topology line; the harness's own loading and checks go direct.
// `--pool N` sets DATABASE_POOL_MAX for every instance (herald's default 10).
//
// The spread: ONE wrk whose threads connect round-robin to the instances (wrk's Lua `setup(thread)` sets
// `thread.addr`: thread i → instance i mod N), so the latency figures come from one histogram over every request
// and no proxy process sits between client and servers on the same cores. wrk's threads are raised to a multiple
// of N for that (each thread gets --connections ÷ threads connections).
import { Database } from "bun:sqlite";
import { mkdirSync, readdirSync, readFileSync } from "node:fs";
import { cpus } from "node:os";
import { join } from "node:path";
import { SQL } from "bun";
import { PostgresStore } from "../src/db/postgres-engine";
import type { Store } from "../src/db/port";
import { SqliteStore } from "../src/db/sqlite-engine";
import { withDatabase } from "../test/support/engine";
import { startCluster, type TestCluster } from "../test/support/postgres";
import { children, serverPids } from "./children";
import { measureAddedRtt, startDelayProxy, type AddedRtt, type DelayProxy, type ProxyStats } from "./delay-proxy";
import {
  measure,
  progress,
  runHeraldCli,
  startHerald,
  startHeraldLike,
  tempDir,
  UsageError,
  type BenchOptions,
  type CaseResult,
  type HeraldLaunch,
  type RunningServer,
} from "./support";

export type EngineName = "sqlite" | "postgres";

/** Every instance on one database must seal and open secrets with the same master key. */
const MASTER_KEY = "ab".repeat(32);
/** DATABASE_POOL_MAX as herald defaults it; printed in the topology. */
const POOL_MAX = 10;

/** `--engine`: sqlite (the default) or postgres. */
export function engineOption(v: string | undefined): EngineName {
  if (v === undefined || v === "sqlite" || v === "postgres") return v ?? "sqlite";
  throw new UsageError(`--engine must be sqlite or postgres, got ${v}`);
}

/**
 * The PostgreSQL engine's own options (bench/run.ts `--fsync`, `--latency-ms`, `--pool`). They ride on the options
 * object a benchmark gets, beside BenchOptions' fields, and reach openEngine() with it.
 */
export interface PostgresEngineOptions {
  /** on (default): a durable cluster on disk; off: the tests' cluster (tmpfs, fsync off). */
  fsync?: "on" | "off";
  /** Added round trip between every service under test and PostgreSQL, through bench/delay-proxy.ts (default 0: direct). */
  latencyMs?: number;
  /** DATABASE_POOL_MAX of each herald instance (default herald's own, 10); a bare floor gets instances × this. */
  pool?: number;
}
export type EngineOptions = Pick<BenchOptions, "engine" | "instances"> & PostgresEngineOptions;

/** `--fsync`: on or off. */
export function fsyncOption(v: string): "on" | "off" {
  if (v === "on" || v === "off") return v;
  throw new UsageError(`--fsync must be on or off, got ${JSON.stringify(v)}`);
}

/** The most `--latency-ms` takes: 20 ms of added round trip. */
export const MAX_LATENCY_MS = 20;

/** `--latency-ms`: a number of milliseconds from 0 to 20 (fractions allowed, e.g. 0.5). */
export function latencyOption(v: string): number {
  const n = Number(v);
  if (!/^\d+(\.\d+)?$/.test(v) || n > MAX_LATENCY_MS)
    throw new UsageError(`--latency-ms must be a number of milliseconds from 0 to ${MAX_LATENCY_MS}, got ${JSON.stringify(v)}`);
  return n;
}

/** The engine and instance count a run asked for; SQLite has one writer process, so one instance. */
export function topologyOf(opts: EngineOptions): { engine: EngineName; instances: number } {
  const engine = opts.engine ?? "sqlite";
  const instances = opts.instances ?? 1;
  if (engine === "sqlite" && instances !== 1) throw new UsageError("--instances applies to --engine postgres only: SQLite is one herald process over one file");
  if (engine === "sqlite") {
    const given = [opts.fsync !== undefined && "--fsync", opts.latencyMs !== undefined && "--latency-ms", opts.pool !== undefined && "--pool"].filter(Boolean);
    if (given.length)
      throw new UsageError(
        `${given.join(", ")} appl${given.length === 1 ? "ies" : "y"} to --engine postgres only (SQLite is one file in herald's own process)`,
      );
  }
  return { engine, instances };
}

/** A database for one deployment of herald (its instances, its CLI commands, the harness's own reads and seeds). */
export interface BenchDatabase {
  readonly kind: EngineName;
  /** Herald's folder: the SQLite file `herald.db` (HERALD_DB_PATH) or, on PostgreSQL, one folder per instance's log. */
  readonly dir: string;
  /** The PostgreSQL database URL (null on SQLite), direct: for the harness's own loading and checks. */
  readonly url: string | null;
  /**
   * The URL a service under test uses (herald's DATABASE_URL, a bare floor's): through the delay proxy when the run
   * has --latency-ms, else `url`.
   */
  readonly serviceUrl: string | null;
  /** What herald needs on top of the harness's environment (bench/processes.ts heraldEnv) to reach this database. */
  readonly env: Record<string, string>;
  /** The harness's own connection through the storage port (checks after a run, small seeds); opened on first use. */
  store(): Promise<Store>;
  /** Closes the harness's connection, if open. */
  close(): Promise<void>;
}

/** The engine of one run: nothing to start for SQLite; a throwaway cluster for PostgreSQL, stopped by close(). */
export interface BenchEngine {
  readonly kind: EngineName;
  /** Herald instances per deployment (1 on SQLite). */
  readonly instances: number;
  /** PostgreSQL: each instance's DATABASE_POOL_MAX (null on SQLite). */
  readonly poolMax: number | null;
  /** PostgreSQL: whether the cluster commits durably (fsync on, on disk); null on SQLite. */
  readonly durable: boolean | null;
  /** PostgreSQL with --latency-ms: the delay proxy and what it was measured to add; null otherwise. */
  readonly latency: {
    readonly proxy: DelayProxy;
    /** What it adds per round trip holding requestedMs / 2 each way. */
    readonly added: AddedRtt;
    /** What its hop alone adds (no hold). */
    readonly hop: AddedRtt;
    /** Its holds during the `added` measurement (null if it did not answer). */
    readonly holds: ProxyStats | null;
    readonly requestedMs: number;
  } | null;
  /** A fresh, empty database whose herald files go in `dir`. */
  database(dir: string): Promise<BenchDatabase>;
  /** The topology line for the report: the engine, the instances, and `how` the load reached them. */
  topology(how: string): string;
  close(): Promise<void>;
}

/** The SQLite file `<dir>/herald.db` as a BenchDatabase (also what a floor beside a PostgreSQL run uses). */
export function sqliteDatabase(dir: string): BenchDatabase {
  const file = join(dir, "herald.db");
  let store: SqliteStore | null = null;
  return {
    kind: "sqlite",
    dir,
    url: null,
    serviceUrl: null,
    env: {},
    async store() {
      if (!store) {
        const db = new Database(file, { create: true, strict: true });
        db.exec("PRAGMA journal_mode = WAL; PRAGMA synchronous = NORMAL; PRAGMA busy_timeout = 5000");
        store = new SqliteStore(db, { path: file, close: () => db.close() });
      }
      return store;
    },
    async close() {
      await store?.close();
      store = null;
    },
  };
}

/**
 * PostgreSQL's server processes on `port`: the postmaster (its command line names the port) and its children
 * (backends, writers), read from /proc so that wrk runs count their CPU as the server's.
 */
function postgresPidsOn(port: string): () => number[] {
  let postmaster: number | null = null;
  const procs = () => readdirSync("/proc").filter((d) => /^\d+$/.test(d));
  return () => {
    try {
      if (postmaster === null) {
        for (const pid of procs()) {
          const cmd = readFileSync(`/proc/${pid}/cmdline`, "utf8").split("\0");
          if (cmd[0]?.endsWith("postgres") && cmd.includes(port) && cmd[cmd.indexOf(port) - 1] === "-p") postmaster = Number(pid);
        }
        if (postmaster === null) return [];
      }
      const out = [postmaster];
      for (const pid of procs()) {
        const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
        if (Number(stat.slice(stat.lastIndexOf(")") + 2).split(" ")[1]) === postmaster) out.push(Number(pid));
      }
      return out;
    } catch {
      return [];
    }
  };
}

/**
 * The delay proxy in front of `cluster` for `latencyMs` of added round trip (latencyMs / 2 held each way), and what it
 * really adds, measured: first with no hold (the proxy's own hop: two more socket hand-offs), then with the holds.
 */
async function startLatency(cluster: TestCluster, latencyMs: number): Promise<NonNullable<BenchEngine["latency"]>> {
  const proxy = await startDelayProxy(Number(new URL(cluster.url).port), 0, (proc) => children.add(proc));
  try {
    const via = proxy.via(cluster.url);
    progress("measuring the delay proxy's own hop: 1,000 sequential SELECT 1 direct and through it, no hold");
    const hop = await measureAddedRtt(cluster.url, via, 1000);
    proxy.setDelay(latencyMs / 2);
    await proxy.stats(); // answered after the delay command, which the proxy reads first
    proxy.reset();
    progress(`measuring the delay proxy holding ${latencyMs / 2} ms each way: 2,000 sequential SELECT 1 direct and through it`);
    const added = await measureAddedRtt(cluster.url, via, 2000);
    const holds = await proxy.stats();
    return { proxy, added, hop, holds, requestedMs: latencyMs };
  } catch (err) {
    await proxy.stop();
    children.delete(proxy.proc);
    throw err;
  }
}

async function postgresEngine(instances: number, opts: PostgresEngineOptions): Promise<BenchEngine> {
  const durable = (opts.fsync ?? "on") === "on";
  const poolMax = opts.pool ?? POOL_MAX;
  const cluster: TestCluster = await startCluster({ durable });
  let latency: BenchEngine["latency"] = null;
  const admin = new PostgresStore({ url: cluster.url, poolMax: 1 });
  let version: string;
  try {
    version = await admin.version();
    if (opts.latencyMs) latency = await startLatency(cluster, opts.latencyMs);
  } catch (err) {
    await admin.close();
    cluster.stop();
    throw err;
  }
  const pids = postgresPidsOn(new URL(cluster.url).port);
  serverPids.add(pids);
  let made = 0;
  const clusterText = durable
    ? "on disk in the temp dir, fsync on: PostgreSQL's default durability, each commit waits for its WAL flush"
    : "on tmpfs, fsync off, as the tests run it";
  const latencyText = latency
    ? `; herald and the bare floor reach it through bench/delay-proxy.ts (--latency-ms ${latency.requestedMs}: each chunk held ${latency.proxy.delayMs} ms each way), measured to add ${latency.added.added_p50_ms} ms per round trip (median of ${latency.added.queries.toLocaleString("en-US")} sequential SELECT 1: ${latency.added.direct_p50_ms} ms direct, ${latency.added.proxied_p50_ms} ms through it; mean +${latency.added.added_mean_ms} ms; holds meanwhile p50 ${latency.holds?.hold_p50_ms ?? "?"} ms, mean ${latency.holds?.hold_mean_ms ?? "?"} ms each way; the proxy's own hop, with no hold, adds ${latency.hop.added_p50_ms} ms; the rest is wake-ups of processes idle during the holds)`
    : "";
  return {
    kind: "postgres",
    instances,
    poolMax,
    durable,
    latency,
    async database(dir) {
      const name = `bench_${++made}`;
      await admin.run(`CREATE DATABASE ${name}`);
      const url = withDatabase(cluster.url, name);
      const serviceUrl = latency ? latency.proxy.via(url) : url;
      let store: PostgresStore | null = null;
      return {
        kind: "postgres",
        dir,
        url,
        serviceUrl,
        env: { DATABASE_URL: serviceUrl, HERALD_MASTER_KEY: MASTER_KEY, ...(opts.pool === undefined ? {} : { DATABASE_POOL_MAX: String(poolMax) }) },
        async store() {
          store ??= new PostgresStore({ url, poolMax: 2, statementTimeoutMs: 600_000 });
          return store;
        },
        async close() {
          await store?.close();
          store = null;
        },
      };
    },
    topology: (how) =>
      `${version} (a throwaway cluster on 127.0.0.1 from Debian's package, ${clusterText})${latencyText}, ${instances} herald instance${instances === 1 ? "" : "s"} on one database (DATABASE_POOL_MAX ${poolMax} each); ${how}; herald, PostgreSQL${latency ? ", the delay proxy" : ""} and the load generator share ${cpus().length} cores (PostgreSQL's processes${latency ? " and the proxy's" : ""} count in the server CPU per request)`,
    async close() {
      serverPids.delete(pids);
      try {
        if (latency) {
          await latency.proxy.stop();
          children.delete(latency.proxy.proc);
        }
        await admin.close();
      } finally {
        cluster.stop();
      }
    },
  };
}

/** The engine `opts` ask for (see topologyOf); close() it when the benchmark ends. */
export async function openEngine(opts: EngineOptions): Promise<BenchEngine> {
  const { engine, instances } = topologyOf(opts);
  if (engine === "postgres") return postgresEngine(instances, opts);
  return {
    kind: "sqlite",
    instances: 1,
    poolMax: null,
    durable: null,
    latency: null,
    database: async (dir) => sqliteDatabase(dir),
    topology: (how) => `SQLite (one file, WAL), one herald instance; ${how}; herald and the load generator share ${cpus().length} cores`,
    async close() {},
  };
}

// ---------------------------------------------------------------------------------------------- instances

/** Each instance's folder (its log; on SQLite the database's own folder), made if missing. */
function instanceHome(db: BenchDatabase, i: number): string {
  const home = db.kind === "sqlite" ? db.dir : join(db.dir, `i${i}`);
  mkdirSync(home, { recursive: true });
  return home;
}
const instanceEnv = (db: BenchDatabase, i: number, extraEnv: Record<string, string>) => ({ ...db.env, HERALD_INSTANCE_ID: `bench-${i}`, ...extraEnv });

/** `count` `herald serve` processes over `db`, started one after the other (each migrates nothing new). */
export async function startHeralds(db: BenchDatabase, launch: HeraldLaunch, count: number, extraEnv: Record<string, string> = {}): Promise<RunningServer[]> {
  const servers: RunningServer[] = [];
  try {
    for (let i = 0; i < count; i++) servers.push(await startHerald(instanceHome(db, i), launch, instanceEnv(db, i, extraEnv)));
  } catch (err) {
    await stopAll(servers);
    throw err;
  }
  return servers;
}

/** `count` processes of another server script (a benchmark's comparison server) over `db`, as startHeralds. */
export async function startHeraldLikes(
  name: string,
  script: string,
  db: BenchDatabase,
  readyPath: string,
  count: number,
  extraEnv: Record<string, string> = {},
): Promise<RunningServer[]> {
  const servers: RunningServer[] = [];
  try {
    for (let i = 0; i < count; i++) servers.push(await startHeraldLike(name, script, instanceHome(db, i), readyPath, instanceEnv(db, i, extraEnv)));
  } catch (err) {
    await stopAll(servers);
    throw err;
  }
  return servers;
}

/** Stops every server (SIGTERM, then SIGKILL after the grace); one note per server with its exit. */
export async function stopAll(servers: RunningServer[], label = "herald"): Promise<string[]> {
  const notes: string[] = [];
  for (const [i, s] of servers.entries()) {
    const started = Date.now();
    const code = await s.stop();
    const who = servers.length > 1 ? `${label} instance ${i}` : label;
    notes.push(`${who} stopped on SIGTERM in ${Date.now() - started} ms, exit ${code === null ? "KILLED after grace" : code}`);
  }
  return notes;
}

/** A herald CLI command (migrate, keys create, admin-token create, jobs run …) against `db`; resolves to its stdout. */
/**
 * PostgreSQL connections each herald instance holds (pg_stat_activity by application_name, `herald <instance id>`):
 * at rest before `during`, the most seen while it runs (sampled every 100 ms), and at rest after it. Null on SQLite.
 */
export async function connectionsPerInstance(db: BenchDatabase, during: Promise<unknown>): Promise<string | null> {
  if (db.kind !== "postgres") return null;
  const store = await db.store();
  const count = async () =>
    new Map(
      (
        await store.all<{ app: string; n: number }>(
          "SELECT application_name AS app, count(*) AS n FROM pg_stat_activity WHERE datname = current_database() AND application_name LIKE 'herald %' GROUP BY 1",
        )
      ).map((r) => [r.app, r.n]),
    );
  const before = await count();
  const peak = new Map<string, number>();
  let done = false;
  during.finally(() => (done = true)).catch(() => {});
  for (let i = 0; i < 6000 && !done; i++) {
    for (const [app, n] of await count()) peak.set(app, Math.max(peak.get(app) ?? 0, n));
    await Bun.sleep(100);
  }
  await during.catch(() => {});
  const after = await count();
  const apps = [...new Set([...before.keys(), ...peak.keys(), ...after.keys()])].sort();
  return `PostgreSQL connections per instance (at rest before → most under load → at rest after): ${apps
    .map((a) => `${a.replace(/^herald /, "")} ${before.get(a) ?? 0} → ${peak.get(a) ?? 0} → ${after.get(a) ?? 0}`)
    .join("; ")}`;
}

export function heraldCli(db: BenchDatabase, launch: HeraldLaunch, args: string[], extraEnv: Record<string, string> = {}, timeoutMs?: number): Promise<string> {
  return runHeraldCli(db.dir, launch, args, { ...db.env, ...extraEnv }, timeoutMs);
}

// ---------------------------------------------------------------------------------------------- the spread

/** wrk's threads for a spread over `instances`: at least --threads, a multiple of the instances, at most --connections. */
export function spreadThreads(threads: number, connections: number, instances: number): number {
  if (instances === 1) return threads;
  return Math.min(Math.max(connections, 1), Math.ceil(Math.max(threads, instances) / instances) * instances);
}

/**
 * A Lua `setup` for wrk: thread i connects to server ((i - 1) mod N) + 1 and gets `tid` = i (a request
 * generator's per-thread name). With one server it only sets `tid`.
 */
export function setupLua(servers: RunningServer[]): string {
  const ports = servers.map((s) => `"${new URL(s.baseUrl).port}"`).join(", ");
  const host = new URL(servers[0]!.baseUrl).hostname;
  return servers.length === 1
    ? `local threads = 0
function setup(thread) threads = threads + 1; thread:set("tid", threads) end
`
    : `local ports = { ${ports} }
local threads = 0
function setup(thread)
  threads = threads + 1
  thread.addr = wrk.lookup("${host}", ports[((threads - 1) % #ports) + 1])[1]
  thread:set("tid", threads)
end
`;
}

let scripts: { path: string } | null = null;
let scriptCount = 0;

/** Writes a wrk Lua script into the harness's temp folder (removed on exit); its path. */
export async function wrkScript(text: string): Promise<string> {
  scripts ??= tempDir("wrk");
  const path = join(scripts.path, `s${++scriptCount}.lua`);
  await Bun.write(path, text);
  return path;
}

/**
 * wrk against `path` on every server at once, the load spread round-robin over them (see the top of this file);
 * with one server exactly bench/support.ts measure(). `body`: Lua for the request (an `init`/`request` pair that
 * may read the thread's `tid`), appended to the spread's setup.
 */
export async function measureOn(
  label: string,
  servers: RunningServer[],
  path: string,
  opts: BenchOptions,
  headers?: () => Record<string, string>,
  body?: string,
): Promise<CaseResult> {
  const url = servers[0]!.baseUrl + path;
  if (servers.length === 1 && !body) return measure(label, url, opts, headers);
  const script = await wrkScript(setupLua(servers) + (body ?? ""));
  const threads = spreadThreads(opts.threads, opts.connections, servers.length);
  return measure(label, url, { ...opts, threads }, headers, script);
}

/** The spread, for the report's topology line. */
export const spreadNote = (instances: number, opts: BenchOptions) =>
  instances === 1
    ? "one wrk against the one instance"
    : `one wrk with ${spreadThreads(opts.threads, opts.connections, instances)} threads spread round-robin over the ${instances} instances (thread i → instance i mod ${instances}; wrk's own latency histogram over all of them)`;

// ---------------------------------------------------------------------------------------------- bulk seeding

export type Cell = string | number | bigint | null;

/**
 * Large seeded histories, the fastest way each engine takes them: on SQLite prepared INSERTs in one transaction per
 * chunk (bun:sqlite, synchronous=OFF); on PostgreSQL one `COPY … FROM STDIN` per table through Bun's SQL client, the
 * rows sent as text after each chunk. A benchmark's generator adds rows the same way for both, so both engines get
 * the same history.
 */
export interface BulkLoad {
  readonly kind: EngineName;
  /** A table's row adder (values in `columns` order). */
  table(name: string, columns: readonly string[]): (...values: Cell[]) => void;
  /** Runs `fn`, which adds rows, as one unit: a SQLite transaction; on PostgreSQL what it added is then sent. */
  chunk(fn: () => void): Promise<void>;
  /** Ends every table's load: on PostgreSQL the COPYs complete (their rows become visible); on SQLite a no-op. */
  commit(): Promise<void>;
  /** SQL on the load's connection after commit() (several statements allowed, no parameters). */
  exec(sql: string): Promise<void>;
  /** Table statistics, as a database in service has them: SQLite ANALYZE; PostgreSQL VACUUM (ANALYZE), which also sets the visibility map. */
  analyze(): Promise<void>;
  close(): Promise<void>;
}

function sqliteLoad(file: string): BulkLoad {
  const db = new Database(file);
  db.exec("PRAGMA journal_mode = WAL; PRAGMA synchronous = OFF; PRAGMA cache_size = -400000");
  return {
    kind: "sqlite",
    table(name, columns) {
      const insert = db.prepare(`INSERT INTO ${name} (${columns.join(", ")}) VALUES (${columns.map(() => "?").join(", ")})`);
      return (...values) => void insert.run(...values);
    },
    async chunk(fn) {
      db.transaction(fn)();
    },
    async commit() {},
    async exec(sql) {
      db.exec(sql);
    },
    async analyze() {
      db.exec("ANALYZE");
    },
    async close() {
      db.exec("PRAGMA wal_checkpoint(TRUNCATE)");
      db.close();
    },
  };
}

/** COPY's text format: \N for NULL; backslash, tab, newline and carriage return escaped. */
function copyText(v: Cell): string {
  if (v === null) return "\\N";
  if (typeof v !== "string") return String(v);
  return /[\\\t\n\r]/.test(v) ? v.replace(/\\/g, "\\\\").replace(/\t/g, "\\t").replace(/\n/g, "\\n").replace(/\r/g, "\\r") : v;
}

function postgresLoad(url: string): BulkLoad {
  const sql = new SQL({ url, max: 8 });
  const tables: Array<{ writer: WritableStreamDefaultWriter<string | NodeJS.TypedArray | DataView | ArrayBufferLike>; buffered: string[] }> = [];
  const send = async () => {
    for (const t of tables) {
      if (t.buffered.length === 0) continue;
      const text = t.buffered.join("");
      t.buffered = [];
      await t.writer.write(text);
    }
  };
  return {
    kind: "postgres",
    table(name, columns) {
      const t = {
        writer: sql
          .unsafe(`COPY ${name} (${columns.join(", ")}) FROM STDIN`)
          .writable()
          .getWriter(),
        buffered: [] as string[],
      };
      tables.push(t);
      return (...values) => void t.buffered.push(`${values.map(copyText).join("\t")}\n`);
    },
    async chunk(fn) {
      fn();
      await send();
    },
    async commit() {
      await send();
      for (const t of tables.splice(0)) await t.writer.close();
    },
    async exec(text) {
      await sql.unsafe(text).simple();
    },
    async analyze() {
      await sql.unsafe("VACUUM (ANALYZE)").simple();
    },
    async close() {
      for (const t of tables.splice(0)) await t.writer.abort().catch(() => {});
      await sql.close();
    },
  };
}

/** A bulk load into `db` (migrated first: the tables must exist). */
export function bulkLoad(db: BenchDatabase): BulkLoad {
  return db.kind === "postgres" ? postgresLoad(db.url!) : sqliteLoad(join(db.dir, "herald.db"));
}
