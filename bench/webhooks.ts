// webhooks: how fast the dispatcher fans events out, and how long an event takes from its commit to the receiver.
// Herald's context runs IN this process (openContext over a temp DB, the real clock, jobs off); the receiver
// (bench/webhook-sink.ts, answers 204) is a child process, so the two do not share an event loop. 4 webhooks
// subscribed to salutes.credit point at the same receiver (/hook/1 … /hook/4), so every event is 4 deliveries.
// Cases, one after the other:
//   (a) receiver raw capacity: a tight loop of fetch POSTs (same body size and headers as a delivery) with
//       WEBHOOK_CONCURRENCY (16) workers — the baseline — and with WEBHOOK_PER_TARGET_CONCURRENCY (4) workers;
//   (b) backlog: --events N events committed in transactions of 100 (emitEvent through ctx.store, the storage
//       port, as producers do), then `dispatcher.runOnce()` drains them;
//       deliveries/s is deliveries ÷ drain time; commit-to-receipt here is mostly time spent waiting in the queue;
//       run with the default config (16 in flight, 4 per receiver host) and with 16 per host;
//   (c) not backlogged: 200 events/s for 5 s, one transaction each, `dispatcher.nudge()` after each commit, as
//       producers do; commit-to-receipt p50/p99 is the latency a partner sees.
// Commit time = right after the transaction commits (this process); receipt = arrival at the receiver (the
// child), both as performance.timeOrigin + performance.now(), comparable on one machine.
import { join } from "node:path";
import { tmpdir } from "node:os";
import { openContext, openContextAsync } from "../src/bootstrap";
import { loadConfig } from "../src/config";
import type { AppContext } from "../src/context";
import { systemClock } from "../src/clock";
import { createLogger } from "../src/log";
import { webhookSignature } from "../src/client/sign";
import { emitEvent, type Owner } from "../src/webhooks/outbox";
import { createWebhook } from "../src/webhooks/service";
import { openEngine, type BenchDatabase, type BenchEngine } from "./engines";
import { bareDrain } from "./webhooks-floor";
import { percentile } from "./percentiles";
import {
  databaseCpu,
  databaseJiffiesSince,
  freePort,
  progress,
  ROOT,
  startChild,
  tempDir,
  type Benchmark,
  type CaseResult,
  type RunningServer,
} from "./support";

const OWNER: Owner = { partner: "Bench", mode: "live" };
const WEBHOOKS = 4;
const BATCH = 100;
const WARMUP_EVENTS = 250;
const PACED_RATE = 200;
const PACED_SECONDS = 5;
const TARGET_PER_SEC = 2000;
const TARGET_P99_MS = 1000;
const BASELINE = "receiver raw capacity: fetch POST ×16";
const SQLITE_PREFIX = "SQLite (same run): ";
const BARE = "bare PostgreSQL dispatcher (16 in flight, 32 a lease, one-statement lease)";
const BARE_4 = "bare PostgreSQL dispatcher (32 a lease, 4 sent at once, one-statement lease)";

const wallMs = () => performance.timeOrigin + performance.now();

const round = (n: number, digits = 2) => Number(n.toFixed(digits));

/**
 * Herald's contexts over a fresh database (bench/engines.ts): the SQLite file (one context), or a database on the
 * PostgreSQL cluster shared by `engine.instances` contexts — each with its own pool and dispatcher, in this process
 * (so they share its event loop and cores; what they contend for is the database's rows, which is what two
 * dispatching instances contend for). Private targets allowed (the receiver is on 127.0.0.1), jobs off.
 */
