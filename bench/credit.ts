// credit: signed salutes credits through the whole stack vs the same writes as a bare bun:sqlite loop, one run.
//   (a) herald (`herald serve`, a child process; on PostgreSQL --instances of them over one database, the load
//       generator's workers spread round-robin over them): POST /api/salutes/credit, each request with its own
//       nonce, Idempotency-Key and signature — signature check, nonce insert, idempotency claim, user check, ledger
//       row, balance upsert, outbox event and stored response, in one transaction — driven by bench/credit-load.ts
//       (a child process; wrk cannot sign per request) with --connections requests in flight, all pre-signed;
//   (b) bench/credit-sqlite.ts (a child process): the same transaction's statements in a loop, no HTTP;
//   (c) on PostgreSQL, bench/credit-postgres.ts (a child process): the same statements through Bun's SQL client,
//       --connections transactions in flight over the instances' pool connections together — the bare-PostgreSQL floor;
//   (d) a bare server over HTTP, driven by the same load generator as herald: bench/credit-sqlite-server.ts (Bun.serve
//       + bun:sqlite, (b)'s transaction, one commit per credit) and on PostgreSQL bench/credit-postgres-server.ts
//       (Bun.serve + Bun's SQL, (c)'s transaction) — the servers issues 50 and 49 measure herald against.
// The cases run one after the other, never together (the load generator and the server already share the cores).
// Users are seeded straight into partner_users before herald starts: this measures credits, not user creation.
// The partner rate limit is off (RATE_LIMIT_PARTNER_PER_MIN=0): 6000/min per key would throttle the run.
// Per case also (issue 49): database round trips and statements per credit and commits per second. Herald's come from
// its /metrics (herald_db_round_trips_total, herald_db_statements_total, herald_db_commits_total; summed over the
// instances) read just before and just after the measured credits — the warmup credits run as a load generator
// process of their own first, so the deltas hold the measured credits only (plus whatever herald's background jobs
// did meanwhile); a metric herald does not publish prints n/a. The bare PostgreSQL floor's are what its code sends
// (bench/credit-postgres.ts ROUND_TRIPS_PER_CREDIT: BEGIN, 7 statements, COMMIT, one after another), one commit
// per credit. On PostgreSQL --fsync, --latency-ms and --pool apply (bench/engines.ts); with --latency-ms the delay
// proxy's chunks during each measured run are a second, rougher count (at least one chunk each way per round trip).
import { join } from "node:path";
import type { Store } from "../src/db/port";
import type { LoadResult } from "./credit-load";
import { CREDIT_STATEMENTS, ROUND_TRIPS_PER_CREDIT } from "./credit-postgres";
import { freePort, startChild } from "./processes";
import type { ProxyStats } from "./delay-proxy";
import { connectionsPerInstance, heraldCli, openEngine, sqliteDatabase, startHeralds, stopAll, type BenchDatabase, type EngineOptions } from "./engines";
import {
  databaseCpu,
  databaseJiffiesSince,
  heraldLaunch,
  inspectDatabase,
  logLines,
  processJiffies,
  progress,
  readMetric,
  ROOT,
  summariseLog,
  tempDir,
  withRatios,
  type Benchmark,
  type CaseResult,
  type HeraldLaunch,
  type RunningServer,
} from "./support";

const USERS = 5;

/**
 * PostgreSQL's own CPU per credit over a run (its processes: postmaster, backends, writers), and the ceiling it sets
 * on the machine's cores: no server in front of that database passes cores ÷ it, even one that costs nothing.
 */
