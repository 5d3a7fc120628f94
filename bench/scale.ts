// scale (issue 71): does any operation stall the service once the database is big? For each size (--sizes, default
// 10k,1m; 10m on request) a database is built in minutes (bench/scale-seed.ts): herald makes it (migrations, a partner
// key and an operator token by its CLI, a webhook, users, credits and a status snapshot through the API), then SQL
// multiplies it to N ledger entries, N request_log rows and the rest, consistent (checked). Then herald starts on it
// (from source, --binary for dist/herald) with its jobs on, and bench/scale-prober.ts (a child process) GETs /healthz
// every 20 ms while the harness runs, one at a time and each timed: an idle spell (jobs on their schedules), every
// route family once (bench/scale-ops.ts), on SQLite a backup and signed credits alone and during backups, and every
// job once (POST /admin/jobs/:name/run, names from GET /admin/jobs). Per operation: its time, the slowest /healthz
// answer that overlapped it, the largest gap between two answers around it, and the stall = the larger of the slowest
// answer and (the gap − the 20 ms interval); target ≤ 50 ms. The prober's floor: a bare Bun.serve probed the same way
// for as long (at most 60 s). Every loop bounded; only 127.0.0.1; temp dirs and children removed at the end.
import { join } from "node:path";
import type { Subprocess } from "bun";
import { children } from "./children";
import { heraldCli, openEngine, startHeralds, stopAll, type BenchDatabase, type BenchEngine, type EngineOptions } from "./engines";
import type { ProbeSamples } from "./scale-prober";
import { fmt, type ReadTime, readsTable, stallDuring, table, TARGET_STALL_MS, type Timed } from "./scale-report";
import { checkConsistency } from "./scale-check";
import { openSeedSql, RARE_REASON, seed, SPAN_SECONDS } from "./scale-seed";
import { creditFigures, credits, HeraldClient, routeOperations, setupThroughApi, type Answer, type Operation, type PartnerKey } from "./scale-ops";
import {
  heraldLaunch,
  progress,
  ROOT,
  startBaseline,
  tempDir,
  UsageError,
  type Benchmark,
  type BenchOptions,
  type HeraldLaunch,
  type RunningServer,
} from "./support";

const PROBE_INTERVAL_MS = 20;
const CREDIT_TARGET_RATIO = 2;
const BASELINE_MAX_S = 60;
const IDLE_MS = 3_000;
/** Each of the summaries' reads (issue 72) is timed again this many times, a second apart (past /metrics' shared read). */
const READ_REPEATS = 5;
const READ_PAUSE_MS = 1_050;
/** Environment of every herald start: no rate limit in the way; the request log kept 30 days (the data spans 30 days + 1 hour). */
const HERALD_ENV = {
  RATE_LIMIT_PARTNER_PER_MIN: "0",
  RATE_LIMIT_PUBLIC_API_PER_MIN: "0",
  REQUEST_LOG_RETENTION_DAYS: "30",
  BACKUP_KEEP: "2",
  WEBHOOK_ALLOW_PRIVATE_TARGETS: "1",
};

/** `--sizes 10k,1m,10m`: row counts from 1,000 to 10,000,000. */
export function parseSizes(text: string): number[] {
  return text.split(",").map((part) => {
    const m = /^(\d+(?:\.\d+)?)([km]?)$/i.exec(part.trim());
    const n = m ? Math.round(Number(m[1]) * (m[2]?.toLowerCase() === "m" ? 1e6 : m[2]?.toLowerCase() === "k" ? 1e3 : 1)) : Number.NaN;
    if (!(n >= 1_000 && n <= 10_000_000)) throw new UsageError(`--sizes takes row counts from 1k to 10m, e.g. 10k,1m; got ${JSON.stringify(part)}`);
    return n;
  });
}

const sizeName = (n: number) => (n >= 1e6 ? `${n / 1e6}M` : `${n / 1e3}k`);
const now = () => performance.timeOrigin + performance.now();