async function openHeralds(engine: BenchEngine, dir: string, extraEnv: Record<string, string>): Promise<AppContext[]> {
  const db: BenchDatabase = await engine.database(dir);
  const env = {
    NODE_ENV: "test",
    HERALD_DB_PATH: join(dir, "herald.db"),
    LOG_LEVEL: "warn",
    JOBS_ENABLED: "0",
    WEBHOOK_ALLOW_PRIVATE_TARGETS: "1",
    ...extraEnv,
  };
  const log = createLogger("warn", (l) => process.stderr.write(l + "\n"));
  if (db.kind === "sqlite") return [openContext(loadConfig(env), { clock: systemClock, log })];
  const ctxs: AppContext[] = [];
  for (let i = 0; i < engine.instances; i++) {
    const config = loadConfig({ ...env, ...db.env, HERALD_INSTANCE_ID: `bench-${i}` });
    ctxs.push(await openContextAsync(config, { clock: systemClock, log }));
  }
  return ctxs;
}

/** One pass of every instance's dispatcher at once. */
const dispatchAll = (ctxs: AppContext[]) => Promise.all(ctxs.map((c) => c.dispatcher.runOnce()));

async function createWebhooks(ctx: AppContext, sink: RunningServer): Promise<void> {
  for (let i = 1; i <= WEBHOOKS; i++) {
    await ctx.store.tx((t) => createWebhook(t, ctx, OWNER, { event_type: "salutes.credit", target_url: `${sink.baseUrl}/hook/${i}` }));
  }
}

let ledgerId = 0;
const creditData = () => {
  ledgerId++;
  return {
    user_id: String(1000 + (ledgerId % 997)),
    delta: 12.5,
    balance: 100 + ledgerId / 100,
    ledger_entry_id: ledgerId,
    reason: "quest",
    source: "partner-app",
  };
};

/** Commits `n` events in transactions of `batch` through the storage port, as producers do; records each event's commit time. */
async function emitBatched(ctx: AppContext, n: number, batch: number, commits: Map<string, number>): Promise<void> {
  for (let done = 0; done < n; done += batch) {
    const ids = await ctx.store.tx(async (t) => {
      const out: string[] = [];
      for (let i = 0; i < Math.min(batch, n - done); i++) out.push((await emitEvent(t, ctx, OWNER, "salutes.credit", creditData())).publicId);
      return out;
    });
    const at = wallMs();
    for (const id of ids) commits.set(id, at);
  }
}

const pendingDeliveries = async (ctx: AppContext) =>
  (await ctx.store.get<{ n: number }>("SELECT count(*) AS n FROM webhook_deliveries WHERE status IN ('queued', 'processing')"))!.n;

const statusCounts = async (ctx: AppContext) =>
  Object.fromEntries(
    (await ctx.store.all<{ status: string; n: number }>("SELECT status, count(*) AS n FROM webhook_deliveries GROUP BY status")).map((r) => [r.status, r.n]),
  );

/** Empties the delivery tables between the warmup and the measured case. */
const clearDeliveries = (ctx: AppContext) =>
  ctx.store.tx(async (t) => {
    for (const table of ["webhook_attempts", "webhook_deliveries", "events"]) await t.run(`DELETE FROM ${table}`);
  });

async function closeHerald(ctx: AppContext): Promise<void> {
  await ctx.dispatcher.idle();
  await ctx.store.close();
  await ctx.store.close();
}

async function sinkJson<T>(sink: RunningServer, path: string): Promise<T> {
  const res = await fetch(sink.baseUrl + path, { signal: AbortSignal.timeout(10_000) });
  return (await res.json()) as T;
}

/** Waits (bounded) until the receiver has counted `n` hook deliveries. */
async function waitForHooks(sink: RunningServer, n: number, timeoutMs: number): Promise<number> {
  const deadline = Date.now() + timeoutMs;
  let seen = 0;
  for (let i = 0; i < timeoutMs / 50 && Date.now() < deadline; i++) {
    seen = (await sinkJson<{ hooks: number }>(sink, "/count")).hooks;
    if (seen >= n) return seen;
    await Bun.sleep(50);
  }
  return seen;
}