function databaseCpuNote(whose: string, jiffies: number, credits: number): string[] {
  if (jiffies <= 0 || credits <= 0) return [];
  const us = (jiffies * 10_000) / credits;
  const cores = navigator.hardwareConcurrency;
  return [
    `PostgreSQL used ${us.toFixed(1)} µs of CPU per credit during ${whose} credits (warmup included): on ${cores} cores, a ceiling of ${Math.round((cores * 1_000_000) / us).toLocaleString("en-US")} credits/s for its statements, before any CPU of the server in front of it`,
  ];
}
const WARMUP = 1_000;
const TARGET_PER_SEC = 3_000;
const HERALD = "herald POST /api/salutes/credit, signed";
const SQLITE = "bare bun:sqlite loop, same writes";
const POSTGRES = "bare PostgreSQL (Bun's SQL), same writes";
const SERVER = "naive bare server: Bun.serve + Bun's SQL, same writes";
const SQLITE_SERVER = "bare server: Bun.serve + bun:sqlite, same writes";
const SQLITE_SERVER_MINIMAL = "bare server: Bun.serve + bun:sqlite, ledger + outbox rows";
const SERVER_ENV = { RATE_LIMIT_PARTNER_PER_MIN: "0", METRICS_PUBLIC: "1" };

/** Herald's database counters (bench/credit.ts reads their deltas over the measured credits). */
const DB_METRICS = {
  roundTrips: "herald_db_round_trips_total",
  statements: "herald_db_statements_total",
  commits: "herald_db_commits_total",
} as const;
type DbCounters = Record<keyof typeof DB_METRICS, number | null>;

/** Each counter summed over the instances; null where any instance does not publish it. */
async function dbCounters(servers: RunningServer[]): Promise<DbCounters> {
  const out = {} as DbCounters;
  for (const [field, name] of Object.entries(DB_METRICS) as [keyof typeof DB_METRICS, string][]) {
    let sum: number | null = 0;
    for (const s of servers) {
      const v = await readMetric(s, name);
      sum = v === null || sum === null ? null : sum + v;
    }
    out[field] = sum;
  }
  return out;
}

/** A credit case's row, with its database work (null = n/a). */
interface CreditCase extends CaseResult {
  /** PostgreSQL round trips per measured credit. */
  db_round_trips_per_credit: number | null;
  /** Statements per measured credit (as herald counts them: BEGIN and COMMIT included). */
  db_statements_per_credit: number | null;
  /** Commits per second over the measured credits. */
  db_commits_per_sec: number | null;
  /** Where those three come from. */
  db_work_source: string;
}

const perCredit = (delta: number | null, n: number) => (delta === null || n <= 0 ? null : Number((delta / n).toFixed(2)));
const fmtWork = (v: number | null, digits: number) =>
  v === null ? "n/a" : v.toLocaleString("en-US", { minimumFractionDigits: digits, maximumFractionDigits: digits });

/** The proxy's holds and chunks over one measured run, for a note. */
function proxyNote(who: string, stats: ProxyStats | null, credits: number): string | null {
  if (!stats) return null;
  const hold = (v: number | null) => (v === null ? "?" : `${v} ms`);
  return `delay proxy during ${who}: ${stats.chunks.toLocaleString("en-US")} chunks, ${(stats.chunks / 2 / credits).toFixed(2)} each way per credit (at least one each way per round trip; the replies to pipelined statements may come in several), each held mean ${hold(stats.hold_mean_ms)}, p50 ${hold(stats.hold_p50_ms)}, p99 ${hold(stats.hold_p99_ms)} (10 µs buckets)`;
}

interface BenchKey {
  key_id: string;
  secret: string;
}

/** A live key with the credit scope (`herald keys create`), which also creates and migrates the database. */
async function createKey(db: BenchDatabase, launch: HeraldLaunch): Promise<BenchKey> {
  const out = await heraldCli(db, launch, ["keys", "create", "--partner", "Bench", "--mode", "live", "--scopes", "credit,read", "--json"], SERVER_ENV);
  const parsed = JSON.parse(out) as Partial<BenchKey>;
  if (typeof parsed.key_id !== "string" || typeof parsed.secret !== "string") throw new Error("herald keys create --json printed no key_id/secret");
  return { key_id: parsed.key_id, secret: parsed.secret };
}

