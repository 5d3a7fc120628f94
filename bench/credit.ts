// credit: signed salutes credits through the whole stack vs the same writes as a bare bun:sqlite loop, one run.
//   (a) herald (`herald serve`, a child process): POST /api/salutes/credit, each request with its own nonce,
//       Idempotency-Key and signature — signature check, nonce insert, idempotency check, user check, ledger row,
//       balance upsert, outbox event and stored response, in one transaction — driven by bench/credit-load.ts
//       (a child process; wrk cannot sign per request) with --connections requests in flight, all pre-signed;
//   (b) bench/credit-sqlite.ts (a child process): the same transaction's statements in a loop, no HTTP.
// The two run one after the other, never together (the load generator and the server already share the cores).
// Users are seeded straight into partner_users before herald starts: this measures credits, not user creation.
// The partner rate limit is off (RATE_LIMIT_PARTNER_PER_MIN=0): 6000/min per key would throttle the run.
import { Database } from "bun:sqlite";
import { mkdirSync } from "node:fs";
import { join } from "node:path";
import { PostgresStore } from "../src/db/postgres-engine";
import { withDatabase } from "../test/support/engine";
import { startCluster, type TestCluster } from "../test/support/postgres";
import type { LoadResult } from "./credit-load";
import {
  heraldLaunch,
  inspectDatabase,
  logLines,
  progress,
  readMetric,
  ROOT,
  runHeraldCli,
  startHerald,
  summariseLog,
  tempDir,
  withRatios,
  type Benchmark,
  type CaseResult,
  type HeraldLaunch,
} from "./support";

const USERS = 5;
const WARMUP = 1_000;
const TARGET_PER_SEC = 3_000;
const HERALD = "herald POST /api/salutes/credit, signed";
const SQLITE = "bare bun:sqlite loop, same writes";
const SERVER_ENV = { RATE_LIMIT_PARTNER_PER_MIN: "0", METRICS_PUBLIC: "1" };

interface BenchKey {
  key_id: string;
  secret: string;
}

/** A live key with the credit scope (`herald keys create`), which also creates and migrates `<dir>/herald.db`. */
async function createKey(dir: string, launch: HeraldLaunch, env: Record<string, string>): Promise<BenchKey> {
  const out = await runHeraldCli(dir, launch, ["keys", "create", "--partner", "Bench", "--mode", "live", "--scopes", "credit,read", "--json"], env);
  const parsed = JSON.parse(out) as Partial<BenchKey>;
  if (typeof parsed.key_id !== "string" || typeof parsed.secret !== "string") throw new Error("herald keys create --json printed no key_id/secret");
  return { key_id: parsed.key_id, secret: parsed.secret };
}

function seedUsers(dbPath: string): string[] {
  const db = new Database(dbPath, { strict: true });
  const now = new Date().toISOString();
  const insert = db.prepare(
    "INSERT INTO partner_users (partner, mode, external_id, status, is_verified, created_at, updated_at) VALUES ('Bench', 'live', ?, 'active', 0, ?, ?) RETURNING id",
  );
  const ids = Array.from({ length: USERS }, (_, i) => String((insert.get(`bench-${i}`, now, now) as { id: number }).id));
  db.close();
  return ids;
}