interface Matched {
  delays: number[];
  missing: number;
  duplicates: number;
  firstCommit: number;
  lastReceipt: number;
}

/** Matches receipts to commits: one receipt per (webhook path, event id) expected. */
async function collect(sink: RunningServer, commits: Map<string, number>): Promise<Matched> {
  const arrivals = await sinkJson<Array<[string, string, number]>>(sink, "/arrivals?clear=1");
  const seen = new Set<string>();
  const delays: number[] = [];
  let duplicates = 0;
  let lastReceipt = 0;
  for (const [path, id, at] of arrivals) {
    const commit = commits.get(id);
    if (commit === undefined) continue; // not from this case
    const k = `${path} ${id}`;
    if (seen.has(k)) {
      duplicates++;
      continue;
    }
    seen.add(k);
    delays.push(at - commit);
    lastReceipt = Math.max(lastReceipt, at);
  }
  delays.sort((a, b) => a - b);
  return { delays, missing: commits.size * WEBHOOKS - seen.size, duplicates, firstCommit: Math.min(...commits.values()), lastReceipt };
}

/** (a) The receiver's capacity with the client doing only fetch: `workers` loops, `total` POSTs. */
async function rawCapacity(sink: RunningServer, workers: number, total: number): Promise<{ perSec: number; p50: number; p99: number; failed: number }> {
  const body = JSON.stringify({ event_id: "evt_" + "0".repeat(24), event_type: "salutes.credit", data: creditData() });
  const ts = Math.floor(Date.now() / 1000);
  const headers = {
    "content-type": "application/json",
    "user-agent": "Herald-Webhooks/1",
    "x-webhook-id": "evt_" + "0".repeat(24),
    "x-webhook-event": "salutes.credit",
    "x-webhook-timestamp": String(ts),
    "x-webhook-signature": webhookSignature("whsec_bench", ts, body),
  };
  const latencies: number[] = [];
  let next = 0;
  let failed = 0;
  const started = performance.now();
  await Promise.all(
    Array.from({ length: workers }, async () => {
      while (next < total) {
        next++;
        const t = performance.now();
        const res = await fetch(`${sink.baseUrl}/raw/1`, { method: "POST", headers, body, redirect: "manual" });
        await res.arrayBuffer();
        if (res.status !== 204) failed++;
        latencies.push(performance.now() - t);
      }
    }),
  );
  const seconds = (performance.now() - started) / 1000;
  latencies.sort((a, b) => a - b);
  await sinkJson(sink, "/arrivals?clear=1");
  return { perSec: total / seconds, p50: percentile(latencies, 0.5), p99: percentile(latencies, 0.99), failed };
}

interface CaseOutcome {
  result: CaseResult;
  notes: string[];
  errors: string[];
}

function caseResult(label: string, url: string, perSec: number, m: Matched, notSucceeded: number, count: number): CaseResult {
  return {
    case: label,
    url,
    requests_per_sec: round(perSec, 1),
    p50_ms: round(percentile(m.delays, 0.5), 3),
    p99_ms: round(percentile(m.delays, 0.99), 3),
    non_2xx: notSucceeded,
    errors: m.missing + m.duplicates,
    requests: count,
    ratio_vs_baseline: null,
  };
}

function checkCase(label: string, m: Matched, statuses: Record<string, number>, expected: number): string[] {
  const errors: string[] = [];
  if ((statuses.succeeded ?? 0) !== expected)
    errors.push(`${label}: ${statuses.succeeded ?? 0} of ${expected} deliveries succeeded (${JSON.stringify(statuses)})`);
  if (m.missing > 0) errors.push(`${label}: ${m.missing} deliveries never reached the receiver`);
  return errors;
}