/** The credited users, written through the storage port (either engine); their ids. */
async function seedUsers(store: Store): Promise<string[]> {
  const now = new Date().toISOString();
  const ids: string[] = [];
  for (let i = 0; i < USERS; i++) {
    const row = await store.get<{ id: number }>(
      "INSERT INTO partner_users (partner, mode, external_id, status, is_verified, created_at, updated_at) VALUES ('Bench', 'live', ?, 'active', 0, ?, ?) RETURNING id",
      [`bench-${i}`, now, now],
    );
    ids.push(String(row!.id));
  }
  return ids;
}

async function runChild<T>(cmd: string[], env: Record<string, string>, timeoutMs: number): Promise<T> {
  const proc = Bun.spawn(cmd, { cwd: ROOT, env: { PATH: process.env.PATH ?? "/usr/bin:/bin", ...env }, stdout: "pipe", stderr: "pipe" });
  const killer = setTimeout(() => proc.kill("SIGKILL"), timeoutMs);
  const [out, err, code] = await Promise.all([new Response(proc.stdout).text(), new Response(proc.stderr).text(), proc.exited]);
  clearTimeout(killer);
  if (code !== 0) throw new Error(`${cmd.slice(1).join(" ")} exited with ${code}: ${err.trim() || out.trim()}`);
  return JSON.parse(out.trim().split("\n").pop()!) as T;
}

/** `count` signed credits from bench/credit-load.ts (its own process) against `url`, spread over `users`. */
const creditLoad = (url: string, users: string[], count: number, connections: number, key: BenchKey) =>
  runChild<LoadResult>(
    [
      process.execPath,
      join(ROOT, "bench", "credit-load.ts"),
      "--url",
      url,
      "--users",
      users.join(","),
      "--credits",
      String(count),
      "--warmup",
      "0",
      "--connections",
      String(connections),
    ],
    { BENCH_KEY_ID: key.key_id, BENCH_SECRET: key.secret },
    280_000,
  );

/** What the servers left behind, read after they stopped: every accepted credit must be one row + one event. */
async function checkLedger(store: Store, expected: number): Promise<string[]> {
  const n = async (sql: string) => (await store.get<{ n: number }>(sql))!.n;
  const rows = await n("SELECT count(*) AS n FROM salutes_ledger");
  const events = await n("SELECT count(*) AS n FROM events WHERE event_type = 'salutes.credit'");
  const mismatched = await n(
    "SELECT count(*) AS n FROM salutes_balances b WHERE balance_minor <> (SELECT SUM(delta_minor) FROM salutes_ledger l WHERE l.user_id = b.user_id)",
  );
  const problems: string[] = [];
  if (rows !== expected) problems.push(`salutes_ledger has ${rows} rows; ${expected} credits were answered 200`);
  if (events !== rows) problems.push(`${events} salutes.credit events for ${rows} ledger rows`);
  if (mismatched) problems.push(`${mismatched} balances differ from the sum of their ledger`);
  return problems;
}

const caseOf = (
  label: string,
  url: string,
  r: { credits_per_sec: number; p50_ms: number; p99_ms: number; credits: number },
  non2xx = 0,
  errors = 0,
): CaseResult => ({
  case: label,
  url,
  requests_per_sec: r.credits_per_sec,
  p50_ms: r.p50_ms,
  p99_ms: r.p99_ms,
  non_2xx: non2xx,
  errors,
  requests: r.credits,
  ratio_vs_baseline: null,
});

/**
 * A bare server's credits over HTTP (bench/credit-sqlite-server.ts, bench/credit-postgres-server.ts): started as a
 * child on a free port, driven by the same load generator as herald (WARMUP, then `credits`), its CPU per credit and
 * PostgreSQL's (when one runs) in the notes, stopped with SIGTERM.
 */