/** The prober on `url` as a child process; stop() ends it and returns its samples. */
function startProber(url: string, out: string, maxSeconds: number): { stop(): Promise<ProbeSamples> } {
  const proc: Subprocess = Bun.spawn(
    [
      process.execPath,
      join(ROOT, "bench", "scale-prober.ts"),
      "--url",
      url,
      "--out",
      out,
      "--interval-ms",
      String(PROBE_INTERVAL_MS),
      "--max-seconds",
      String(maxSeconds),
    ],
    { cwd: ROOT, stdin: "ignore", stdout: "ignore", stderr: "inherit" },
  );
  children.add(proc);
  return {
    async stop() {
      proc.kill("SIGTERM");
      const late = await Promise.race([proc.exited.then(() => false), Bun.sleep(90_000).then(() => true)]);
      if (late) proc.kill("SIGKILL");
      await proc.exited;
      children.delete(proc);
      return (await Bun.file(out).json()) as ProbeSamples;
    },
  };
}

type Outcome = { text: string; problem?: Timed["problem"] };

/** The answer column, and what is wrong with the answer: an HTTP error is an error of the run, a failed job a note. */
function outcomeOf(a: Answer, expected?: number): Outcome {
  const text = `${a.status} ${a.bytes >= 1024 ? `${(a.bytes / 1024).toFixed(0)} KiB` : `${a.bytes} B`}${a.note ? ` ${a.note}` : ""}`;
  if (expected !== undefined)
    return a.status === expected ? { text } : { text, problem: { error: true, text: `answered ${a.status} ${a.note}, expected ${expected}` } };
  if (a.status >= 400) return { text, problem: { error: true, text: `answered ${a.status} ${a.note}` } };
  if (a.note.startsWith("job failed")) return { text, problem: { error: false, text: a.note } };
  return { text };
}

/** Runs `fn` alone, a pause before and after so that one operation's stall does not spill into the next one's window. */
async function timed(label: string, fn: () => Promise<Outcome>, out: Timed[], reference = false): Promise<void> {
  await Bun.sleep(150);
  const from = now();
  let o: Outcome;
  try {
    o = await fn();
  } catch (err) {
    const text = `failed: ${(err as Error).message.slice(0, 80)}`;
    o = { text, problem: { error: true, text } };
  }
  const to = now();
  const answer = o.text;
  out.push({ label, ms: to - from, answer, from, to, reference, problem: o.problem });
  progress(`  ${label}: ${fmt(to - from)} ms, ${answer}`);
  await Bun.sleep(150);
}

/** Herald's CLI makes the database, the key and the token; herald then makes the rest through the API and stops. */
async function makeDatabase(db: BenchDatabase, launch: HeraldLaunch) {
  const key = JSON.parse(
    await heraldCli(db, launch, ["keys", "create", "--partner", "Bench", "--mode", "live", "--scopes", "read,credit,debit,ledger,users,webhooks", "--json"]),
  ) as PartnerKey;
  const token = (JSON.parse(await heraldCli(db, launch, ["admin-token", "create", "--name", "bench-scale", "--json"])) as { token: string }).token;
  const [setupHerald] = await startHeralds(db, launch, 1, { ...HERALD_ENV, JOBS_ENABLED: "0" });
  try {
    const made = await setupThroughApi(new HeraldClient(setupHerald!.baseUrl, key, token));
    return { key, token, ...made };
  } finally {
    await stopAll([setupHerald!]); // the request log's last batch is written on SIGTERM
  }
}

interface SizeOutcome {
  lines: string[];
  errors: string[];
  notes: string[];
  reads: ReadTime[];
}