async function seedUsersOn(store: PostgresStore): Promise<string[]> {
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

/** What the server left behind, read after it stopped: every accepted credit must be one row + one event. */
function checkLedger(dbPath: string, expected: number): string[] {
  const db = new Database(dbPath, { readonly: true });
  const q = <T>(sql: string) => db.query(sql).get() as T;
  const rows = q<{ n: number }>("SELECT count(*) AS n FROM salutes_ledger").n;
  const events = q<{ n: number }>("SELECT count(*) AS n FROM events WHERE event_type = 'salutes.credit'").n;
  const mismatched = q<{ n: number }>(
    "SELECT count(*) AS n FROM salutes_balances b WHERE balance_minor != (SELECT SUM(delta_minor) FROM salutes_ledger l WHERE l.user_id = b.user_id)",
  ).n;
  db.close();
  const problems: string[] = [];
  if (rows !== expected) problems.push(`salutes_ledger has ${rows} rows; ${expected} credits were answered 200`);
  if (events !== rows) problems.push(`${events} salutes.credit events for ${rows} ledger rows`);
  if (mismatched) problems.push(`${mismatched} balances differ from the sum of their ledger`);
  return problems;
}

/** The same checks as checkLedger, on the PostgreSQL database the instances shared. */
async function checkLedgerOn(store: PostgresStore, expected: number): Promise<string[]> {
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

/** A throwaway PostgreSQL cluster (Debian's package, as the tests use) with an empty database for the instances. */
async function postgresFor(): Promise<{ cluster: TestCluster; url: string; store: PostgresStore }> {
  const cluster = await startCluster();
  const admin = new PostgresStore({ url: cluster.url, poolMax: 1 });
  await admin.run("CREATE DATABASE bench");
  await admin.close();
  const url = withDatabase(cluster.url, "bench");
  return { cluster, url, store: new PostgresStore({ url, poolMax: 2 }) };
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

const credit: Benchmark = {
  name: "credit",
  description: "signed POST /api/salutes/credit through the full stack vs a bare bun:sqlite loop doing the same writes",
  async run(opts) {
    const credits = opts.credits ?? 20_000;
    const launch = heraldLaunch(opts.herald);
    const notes: string[] = [
      `herald ran from ${launch.mode}; ${credits.toLocaleString("en-US")} credits measured per case after ${WARMUP.toLocaleString("en-US")} warmup credits; ${opts.connections} requests in flight (--connections); ${USERS} users`,
      "the load generator (bench/credit-load.ts) is a separate Bun process on the same cores; every request was signed before the clock started",
      "--duration, --threads and --warmup do not apply to this benchmark (a fixed count of credits is measured)",
    ];
    if (launch.warning) notes.push(launch.warning);
    const errors: string[] = [];
    const results: CaseResult[] = [];
    const dir = tempDir("credit");
    let pg: Awaited<ReturnType<typeof postgresFor>> | null = null;
    const heraldDir = join(dir.path, "herald");
    const sqliteDir = join(dir.path, "sqlite");
    try {
      progress("creating a live key (credit scope) and seeding users in each database");
      const engine = opts.engine ?? "sqlite";
      const n = engine === "postgres" ? (opts.instances ?? 1) : 1;
      pg = engine === "postgres" ? await postgresFor() : null;
      // Every instance needs the same master key (secrets are sealed with it) and a name of its own.
      const env = pg ? { ...SERVER_ENV, DATABASE_URL: pg.url, HERALD_MASTER_KEY: "ab".repeat(32) } : SERVER_ENV;
      mkdirSync(heraldDir, { recursive: true });
      const key = await createKey(heraldDir, launch, env);
      const users = pg ? await seedUsersOn(pg.store) : seedUsers(join(heraldDir, "herald.db"));
      await createKey(sqliteDir, launch, SERVER_ENV);
      const sqliteUsers = seedUsers(join(sqliteDir, "herald.db"));
      if (pg) notes.push(`herald on PostgreSQL (a throwaway cluster on 127.0.0.1, fsync off as in the tests): ${n} instance(s), DATABASE_POOL_MAX 10 each`);

      progress(`starting ${n} herald instance(s) from ${launch.mode} on ${engine}`);
      const heralds = [];
      // On SQLite the one instance serves the file the key and users are in; on PostgreSQL each has a folder for its log.
      for (let i = 0; i < n; i++) {
        const home = pg ? join(heraldDir, `i${i}`) : heraldDir;
        mkdirSync(home, { recursive: true });
        heralds.push(await startHerald(home, launch, { ...env, HERALD_INSTANCE_ID: `bench-${i}` }));
      }
      const herald = heralds[0]!;
      let load: LoadResult;
      try {
        progress(`herald: ${WARMUP} warmup + ${credits} measured signed credits, ${opts.connections} in flight`);
        load = await runChild<LoadResult>(
          [
            process.execPath,
            join(ROOT, "bench", "credit-load.ts"),
            "--url",
            heralds.map((h) => h.baseUrl).join(","),
            "--users",
            users.join(","),
            "--credits",
            String(credits),
            "--warmup",
            String(WARMUP),
            "--connections",
            String(opts.connections),
          ],
          { BENCH_KEY_ID: key.key_id, BENCH_SECRET: key.secret },
          280_000,
        );
        const commits = await readMetric(herald, "herald_group_commits");
        const effects = await readMetric(herald, "herald_grouped_effects");
        if (commits && effects !== null)
          notes.push(
            `herald committed ${effects.toLocaleString("en-US")} transactions in ${commits.toLocaleString("en-US")} SQLite commits (mean ${(effects / commits).toFixed(1)} per commit)`,
          );
      } finally {
        for (const h of heralds) {
          const code = await h.stop();
          notes.push(`herald stopped on SIGTERM, exit ${code === null ? "KILLED after grace" : code}`);
        }
      }
      const ok = load.statuses["200"] ?? 0;
      const non2xx = Object.entries(load.statuses)
        .filter(([s]) => s !== "200")
        .reduce((n, [, c]) => n + c, 0);
      results.push(caseOf(HERALD, `${herald.baseUrl}/api/salutes/credit`, load, non2xx, load.socket_errors));
      if (ok !== credits)
        errors.push(`${credits - ok} of ${credits} credits were not answered 200 (${JSON.stringify(load.statuses)}; first: ${load.first_failure})`);
      if (pg) {
        errors.push(...(await checkLedgerOn(pg.store, ok + WARMUP)));
      } else {
        errors.push(...checkLedger(join(heraldDir, "herald.db"), ok + WARMUP));
        const db = inspectDatabase(join(heraldDir, "herald.db"));
        notes.push(
          `herald: database ${(db.bytes / 1024 / 1024).toFixed(1)} MiB after the run; request_log ${db.rows === null ? "?" : db.rows.toLocaleString("en-US")} rows`,
        );
      }
      const logged = await logLines(herald.logPath);
      if (logged.length) notes.push(`herald wrote ${logged.length}${logged.length === 200 ? "+" : ""} lines at LOG_LEVEL=warn: ${summariseLog(logged)}`);

      progress(`bare bun:sqlite loop: ${WARMUP} warmup + ${credits} measured credits`);
      const bare = await runChild<LoadResult>(
        [
          process.execPath,
          join(ROOT, "bench", "credit-sqlite.ts"),
          "--db",
          join(sqliteDir, "herald.db"),
          "--users",
          sqliteUsers.join(","),
          "--credits",
          String(credits),
          "--warmup",
          String(WARMUP),
        ],
        {},
        280_000,
      );
      results.push(caseOf(SQLITE, "(in-process, no HTTP)", bare));
    } finally {
      await pg?.store.close();
      pg?.cluster.stop();
      dir.remove();
    }
    const a = results.find((r) => r.case === HERALD);
    const b = results.find((r) => r.case === SQLITE);
    const summary: string[] = [];
    if (a)
      summary.push(
        `herald: ${Math.round(a.requests_per_sec).toLocaleString("en-US")} credits/s, p50 ${a.p50_ms.toFixed(2)} ms, p99 ${a.p99_ms.toFixed(2)} ms; target ≥ ${TARGET_PER_SEC.toLocaleString("en-US")} credits/s: ${a.requests_per_sec >= TARGET_PER_SEC ? "MET" : "NOT MET"}`,
      );
    if (a && b)
      summary.push(
        `the bare loop's per-credit time is ${((1000 / b.requests_per_sec) * 1000).toFixed(0)} µs; herald spends ${((1000 / a.requests_per_sec) * 1000).toFixed(0)} µs of wall time per credit at this concurrency`,
      );
    return {
      benchmark: "credit",
      description: credit.description,
      results: withRatios(results, SQLITE),
      notes,
      summary,
      ratios: { herald_vs_bare_sqlite: a && b ? Number((a.requests_per_sec / b.requests_per_sec).toFixed(3)) : null, target_credits_per_sec: TARGET_PER_SEC },
      errors,
    };
  },
};

export default credit;