async function bareServerCase(c: {
  name: string;
  script: string;
  args: string[];
  logPath: string;
  users: string[];
  key: BenchKey;
  credits: number;
  connections: number;
  notes: string[];
  errors: string[];
  work: Pick<CreditCase, "db_round_trips_per_credit" | "db_statements_per_credit" | "db_work_source">;
}): Promise<CreditCase> {
  const port = await freePort();
  progress(`${c.name}: ${WARMUP} warmup + ${c.credits} measured credits over HTTP, ${c.connections} in flight`);
  const server = await startChild(
    "bare-server",
    [process.execPath, join(ROOT, "bench", c.script), ...c.args, "--port", String(port)],
    { PATH: process.env.PATH ?? "/usr/bin:/bin" },
    "/",
    c.logPath,
    port,
  );
  try {
    const load = (count: number) => creditLoad(server.baseUrl, c.users, count, c.connections, c.key);
    const cpuBefore = processJiffies(server.proc.pid);
    const databaseBefore = databaseCpu();
    await load(WARMUP);
    const run = await load(c.credits);
    const jiffies = processJiffies(server.proc.pid) - cpuBefore;
    const cpuUs = jiffies > 0 ? Number(((jiffies * 10_000) / (c.credits + WARMUP)).toFixed(1)) : null;
    c.notes.push(...databaseCpuNote(`the ${c.name}'s`, databaseJiffiesSince(databaseBefore), c.credits + WARMUP));
    if (cpuUs !== null) c.notes.push(`the ${c.name} used ${cpuUs} µs of CPU per credit (warmup included)`);
    const failed = Object.entries(run.statuses).filter(([st]) => st !== "200");
    if (failed.length) c.errors.push(`${c.name}: not every credit answered 200: ${JSON.stringify(run.statuses)}; first: ${run.first_failure}`);
    return {
      ...caseOf(c.name, `${server.baseUrl}/api/salutes/credit`, run),
      server_cpu_us_per_request: cpuUs,
      db_commits_per_sec: run.credits_per_sec,
      ...c.work,
    };
  } finally {
    const code = await server.stop();
    if (code !== 0) c.notes.push(`the ${c.name} did not exit cleanly on SIGTERM: ${code === null ? "killed after the grace period" : `exit ${code}`}`);
  }
}