/** One size: build, check, serve with the prober, every operation, the prober's floor. */
async function runSize(engine: BenchEngine, launch: HeraldLaunch, rows: number): Promise<SizeOutcome> {
  const name = sizeName(rows);
  const dir = tempDir(`scale-${name}`);
  const out: SizeOutcome = { lines: [], errors: [], notes: [], reads: [] };
  try {
    const db = await engine.database(join(dir.path, "herald"));
    progress(`${name}: herald makes the database (CLI, then the API)`);
    const made = await makeDatabase(db, launch);
    await db.close();
    const sql = openSeedSql(db);
    const b0 = performance.now();
    let built: Awaited<ReturnType<typeof seed>>;
    let check: Awaited<ReturnType<typeof checkConsistency>>;
    try {
      progress(`${name}: multiplying it with SQL on ${engine.kind}`);
      built = await seed(sql, { rows, partner: "Bench", keyId: made.key.key_id, webhookId: made.webhookId, nowMs: Date.now() }, progress);
      progress(`${name}: checking consistency`);
      check = await checkConsistency(sql);
    } finally {
      await sql.close();
    }
    const buildS = (performance.now() - b0) / 1000;
    const size = db.kind === "sqlite" ? Bun.file(join(db.dir, "herald.db")).size : await (await db.store()).sizeBytes();
    await db.close();
    out.lines.push(
      `== ${name} (${rows.toLocaleString("en-US")} rows) on ${engine.kind}: built and checked in ${buildS.toFixed(0)} s, ${(size / 1024 / 1024).toFixed(0)} MiB`,
      `   rows: ${Object.entries(built.counts)
        .map(([t, n]) => `${t} ${n.toLocaleString("en-US")}`)
        .join(", ")}`,
      `   build: ${built.steps.join("; ")}`,
      `   check: ${check.problems.length === 0 ? "consistent" : "INCONSISTENT"} — ${check.lines.join("; ")}`,
    );
    out.errors.push(...check.problems.map((p) => `${name}: ${p}`));

    progress(`${name}: starting herald from ${launch.mode} with its jobs on, and the /healthz prober`);
    const [herald] = await startHeralds(db, launch, 1, { ...HERALD_ENV, JOBS_ENABLED: "1" });
    const client = new HeraldClient(herald!.baseUrl, made.key, made.token);
    const prober = startProber(`${herald!.baseUrl}/healthz`, join(dir.path, "probes.json"), 3600);
    const ops: Timed[] = [];
    let samples: ProbeSamples;
    const creditLines: string[] = [];
    const creditProblems: string[] = [];
    try {
      out.reads = await operations(client, engine.kind, built, ops, creditLines, creditProblems);
    } finally {
      samples = await prober.stop();
      out.notes.push(...(await stopAll([herald!], `herald (${name})`)).filter((n) => !n.endsWith("exit 0")));
    }
    const span = samples.sentAt.length ? samples.sentAt[samples.sentAt.length - 1]! - samples.sentAt[0]! : 0;
    const floorS = Math.max(5, Math.min(BASELINE_MAX_S, Math.round(span / 1000)));
    progress(`${name}: the prober's floor: a bare Bun.serve probed the same way for ${floorS} s`);
    const floor = await proberFloor(dir.path, floorS);
    out.lines.push(...table(name, ops, samples, floor.stallMs), ...creditLines, floor.line);
    for (const o of ops.filter((x) => x.problem)) (o.problem!.error ? out.errors : out.notes).push(`${name}: ${o.label}: ${o.problem!.text}`);
    out.errors.push(...creditProblems.map((p) => `${name}: ${p}`));
    const failedProbes = samples.status.filter((s) => s !== 200).length;
    if (failedProbes) out.errors.push(`${name}: ${failedProbes} /healthz probes did not answer 200`);
  } finally {
    dir.remove();
  }
  return out;
}

/**
 * The operations, in order: idle, every route family, the summaries' reads again, (SQLite) credits alone and during
 * backups, every job. Returns the reads' times.
 */
async function operations(
  c: HeraldClient,
  kind: "sqlite" | "postgres",
  built: Awaited<ReturnType<typeof seed>>,
  ops: Timed[],
  creditLines: string[],
  creditProblems: string[],
): Promise<ReadTime[]> {
  await timed(`idle ${IDLE_MS / 1000} s right after start (jobs on their schedules)`, async () => (await Bun.sleep(IDLE_MS), { text: "-" }), ops, true);
  const routes: Operation[] = routeOperations(c, kind, { heavyUserId: built.heavyUserId, lookupEmail: built.lookupEmail, rareReason: RARE_REASON });
  let backupMs = 0;
  for (const op of routes)
    await timed(
      op.label,
      async () => {
        const t0 = performance.now();
        const a = await op.run();
        if (op.label.includes("/admin/backup/run")) backupMs = performance.now() - t0;
        return outcomeOf(a, op.expectStatus);
      },
      ops,
    );
  const reads = await repeatReads(routes, ops, creditProblems);
  if (kind === "sqlite") await creditsBesideBackups(c, built.someUserIds.map(String), backupMs, ops, creditLines, creditProblems);
  else creditLines.push("   credit p99 beside a backup: SQLite only (on PostgreSQL POST /admin/backup/run answers 409: backups are pg_dump's)");
  const list = await c.admin("GET", "/admin/jobs?limit=100");
  const names = ((list.json as { jobs?: Array<{ name: string }> } | null)?.jobs ?? []).map((j) => j.name);
  if (names.length === 0) throw new Error(`GET /admin/jobs answered ${list.status} with no jobs`);
  for (const job of names) await timed(`job ${job}`, async () => outcomeOf(await c.admin("POST", `/admin/jobs/${job}/run`)), ops);
  return reads;
}