/** (b) Commit everything, then drain. */
async function backlog(
  engine: BenchEngine,
  label: string,
  dir: string,
  sink: RunningServer,
  events: number,
  extraEnv: Record<string, string>,
  bare = false,
): Promise<CaseOutcome> {
  const ctxs = await openHeralds(engine, dir, extraEnv);
  const ctx = ctxs[0]!;
  // (b′, PostgreSQL only) `bare`: the bare PostgreSQL dispatcher (bench/webhooks-floor.ts) drains herald's tables,
  // the floor for any dispatcher on this machine; herald's contexts only set up the webhooks and commit the events.
  const cfg = ctx.config;
  const drain = bare
    ? () => bareDrain(cfg.database.url!, { inFlight: cfg.webhooks.concurrency, poolMax: cfg.database.poolMax, sends: cfg.webhooks.perTargetConcurrency })
    : async () => {
        for (let pass = 0; pass < 20 && (await pendingDeliveries(ctx)) > 0; pass++) await dispatchAll(ctxs);
      };
  try {
    await createWebhooks(ctx, sink);
    // Warmup: JIT, prepared statements, keep-alive connections.
    await emitBatched(ctx, WARMUP_EVENTS, BATCH, new Map());
    await drain();
    await waitForHooks(sink, WARMUP_EVENTS * WEBHOOKS, 30_000);
    await sinkJson(sink, "/arrivals?clear=1");
    await clearDeliveries(ctx);

    progress(
      `${label}: committing ${events.toLocaleString("en-US")} events (${(events * WEBHOOKS).toLocaleString("en-US")} deliveries) in transactions of ${BATCH}`,
    );
    const commits = new Map<string, number>();
    const emitStart = performance.now();
    await emitBatched(ctx, events, BATCH, commits);
    const emitSeconds = (performance.now() - emitStart) / 1000;
    // PostgreSQL plans from table statistics; a table filled seconds ago has none until autovacuum's ANALYZE runs
    // (about a minute later): take them now, as a database in service already has them.
    if (ctx.store.dialect === "postgres") await ctx.store.run("ANALYZE");

    progress(`${label}: draining${bare ? "" : ` with dispatcher.runOnce() on ${ctxs.length} instance(s)`}`);
    const started = performance.now();
    const databaseBefore = databaseCpu();
    const ownBefore = process.cpuUsage();
    const countsBefore = ctxs.map((c) => ({ ...c.store.health.counts }));
    await drain();
    const drainSeconds = (performance.now() - started) / 1000;
    const own = process.cpuUsage(ownBefore);
    const databaseJiffies = databaseJiffiesSince(databaseBefore);
    const work = (k: "statements" | "roundTrips" | "commits") => ctxs.reduce((n, c, i) => n + c.store.health.counts[k] - countsBefore[i]![k], 0);
    await waitForHooks(sink, events * WEBHOOKS, 30_000);
    const m = await collect(sink, commits);
    const statuses = await statusCounts(ctx);
    const expected = events * WEBHOOKS;
    const perSec = expected / drainSeconds;
    const endToEnd = expected / ((m.lastReceipt - m.firstCommit) / 1000);
    const settings = bare
      ? `${cfg.webhooks.concurrency} in flight, no per-host limit, pool ${cfg.database.poolMax}`
      : `WEBHOOK_CONCURRENCY=${cfg.webhooks.concurrency}, WEBHOOK_PER_TARGET_CONCURRENCY=${cfg.webhooks.perTargetConcurrency}`;
    return {
      result: caseResult(label, `${sink.baseUrl}/hook/{1..${WEBHOOKS}}`, perSec, m, expected - (statuses.succeeded ?? 0), expected),
      notes: [
        `${label}: ${settings}; ` +
          `committed ${events.toLocaleString("en-US")} events in ${emitSeconds.toFixed(2)} s (${Math.round(events / emitSeconds).toLocaleString("en-US")} events/s, ` +
          `${Math.round(expected / emitSeconds).toLocaleString("en-US")} deliveries queued/s); drained ${expected.toLocaleString("en-US")} deliveries in ${drainSeconds.toFixed(2)} s; ` +
          `end to end (first commit → last receipt) ${Math.round(endToEnd).toLocaleString("en-US")} deliveries/s; ${m.duplicates} duplicate receipts`,
        ...drainCpuNote(label, bare ? "the bare dispatcher" : "herald's dispatcher", own.user + own.system, databaseJiffies, expected),
        ...(ctx.store.dialect === "postgres" && !bare
          ? [
              `${label}: per delivery while draining: ${(work("statements") / expected).toFixed(2)} statements, ${(work("roundTrips") / expected).toFixed(2)} round trips; ${(expected / Math.max(1, work("commits"))).toFixed(1)} deliveries a commit`,
            ]
          : []),
      ],
      errors: checkCase(label, m, statuses, expected),
    };
  } finally {
    for (const c of ctxs) await closeHerald(c);
  }
}