const credit: Benchmark = {
  name: "credit",
  description:
    "signed POST /api/salutes/credit through the full stack vs a bare bun:sqlite loop and a bare Bun.serve + bun:sqlite server (on PostgreSQL also bare PostgreSQL transactions and a naive Bun.serve + Bun's SQL server) doing the same writes",
  async run(options) {
    // --fsync, --latency-ms and --pool ride beside BenchOptions (bench/run.ts, bench/engines.ts).
    const opts = options as typeof options & EngineOptions;
    const credits = opts.credits ?? 20_000;
    const launch = heraldLaunch(opts.herald);
    const notes: string[] = [
      `herald ran from ${launch.mode}; ${credits.toLocaleString("en-US")} credits measured per case after ${WARMUP.toLocaleString("en-US")} warmup credits; ${opts.connections} requests in flight (--connections); ${USERS} users`,
      "the load generator (bench/credit-load.ts) is a separate Bun process on the same cores; every request was signed before the clock started",
      "--duration, --threads and --warmup do not apply to this benchmark (a fixed count of credits is measured)",
    ];
    if (launch.warning) notes.push(launch.warning);
    const errors: string[] = [];
    const results: CreditCase[] = [];
    const dir = tempDir("credit");
    const engine = await openEngine(opts);
    const databases: BenchDatabase[] = [];
    const bareRun = async (script: string, args: string[]) =>
      runChild<LoadResult>([process.execPath, join(ROOT, "bench", script), ...args, "--credits", String(credits), "--warmup", String(WARMUP)], {}, 280_000);
    try {
      progress("creating a live key (credit scope) and seeding users in each database");
      const db = await engine.database(join(dir.path, "herald"));
      const floor = sqliteDatabase(join(dir.path, "sqlite"));
      databases.push(db, floor);
      const key = await createKey(db, launch);
      const users = await seedUsers(await db.store());
      await createKey(floor, launch);
      const sqliteUsers = await seedUsers(await floor.store());
      // The harness's own connections close before the servers start; they reopen for the checks after the run.
      await db.close();
      await floor.close();

      progress(`starting ${engine.instances} herald instance(s) from ${launch.mode} on ${engine.kind}`);
      const heralds = await startHeralds(db, launch, engine.instances, SERVER_ENV);
      const herald = heralds[0]!;
      // Herald's own CPU over the credits (warmup included, start-up not): steadier than credits/s on a shared VM,
      // where the load generator takes its part of the same two cores.
      const cpuBefore = heralds.map((h) => processJiffies(h.proc.pid));
      const databaseBefore = databaseCpu();
      let serverCpuUs: number | null = null;
      let load: LoadResult;
      let work: { before: DbCounters; after: DbCounters; proxy: ProxyStats | null; proxyJiffies: number } | null = null;
      const proxy = engine.latency?.proxy ?? null;
      try {
        progress(`herald: ${WARMUP} warmup + ${credits} measured signed credits, ${opts.connections} in flight`);
        const loadRun = (count: number) => creditLoad(heralds.map((h) => h.baseUrl).join(","), users, count, opts.connections, key);
        // The warmup, then herald's counters, then the measured credits, then the counters again.
        const running = (async () => {
          const warm = await loadRun(WARMUP);
          const before = await dbCounters(heralds);
          proxy?.reset();
          const proxyJiffies = proxy ? processJiffies(proxy.proc.pid) : 0;
          const measured = await loadRun(credits);
          const after = await dbCounters(heralds);
          const proxyStats = proxy ? await proxy.stats() : null;
          work = { before, after, proxy: proxyStats, proxyJiffies: proxy ? processJiffies(proxy.proc.pid) - proxyJiffies : 0 };
          return { warm, measured };
        })();
        const connections = await connectionsPerInstance(db, running);
        const phases = await running;
        load = phases.measured;
        const warmFailed = Object.entries(phases.warm.statuses).filter(([st]) => st !== "200");
        if (warmFailed.length || phases.warm.socket_errors)
          errors.push(
            `warmup credits not answered 200: ${JSON.stringify(phases.warm.statuses)}, ${phases.warm.socket_errors} socket errors; first: ${phases.warm.first_failure}`,
          );
        const jiffies = heralds.reduce((sum, h, i) => sum + processJiffies(h.proc.pid) - cpuBefore[i]!, 0);
        const answered = Object.values(load.statuses).reduce((n, c) => n + c, 0) + WARMUP;
        notes.push(...databaseCpuNote("herald's", databaseJiffiesSince(databaseBefore), answered));
        if (jiffies > 0 && answered > 0) {
          serverCpuUs = Number(((jiffies * 10_000) / answered).toFixed(1));
          notes.push(
            `herald used ${serverCpuUs} µs of CPU per credit (utime + stime of the herald process(es) over the ${answered.toLocaleString("en-US")} credits, warmup included)`,
          );
        }
        if (connections) notes.push(connections);
        const commits = await readMetric(herald, "herald_group_commits");
        const effects = await readMetric(herald, "herald_grouped_effects");
        if (commits && effects !== null)
          notes.push(
            `herald committed ${effects.toLocaleString("en-US")} transactions in ${commits.toLocaleString("en-US")} SQLite commits (mean ${(effects / commits).toFixed(1)} per commit)`,
          );
      } finally {
        notes.push(...(await stopAll(heralds)));
      }
      const ok = load.statuses["200"] ?? 0;
      const non2xx = Object.entries(load.statuses)
        .filter(([s]) => s !== "200")
        .reduce((n, [, c]) => n + c, 0);
      const answered = Object.values(load.statuses).reduce((n, c) => n + c, 0);
      const w = work as { before: DbCounters; after: DbCounters; proxy: ProxyStats | null; proxyJiffies: number } | null;
      const delta = (k: keyof DbCounters) => (w && w.before[k] !== null && w.after[k] !== null ? w.after[k]! - w.before[k]! : null);
      const commits = delta("commits");
      results.push({
        ...caseOf(HERALD, `${herald.baseUrl}/api/salutes/credit`, load, non2xx, load.socket_errors),
        server_cpu_us_per_request: serverCpuUs,
        db_round_trips_per_credit: perCredit(delta("roundTrips"), answered),
        db_statements_per_credit: perCredit(delta("statements"), answered),
        db_commits_per_sec: commits === null || load.seconds <= 0 ? null : Number((commits / load.seconds).toFixed(1)),
        db_work_source: `herald's /metrics, deltas over the ${answered.toLocaleString("en-US")} measured credits (${Object.values(DB_METRICS).join(", ")}; summed over the instances)`,
      });
      if (w?.proxy) {
        notes.push(proxyNote("herald's measured credits", w.proxy, answered)!);
        if (w.proxyJiffies > 0)
          notes.push(`the delay proxy used ${((w.proxyJiffies * 10_000) / answered).toFixed(1)} µs of CPU per credit during herald's measured credits`);
      }
      if (ok !== credits)
        errors.push(`${credits - ok} of ${credits} credits were not answered 200 (${JSON.stringify(load.statuses)}; first: ${load.first_failure})`);
      errors.push(...(await checkLedger(await db.store(), ok + WARMUP)));
      if (db.kind === "sqlite") {
        await db.close();
        const file = inspectDatabase(join(db.dir, "herald.db"));
        notes.push(
          `herald: database ${(file.bytes / 1024 / 1024).toFixed(1)} MiB after the run; request_log ${file.rows === null ? "?" : file.rows.toLocaleString("en-US")} rows`,
        );
      }
      for (const h of heralds) {
        const logged = await logLines(h.logPath);
        if (logged.length) notes.push(`herald wrote ${logged.length}${logged.length === 200 ? "+" : ""} lines at LOG_LEVEL=warn: ${summariseLog(logged)}`);
      }

      progress(`bare bun:sqlite loop: ${WARMUP} warmup + ${credits} measured credits`);
      const sqliteRun = await bareRun("credit-sqlite.ts", ["--db", join(floor.dir, "herald.db"), "--users", sqliteUsers.join(",")]);
      results.push({
        ...caseOf(SQLITE, "(in-process, no HTTP)", sqliteRun),
        db_round_trips_per_credit: null,
        db_statements_per_credit: null,
        db_commits_per_sec: sqliteRun.credits_per_sec,
        db_work_source: "in-process SQLite: no round trips; one transaction (one commit) per credit",
      });

      // The bare HTTP server on SQLite: the loop's transaction behind Bun.serve (one commit per credit), driven by the
      // same load generator as herald, over a database of its own (issue 50's signed-credit target).
      const servedSqlite = sqliteDatabase(join(dir.path, "sqlite-server"));
      databases.push(servedSqlite);
      await createKey(servedSqlite, launch);
      const sqliteServedUsers = await seedUsers(await servedSqlite.store());
      await servedSqlite.close();
      for (const [name, writes, what] of [
        [SQLITE_SERVER, "same", "bench/credit-sqlite.ts's transaction"],
        [SQLITE_SERVER_MINIMAL, "ledger-outbox", "a ledger row and an outbox event"],
      ] as const) {
        results.push(
          await bareServerCase({
            name,
            script: "credit-sqlite-server.ts",
            args: ["--db", join(servedSqlite.dir, "herald.db"), "--writes", writes],
            logPath: join(dir.path, `sqlite-server-${writes}.log`),
            users: sqliteServedUsers,
            key,
            credits,
            connections: opts.connections,
            notes,
            errors,
            work: {
              db_round_trips_per_credit: null,
              db_statements_per_credit: null,
              db_work_source: `bench/credit-sqlite-server.ts --writes ${writes}: ${what} behind Bun.serve, one commit per credit`,
            },
          }),
        );
      }

      if (engine.kind === "postgres") {
        const bare = await engine.database(join(dir.path, "postgres"));
        databases.push(bare);
        await heraldCli(bare, launch, ["migrate"]);
        const bareUsers = await seedUsers(await bare.store());
        const pool = (engine.poolMax ?? 10) * engine.instances;
        progress(
          `bare PostgreSQL: ${WARMUP} warmup + ${credits} measured credits, ${opts.connections} in flight over ${pool} connections${engine.latency ? " through the delay proxy" : ""}`,
        );
        // The proxy's counts start with the warmup here (the floor is one process): they cover warmup and measured credits.
        proxy?.reset();
        const floorRun = await bareRun("credit-postgres.ts", [
          "--url",
          bare.serviceUrl!,
          "--users",
          bareUsers.join(","),
          "--connections",
          String(opts.connections),
          "--pool",
          String(pool),
        ]);
        const floorProxy = proxy ? await proxy.stats() : null;
        results.push({
          ...caseOf(POSTGRES, "(in-process, no HTTP)", floorRun),
          db_round_trips_per_credit: ROUND_TRIPS_PER_CREDIT,
          db_statements_per_credit: ROUND_TRIPS_PER_CREDIT,
          db_commits_per_sec: floorRun.credits_per_sec,
          db_work_source: `bench/credit-postgres.ts's code: BEGIN, ${CREDIT_STATEMENTS.length} statements, COMMIT, each awaited before the next (statements counted as herald counts them, BEGIN and COMMIT included); one commit per credit`,
        });
        notes.push(
          `bare PostgreSQL: the same statements as the bun:sqlite loop, each transaction through Bun's SQL client, ${opts.connections} in flight over ${pool} connections (herald's pools together)${engine.latency ? ", through the same delay proxy as herald" : ""}`,
        );
        if (floorProxy) notes.push(proxyNote("bare PostgreSQL's credits (warmup included)", floorProxy, credits + WARMUP)!);

        // The naive bare server: the same transaction behind Bun.serve, driven by the same load generator (HTTP on
        // both sides), over a database of its own.
        const served = await engine.database(join(dir.path, "bare-server"));
        databases.push(served);
        await heraldCli(served, launch, ["migrate"]);
        const servedUsers = await seedUsers(await served.store());
        await served.close();
        results.push(
          await bareServerCase({
            name: SERVER,
            script: "credit-postgres-server.ts",
            args: ["--url", served.serviceUrl!, "--pool", String(pool)],
            logPath: join(dir.path, "bare-server.log"),
            users: servedUsers,
            key,
            credits,
            connections: opts.connections,
            notes,
            errors,
            work: {
              db_round_trips_per_credit: ROUND_TRIPS_PER_CREDIT,
              db_statements_per_credit: ROUND_TRIPS_PER_CREDIT,
              db_work_source: "bench/credit-postgres-server.ts: bench/credit-postgres.ts's transaction behind Bun.serve",
            },
          }),
        );
      }
    } finally {
      for (const d of databases) await d.close();
      await engine.close();
      dir.remove();
    }
    const a = results.find((r) => r.case === HERALD);
    const b = results.find((r) => r.case === SQLITE);
    const c = results.find((r) => r.case === POSTGRES);
    const summary: string[] = [];
    if (a)
      summary.push(
        `herald: ${Math.round(a.requests_per_sec).toLocaleString("en-US")} credits/s, p50 ${a.p50_ms.toFixed(2)} ms, p99 ${a.p99_ms.toFixed(2)} ms; target ≥ ${TARGET_PER_SEC.toLocaleString("en-US")} credits/s: ${a.requests_per_sec >= TARGET_PER_SEC ? "MET" : "NOT MET"}`,
      );
    if (a && b)
      summary.push(
        `the bare loop's per-credit time is ${((1000 / b.requests_per_sec) * 1000).toFixed(0)} µs; herald spends ${((1000 / a.requests_per_sec) * 1000).toFixed(0)} µs of wall time per credit at this concurrency`,
      );
    if (a && c)
      summary.push(
        `herald ÷ bare PostgreSQL: ${(a.requests_per_sec / c.requests_per_sec).toFixed(2)}× (bare PostgreSQL ${Math.round(c.requests_per_sec).toLocaleString("en-US")} credits/s, p50 ${c.p50_ms.toFixed(2)} ms, p99 ${c.p99_ms.toFixed(2)} ms)`,
      );
    const e = results.find((r) => r.case === SQLITE_SERVER);
    const f = results.find((r) => r.case === SQLITE_SERVER_MINIMAL);
    for (const bare of [e, f])
      if (a && bare)
        summary.push(
          `herald ÷ ${bare.case} (HTTP on both sides): ${(a.requests_per_sec / bare.requests_per_sec).toFixed(2)}× (${Math.round(bare.requests_per_sec).toLocaleString("en-US")} credits/s, p50 ${bare.p50_ms.toFixed(2)} ms, p99 ${bare.p99_ms.toFixed(2)} ms); target ≥ 0.50×`,
        );
    const d = results.find((r) => r.case === SERVER);
    if (a && d) {
      // Issue 49: ≥ 1.0× on a durable cluster reached directly, ≥ 1.5× with 0.5 ms added between herald and PostgreSQL.
      const target = engine.latency ? 1.5 : 1.0;
      const ratio = a.requests_per_sec / d.requests_per_sec;
      const met = engine.durable === false ? "not judged: fsync off" : ratio >= target ? "MET" : "NOT MET";
      summary.push(
        `herald ÷ naive bare server (Bun.serve + Bun's SQL, HTTP on both sides): ${ratio.toFixed(2)}× (${Math.round(d.requests_per_sec).toLocaleString("en-US")} credits/s, p50 ${d.p50_ms.toFixed(2)} ms, p99 ${d.p99_ms.toFixed(2)} ms); target (issue 49) ≥ ${target.toFixed(1)}× ${engine.latency ? "with latency added" : "direct"}, fsync on: ${met}`,
      );
    }
    if (results.length) {
      // The database work per case, as a small table of its own (the report's main table has fixed columns).
      const head = ["database work per case", "round trips/credit", "statements/credit", "commits/s"];
      const rows = results.map((r) => [
        r.case,
        fmtWork(r.db_round_trips_per_credit, 2),
        fmtWork(r.db_statements_per_credit, 2),
        fmtWork(r.db_commits_per_sec, 0),
      ]);
      const widths = head.map((h, i) => Math.max(h.length, ...rows.map((row) => row[i]!.length)));
      const line = (cells: string[]) => cells.map((cell, i) => (i === 0 ? cell.padEnd(widths[i]!) : cell.padStart(widths[i]!))).join("  ");
      summary.push("", line(head), ...rows.map(line));
      for (const r of results) summary.push(`  ${r.case}: ${r.db_work_source}`);
    }
    return {
      benchmark: "credit",
      description: credit.description,
      topology: engine.topology(
        engine.instances === 1
          ? "the load generator's workers all send to the one instance"
          : `the load generator's workers spread round-robin over the ${engine.instances} instances (worker i → instance i mod ${engine.instances})`,
      ),
      results: withRatios(results, SQLITE),
      notes,
      summary,
      ratios: {
        herald_vs_bare_sqlite: a && b ? Number((a.requests_per_sec / b.requests_per_sec).toFixed(3)) : null,
        herald_vs_bare_postgres: a && c ? Number((a.requests_per_sec / c.requests_per_sec).toFixed(3)) : null,
        herald_vs_bare_sqlite_server: a && e ? Number((a.requests_per_sec / e.requests_per_sec).toFixed(3)) : null,
        herald_vs_bare_sqlite_server_ledger_outbox: a && f ? Number((a.requests_per_sec / f.requests_per_sec).toFixed(3)) : null,
        target_credits_per_sec: TARGET_PER_SEC,
      },
      errors,
    };
  },
};

export default credit;