/** The summaries' reads (Operation.readLimitMs) again, READ_REPEATS times each: the first time beside their median. */
async function repeatReads(routes: Operation[], ops: Timed[], failures: string[]): Promise<ReadTime[]> {
  const out: ReadTime[] = [];
  progress(`  the request summaries' reads again, ${READ_REPEATS} times each`);
  for (const op of routes.filter((o) => o.readLimitMs !== undefined)) {
    const times: number[] = [];
    for (let i = 0; i < READ_REPEATS; i++) {
      await Bun.sleep(READ_PAUSE_MS);
      const t0 = performance.now();
      const a = await op.run();
      times.push(performance.now() - t0);
      if (a.status >= 400) failures.push(`${op.label} answered ${a.status} ${a.note} when timed again`);
    }
    times.sort((a, b) => a - b);
    const firstMs = ops.find((o) => o.label === op.label)?.ms ?? Number.NaN;
    out.push({ label: op.label, firstMs, medianMs: times[Math.floor(times.length / 2)]!, limitMs: op.readLimitMs! });
  }
  return out;
}

/**
 * A credit's p99 alone and during backups (SQLite): 4 credits in flight, alone for as long as a backup took (3–30 s),
 * then during back-to-back backups until 300 credits were answered (at most 5 backups, 120 s). Target: ≤ 2× alone.
 */
async function creditsBesideBackups(c: HeraldClient, users: string[], backupMs: number, ops: Timed[], lines: string[], failures: string[]): Promise<void> {
  const aloneMs = Math.max(3_000, Math.min(30_000, backupMs));
  let alone: ReturnType<typeof creditFigures> = { p50: Number.NaN, p99: Number.NaN, n: 0 };
  let during: ReturnType<typeof creditFigures> = { p50: Number.NaN, p99: Number.NaN, n: 0 };
  await timed(
    `credits alone (4 in flight, ${(aloneMs / 1000).toFixed(0)} s)`,
    async () => {
      const r = await credits(c, users, { inflight: 4, maxCount: 200_000, maxMs: aloneMs, stop: () => false });
      if (r.failures) failures.push(`${r.failures} credits alone failed; first: ${r.firstFailure}`);
      alone = creditFigures(r);
      return { text: `${alone.n} credits, p99 ${fmt(alone.p99)} ms` };
    },
    ops,
  );
  let backups = 0;
  await timed(
    "credits during POST /admin/backup/run (4 in flight)",
    async () => {
      const latencies: number[] = [];
      const deadline = performance.now() + 120_000;
      while (backups < 5 && latencies.length < 300 && performance.now() < deadline) {
        let done = false;
        const backup = c.admin("POST", "/admin/backup/run").finally(() => (done = true));
        const r = await credits(c, users, { inflight: 4, maxCount: 200_000, maxMs: 120_000, stop: () => done });
        const b = await backup;
        backups++;
        if (b.status !== 200) failures.push(`a backup beside the credits answered ${b.status} ${b.note}`);
        if (r.failures) failures.push(`${r.failures} credits during a backup failed; first: ${r.firstFailure}`);
        latencies.push(...r.latenciesMs);
      }
      during = creditFigures({ latenciesMs: latencies, failures: 0, firstFailure: null });
      return { text: `${during.n} credits over ${backups} backup(s), p99 ${fmt(during.p99)} ms` };
    },
    ops,
  );
  const ratio = during.p99 / alone.p99;
  lines.push(
    `   credit p99 (4 in flight): alone ${fmt(alone.p99)} ms (p50 ${fmt(alone.p50)}, ${alone.n} credits); during ${backups} backup(s) ${fmt(during.p99)} ms (p50 ${fmt(during.p50)}, ${during.n} credits) = ${Number.isFinite(ratio) ? ratio.toFixed(2) : "?"}× — target ≤ ${CREDIT_TARGET_RATIO}×: ${ratio <= CREDIT_TARGET_RATIO ? "PASS" : "over"}${during.n < 100 ? " (fewer than 100 credits during the backups: the p99 is their maximum)" : ""}`,
  );
}