/**
 * CPU per delivery over a drain: herald's dispatcher (this process: the instances run in it) and, on PostgreSQL, the
 * database's own processes, with the ceiling the latter sets on the machine's cores for any dispatcher.
 */
function drainCpuNote(label: string, dispatcher: string, ownUs: number, databaseJiffies: number, deliveries: number): string[] {
  const per = (us: number) => (us / deliveries).toFixed(1);
  const cores = navigator.hardwareConcurrency;
  const database =
    databaseJiffies > 0
      ? `; PostgreSQL ${per(databaseJiffies * 10_000)} µs (on ${cores} cores, a ceiling of ${Math.round((cores * 1_000_000 * deliveries) / (databaseJiffies * 10_000)).toLocaleString("en-US")} deliveries/s for its statements alone)`
      : "";
  return [`${label}: CPU per delivery while draining: ${dispatcher} (this process) ${per(ownUs)} µs${database}`];
}

/** (c) Paced single-event commits with a nudge after each, as producers do. */
async function paced(engine: BenchEngine, label: string, dir: string, sink: RunningServer): Promise<CaseOutcome> {
  const ctxs = await openHeralds(engine, dir, {});
  const ctx = ctxs[0]!;
  try {
    await createWebhooks(ctx, sink);
    await emitBatched(ctx, WARMUP_EVENTS, BATCH, new Map());
    await dispatchAll(ctxs);
    await waitForHooks(sink, WARMUP_EVENTS * WEBHOOKS, 30_000);
    await sinkJson(sink, "/arrivals?clear=1");
    await clearDeliveries(ctx);

    const total = PACED_RATE * PACED_SECONDS;
    progress(`${label}: ${PACED_RATE} events/s for ${PACED_SECONDS} s, one transaction each, nudge after each commit`);
    const commits = new Map<string, number>();
    const start = performance.now();
    let late = 0;
    for (let i = 0; i < total; i++) {
      const due = start + (i * 1000) / PACED_RATE;
      const wait = due - performance.now();
      if (wait > 0) await Bun.sleep(wait);
      else late++;
      const id = (await ctx.store.tx((t) => emitEvent(t, ctx, OWNER, "salutes.credit", creditData()))).publicId;
      commits.set(id, wallMs());
      for (const c of ctxs) c.dispatcher.nudge();
    }
    const emitSeconds = (performance.now() - start) / 1000;
    await waitForHooks(sink, total * WEBHOOKS, 30_000);
    for (let i = 0; i < 200 && (await pendingDeliveries(ctx)) > 0; i++) await Bun.sleep(50);
    const m = await collect(sink, commits);
    const statuses = await statusCounts(ctx);
    const expected = total * WEBHOOKS;
    const perSec = expected / ((m.lastReceipt - m.firstCommit) / 1000);
    return {
      result: caseResult(label, `${sink.baseUrl}/hook/{1..${WEBHOOKS}}`, perSec, m, expected - (statuses.succeeded ?? 0), expected),
      notes: [
        `${label}: ${total} events committed over ${emitSeconds.toFixed(2)} s (${late} commits were behind schedule); ` +
          `commit-to-receipt max ${m.delays.length ? m.delays[m.delays.length - 1]!.toFixed(2) : "?"} ms; ${m.duplicates} duplicate receipts`,
      ],
      errors: checkCase(label, m, statuses, expected),
    };
  } finally {
    for (const c of ctxs) await closeHerald(c);
  }
}