/** The prober against a bare Bun.serve (bench/baseline-server.ts) for `seconds`: the floor the prober itself sees. */
async function proberFloor(dir: string, seconds: number): Promise<{ line: string; stallMs: number }> {
  const bare: RunningServer = await startBaseline(dir);
  try {
    const prober = startProber(`${bare.baseUrl}/healthz`, join(dir, "floor.json"), seconds + 5);
    const from = now();
    await Bun.sleep(seconds * 1000);
    const to = now();
    const s = await prober.stop();
    const st = stallDuring(s, from, to);
    const sorted = [...s.latencyMs].sort((a, b) => a - b);
    const q = (p: number) => fmt(sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil(p * sorted.length) - 1))] ?? Number.NaN);
    return {
      line: `   baseline (the prober's floor): bare Bun.serve /healthz probed every ${s.intervalMs} ms for ${seconds} s: ${sorted.length} probes, p50 ${q(0.5)} ms, p99 ${q(0.99)} ms, max ${fmt(st.maxLatencyMs)} ms, max gap ${fmt(st.maxGapMs)} ms, stall ${fmt(st.stallMs)} ms`,
      stallMs: st.stallMs,
    };
  } finally {
    await bare.stop();
  }
}

const scale: Benchmark = {
  name: "scale",
  description: `/healthz stalls while every route family, a backup and every job run once over databases of 10k, 1M (and 10M) rows; target: each operation's worst stall ≤ ${TARGET_STALL_MS} ms`,
  async run(options: BenchOptions) {
    // --sizes and the PostgreSQL engine's options ride beside BenchOptions (bench/run.ts).
    const opts = options as BenchOptions & EngineOptions & { sizes?: string };
    const sizes = parseSizes(opts.sizes ?? "10k,1m");
    if ((opts.instances ?? 1) !== 1) throw new UsageError("scale runs one herald instance: leave out --instances");
    const launch = heraldLaunch(opts.herald === "binary" ? "binary" : "source");
    const notes = [
      `herald ran from ${launch.mode} with its jobs on (JOBS_ENABLED=1), ${Object.entries(HERALD_ENV)
        .map(([k, v]) => `${k}=${v}`)
        .join(", ")}`,
      `the history spans the 30 days and 1 hour before the build (${SPAN_SECONDS.toLocaleString("en-US")} s): the prune jobs find one hour of rows to delete, a steady state's hourly work`,
      "stall = max(slowest /healthz answer overlapping the operation, largest gap between two answers around it − the 20 ms interval); the prober is its own process",
      "the idle spell is shown for reference (what the scheduled jobs cost), not judged",
    ];
    if (launch.warning) notes.push(launch.warning);
    const summary: string[] = [];
    const errors: string[] = [];
    const reads: Array<{ name: string; reads: ReadTime[] }> = [];
    const engine = await openEngine(opts);
    try {
      for (const rows of sizes) {
        const r = await runSize(engine, launch, rows);
        summary.push(...r.lines, "");
        errors.push(...r.errors);
        notes.push(...r.notes);
        reads.push({ name: sizeName(rows), reads: r.reads });
      }
    } finally {
      await engine.close();
    }
    summary.push(...readsTable(reads));
    return {
      benchmark: "scale",
      description: scale.description,
      topology: engine.topology("one operation at a time from the harness, /healthz probed every 20 ms by a separate process (no wrk)"),
      results: [],
      notes,
      summary,
      errors,
    };
  },
};

export default scale;