const webhooks: Benchmark = {
  name: "webhooks",
  description: "webhook fan-out: dispatcher deliveries/s and commit-to-receipt latency vs the receiver's raw capacity",
  async run(opts) {
    const events = opts.events ?? 5000;
    const dir = tempDir("webhooks");
    const results: CaseResult[] = [];
    const notes: string[] = [
      "columns for this benchmark: req/s = deliveries/s; p50/p99 = commit-to-receipt (raw rows: request latency); non-2xx = deliveries not succeeded; errors = deliveries missing or received twice",
    ];
    const errors: string[] = [];
    let sink: RunningServer | undefined;
    const engine = await openEngine(opts);
    try {
      const port = await freePort();
      progress("starting the receiver (bench/webhook-sink.ts)");
      sink = await startChild(
        "webhook-sink",
        [process.execPath, join(ROOT, "bench", "webhook-sink.ts")],
        { PATH: process.env.PATH ?? "/usr/bin:/bin", HOME: process.env.HOME ?? "/tmp", TMPDIR: tmpdir(), PORT: String(port) },
        "/ready",
        join(dir.path, "sink.log"),
        port,
      );
      const deliveries = events * WEBHOOKS;

      progress(`${BASELINE}: warmup, then ${deliveries.toLocaleString("en-US")} POSTs`);
      await rawCapacity(sink, 16, 2000);
      const raw16 = await rawCapacity(sink, 16, deliveries);
      const raw4 = await rawCapacity(sink, 4, deliveries);
      const rawRow = (label: string, r: typeof raw16): CaseResult => ({
        case: label,
        url: `${sink!.baseUrl}/raw/1`,
        requests_per_sec: round(r.perSec, 1),
        p50_ms: round(r.p50, 3),
        p99_ms: round(r.p99, 3),
        non_2xx: r.failed,
        errors: 0,
        requests: deliveries,
        ratio_vs_baseline: null,
      });
      results.push(rawRow(BASELINE, raw16), rawRow("receiver raw capacity: fetch POST ×4", raw4));

      const outcomes = [
        await backlog(engine, "dispatcher, backlog, defaults (16 in flight, 4 per host)", join(dir.path, "a"), sink, events, {}),
        await backlog(engine, "dispatcher, backlog, 16 per host", join(dir.path, "b"), sink, events, { WEBHOOK_PER_TARGET_CONCURRENCY: "16" }),
        await paced(engine, `dispatcher, not backlogged (${PACED_RATE} events/s × ${WEBHOOKS}, nudged)`, join(dir.path, "c"), sink),
      ];
      if (engine.kind === "postgres") {
        // The issue's yardstick in the same run: herald on SQLite (the same two backlogs), and the bare PostgreSQL
        // dispatcher's floor.
        const sqlite = await openEngine({});
        outcomes.push(
          await backlog(sqlite, `${SQLITE_PREFIX}dispatcher, backlog, defaults (16 in flight, 4 per host)`, join(dir.path, "d"), sink, events, {}),
          await backlog(sqlite, `${SQLITE_PREFIX}dispatcher, backlog, 16 per host`, join(dir.path, "e"), sink, events, {
            WEBHOOK_PER_TARGET_CONCURRENCY: "16",
          }),
          await backlog(engine, BARE_4, join(dir.path, "f4"), sink, events, {}, true),
          await backlog(engine, BARE, join(dir.path, "f"), sink, events, { WEBHOOK_PER_TARGET_CONCURRENCY: "16" }, true),
        );
      }
      for (const o of outcomes) {
        results.push(o.result);
        notes.push(...o.notes);
        errors.push(...o.errors);
      }
    } finally {
      if (sink) {
        const code = await sink.stop();
        if (code !== 0) notes.push(`receiver exited ${code === null ? "KILLED after grace" : code}`);
      }
      await engine.close();
      dir.remove();
    }

    const base = results.find((r) => r.case === BASELINE)!.requests_per_sec;
    const withRatios = results.map((r) => ({ ...r, ratio_vs_baseline: base > 0 ? round(r.requests_per_sec / base, 3) : null }));
    const defaults = withRatios[2]!;
    const best = Math.max(withRatios[2]!.requests_per_sec, withRatios[3]!.requests_per_sec);
    const calm = withRatios[4]!;
    const rate = (label: string) => withRatios.find((r) => r.case === label)?.requests_per_sec;
    const sqliteDefaults = rate(`${SQLITE_PREFIX}dispatcher, backlog, defaults (16 in flight, 4 per host)`);
    const sqlitePerHost = rate(`${SQLITE_PREFIX}dispatcher, backlog, 16 per host`);
    const bare = rate(BARE);
    const bare4 = rate(BARE_4);
    const x = (a: number, b: number) => `${(a / b).toFixed(2)}×`;
    const sameRun =
      sqliteDefaults && sqlitePerHost && bare && bare4
        ? [
            // The issue's figure (0.29× when it was filed: 2,790 against 9,535 deliveries/s) is the defaults backlog's; the
            // 16-per-host ratio is shown beside it, with what the bare dispatcher reaches there.
            `target (issue 49) PostgreSQL ≥ 0.7× SQLite in the same run, defaults: ${x(defaults.requests_per_sec, sqliteDefaults)} ` +
              `${defaults.requests_per_sec >= 0.7 * sqliteDefaults ? "MET" : "NOT MET"}; 16 per host ${x(withRatios[3]!.requests_per_sec, sqlitePerHost)}; ` +
              `the bare PostgreSQL dispatcher ${x(bare4, sqliteDefaults)} of SQLite's defaults with 4 sent at once (herald defaults ÷ bare ${x(defaults.requests_per_sec, bare4)}), ` +
              `${x(bare, sqlitePerHost)} of SQLite's 16 per host with 16 (herald 16 per host ÷ bare ${x(withRatios[3]!.requests_per_sec, bare)})`,
          ]
        : [];
    const summary = [
      ...sameRun,
      `target ≥ ${TARGET_PER_SEC.toLocaleString("en-US")} deliveries/s: defaults ${Math.round(defaults.requests_per_sec).toLocaleString("en-US")}/s ${defaults.requests_per_sec >= TARGET_PER_SEC ? "MET" : "NOT MET"}; ` +
        `best configuration ${Math.round(best).toLocaleString("en-US")}/s ${best >= TARGET_PER_SEC ? "MET" : "NOT MET"}`,
      `target commit-to-receipt p99 < ${TARGET_P99_MS} ms when not backlogged: p99 ${calm.p99_ms.toFixed(2)} ms ${calm.p99_ms < TARGET_P99_MS ? "MET" : "NOT MET"} (p50 ${calm.p50_ms.toFixed(2)} ms)`,
    ];
    return {
      benchmark: "webhooks",
      description: webhooks.description,
      topology: engine.topology(
        engine.kind === "sqlite"
          ? "herald's context runs in the benchmark's process, the receiver is a child process"
          : `the ${engine.instances} dispatching instance(s) are contexts in the benchmark's process, each with its own pool and dispatcher; the receiver is a child process`,
      ),
      results: withRatios,
      notes,
      summary,
      ratios: { defaults_vs_raw16: defaults.ratio_vs_baseline, per_host_16_vs_raw16: withRatios[3]!.ratio_vs_baseline },
      errors,
    };
  },
};

export default webhooks;
