import type { Config } from "./config";
import { type AppContext, ContextState } from "./context";
import { cryptoRng, systemClock, type Clock, type Rng } from "./clock";
import { hostname } from "node:os";
import { openDatabase } from "./db/client";
import type { SyncQueryable } from "./db/sqlite-file";
import { migrate } from "./db/migrate";
import type { StoreHealth } from "./db/health";
import type { Store } from "./db/port";
import { SqliteStore } from "./db/sqlite-engine";
import { PostgresStore } from "./db/postgres-engine";
import { migratePostgres } from "./db/postgres-migrate";
import { startError, waitUntilWritable, warnIfSessionSettingsIgnored } from "./db/postgres-start";
import { RateLimiter } from "./http/rate-limit/rate-limit";
import { RequestLog } from "./http/request-log/log";
import { JobRegistry } from "./jobs/registry";
import { createLogger, type Logger } from "./log";
import { registerSystemJobs } from "./system/jobs";
import { Metrics } from "./http/metrics";
import { verifyMasterKey, verifyMasterKeyOnStore } from "./auth/master-key-check";
import { checkSalutesDecimals, checkSalutesDecimalsSync } from "./salutes/decimals-check";
import { resolveMasterKey, type SecretBox } from "./auth/secret-box";
import { registerAuthJobs } from "./auth/jobs";
import { Dispatcher } from "./webhooks/dispatcher";
import { registerWebhookJobs } from "./webhooks/jobs";
import { registerChainJobs } from "./chain/jobs";
import { registerAudioShareJobs } from "./audio-share/jobs";
import { registerStatusJobs } from "./status/jobs";
import { registerTransparencyJobs } from "./transparency/jobs";
import { registerMessengerJobs } from "./messenger/jobs";
import { registerOpsJobs } from "./ops/jobs";
import { createChainClient } from "./chain/rpc-log";

export interface ContextOptions {
  clock?: Clock;
  rng?: Rng;
  log?: Logger;
  /**
   * The master key, found and judged by the caller (the CLI's commands, src/cli/master-key.ts, which never generate
   * one for a database that expects another). Without it the key is HERALD_MASTER_KEY or the development key file,
   * generated when missing. One already refused (a read-only command without the database's key) is not checked
   * again at start: nothing is recorded for it and no mismatch is logged; it seals and opens nothing.
   */
  secrets?: SecretBox;
  /** PostgreSQL: wait for a server that answers but takes no writes (a standby, a read-only database) instead of
   * failing: what `serve` does (src/db/postgres-start.ts); a CLI command fails at once. */
  waitForWritable?: boolean;
}

/**
 * Opens the SQLite file, applies the embedded migrations and wires the context. Starts nothing: the caller
 * (main.ts, or a test) decides whether jobs and the request-log timer run. SQLite only (it stays synchronous for
 * the tests and tools that build a context in one step); openContextAsync opens either engine.
 */
export function openContext(config: Config, opts: ContextOptions = {}): AppContext {
  if (config.database.engine !== "sqlite") throw new Error("openContext opens the SQLite file; DATABASE_URL needs openContextAsync");
  const db = openDatabase(config.dbPath);
  migrate(db);
  // The store owns the connection from here (its close() checkpoints and closes it); the synchronous handle is
  // used once more, for the master-key and salutes-decimals checks below, before the context exists.
  const store = new SqliteStore(db.sqlite, db);
  try {
    return wire(config, opts, store, db.sync);
  } catch (err) {
    // A refused start (another SALUTES_DECIMALS) leaves no open file behind.
    void store.close().catch(() => {});
    throw err;
  }
}

/**
 * The context on the configured engine: the SQLite file (as openContext), or PostgreSQL at DATABASE_URL — the
 * server must answer (a clear error otherwise), and its migrations (drizzle/postgres/) are applied, one instance
 * at a time, before anything else runs.
 */
export async function openContextAsync(config: Config, opts: ContextOptions = {}): Promise<AppContext> {
  if (config.database.engine === "sqlite") return openContext(config, opts);
  const d = config.database;
  const instanceId = instanceIdOf(config);
  // DATABASE_*'s fields are named as PostgresOptions names them.
  const store = new PostgresStore({
    ...d,
    url: d.url!,
    // Which instance a session belongs to, in pg_stat_activity (an operator ending one instance's sessions, the proof test).
    applicationName: `herald ${instanceId}`,
  });
  // Every statement of the start is inside: behind a pooler in transaction mode without prepared-statement support
  // the first to fail may be any of them (with PgBouncer 1.18, one after the migrations), and it is still said as the
  // fix. A refusal of Herald's own (another SALUTES_DECIMALS, a wrong master key in production) passes unchanged.
  try {
    if (opts.waitForWritable) await waitUntilWritable(store, opts.log ?? createLogger(config.logLevel));
    else await store.ping();
    await migratePostgres(store, (opts.clock ?? systemClock).now().toISOString());
    const ctx = wire(config, opts, store, null, instanceId);
    if (opts.waitForWritable) await warnIfSessionSettingsIgnored(store, ctx.log, d);
    if (!ctx.secrets.mismatch) await verifyMasterKeyOnStore(store, ctx.secrets, ctx.clock.now().toISOString(), ctx.log);
    await checkSalutesDecimals(store, config.salutes.decimals, ctx.clock.now().toISOString());
    return ctx;
  } catch (err) {
    await store.close().catch(() => {});
    throw startError(err);
  }
}

/** Closes the context's database (its queued transactions finish first). */
export async function closeContext(ctx: AppContext): Promise<void> {
  await ctx.store.close();
}

/** HERALD_INSTANCE_ID, or a name unique enough to tell instances (and restarts) apart in job runs and leases. */
// Made from the system's randomness, not the context's: an instance name is not game or fixture data, and drawing
// it from a seeded test rng would shift every later draw.
function instanceIdOf(config: Config): string {
  if (config.instanceId) return config.instanceId;
  const host =
    hostname()
      .replace(/[^\w.-]/g, "")
      .slice(0, 40) || "host";
  return `${host}-${process.pid}-${Buffer.from(cryptoRng.bytes(3)).toString("hex")}`;
}

/** The storage port's availability in /metrics: outages, deadlines, retries, discarded connections, 503s. */
function publishStoreHealth(metrics: Metrics, health: StoreHealth): void {
  const c = health.counts;
  metrics.gauge("herald_db_unavailable", "1 while the database is unavailable as this instance sees it (an outage in progress), else 0.", () =>
    health.down ? 1 : 0,
  );
  metrics.counter("herald_db_outages_total", "Times the database became unavailable (one warning line each).", () => c.outages);
  metrics.counter(
    "herald_db_deadlines_total",
    "PostgreSQL statements and transactions abandoned at Herald's deadline (DATABASE_*_TIMEOUT_MS).",
    () => c.deadlines,
  );
  metrics.counter("herald_db_tx_retries_total", "PostgreSQL transactions run again after a deadlock or serialization failure.", () => c.retries);
  metrics.counter(
    "herald_db_connections_discarded_total",
    "PostgreSQL connections closed instead of reused after a deadline (a transaction's, or a pool whose server stopped answering).",
    () => c.discarded,
  );
  metrics.counter(
    "herald_db_shed_total",
    "PostgreSQL statements and transactions refused at once during an outage, while one other tried the server.",
    () => c.shed,
  );
  metrics.counter("herald_db_unavailable_responses_total", "Requests answered 503 db_unavailable.", () => c.refused);
  metrics.counter(
    "herald_db_pool_exhausted_total",
    "PostgreSQL transactions refused (503) because every pooled connection stayed busy for DATABASE_ACQUIRE_TIMEOUT_MS.",
    () => c.exhausted,
  );
  metrics.counter(
    "herald_db_commits_total",
    "Commits: PostgreSQL COMMITs, SQLite write batches. Fewer than herald_db_transactions_total when transactions share one (group commit).",
    () => c.commits,
  );
  metrics.counter("herald_db_transactions_total", "Transactions committed (each in a commit of its own or in a group).", () => c.transactions);
  // The pool's gauges only where there is a pool (PostgreSQL): SQLite has one file and no connections to run out of.
  const pool = health.pool;
  if (!pool) return;
  metrics.counter("herald_db_statements_total", "PostgreSQL statements sent, BEGIN, SAVEPOINT and COMMIT included.", () => c.statements);
  metrics.counter(
    "herald_db_batches_together_total",
    "PostgreSQL batches whose bodies ran together in one transaction, without a SAVEPOINT each (credits, debits, players' game actions of different players).",
    () => c.together,
  );
  metrics.counter(
    "herald_db_batches_redone_total",
    "PostgreSQL batches whose bodies ran together (or one player's one after another, without savepoints), rolled back because one failed, then run one body at a time (each in a SAVEPOINT).",
    () => c.redone,
  );
  metrics.counter(
    "herald_db_round_trips_total",
    "PostgreSQL round trips: waits for the server. Statements sent together (pipelined on one connection) share one.",
    () => c.roundTrips,
  );
  metrics.gauge("herald_db_pool_max", "PostgreSQL connections this instance may open (DATABASE_POOL_MAX).", () => pool.max);
  metrics.gauge(
    "herald_db_pool_busy",
    "PostgreSQL statements and transactions holding or waiting for a pooled connection now; at herald_db_pool_max and above, work waits.",
    () => pool.busy,
  );
}

/** `sqliteSync`: the SQLite connection's synchronous statements, for the master-key check at start (null on PostgreSQL). */
function wire(config: Config, opts: ContextOptions, store: Store, sqliteSync: SyncQueryable | null, instanceId = instanceIdOf(config)): AppContext {
  const clock = opts.clock ?? systemClock;
  const log = opts.log ?? createLogger(config.logLevel);
  const metrics = new Metrics({ processMetrics: config.nodeEnv !== "test" });
  store.health.log = log;
  publishStoreHealth(metrics, store.health);
  const secrets = opts.secrets ?? resolveMasterKey(config, log);
  // Is this the key the database was made with? A mismatch refuses sealing and makes /readyz 503; `serve`
  // refuses to start with it in production (src/auth/master-key-check.ts).
  if (sqliteSync && !secrets.mismatch) verifyMasterKey(sqliteSync, secrets, clock.now().toISOString(), log);
  // Were the stored salutes amounts written with this SALUTES_DECIMALS? Another setting is refused (ConfigError).
  if (sqliteSync) checkSalutesDecimalsSync(sqliteSync, config.salutes.decimals, clock.now().toISOString());
  // On PostgreSQL the same check runs in openContextAsync, before the context is handed out.
  const rng = opts.rng ?? cryptoRng;
  // Built in dependency order, so that no field is ever missing: the chain client needs only the basics, the
  // webhook dispatcher everything but itself.
  const core = {
    config,
    store,
    instanceId,
    clock,
    rng,
    log,
    metrics,
    secrets,
    jobs: new JobRegistry({
      store,
      clock,
      log,
      instanceId,
      disabled: config.jobsDisabled,
      schedules: config.jobSchedules,
      health: store.health,
      onRun: (name, ok) => metrics.observeJob(name, ok),
    }),
    // The rollup catch-up runs at start on either engine (src/http/request-log/catchup.ts).
    requestLog: new RequestLog(store, log, true),
    rateLimiter: new RateLimiter(clock),
    startedAt: clock.now(),
    state: new ContextState(),
    chain: createChainClient({ config, store, clock, rng, log }),
  };
  const ctx: AppContext = { ...core, dispatcher: new Dispatcher(core) };
  for (const register of [
    registerSystemJobs,
    registerAuthJobs,
    registerWebhookJobs,
    registerChainJobs,
    registerAudioShareJobs,
    registerStatusJobs,
    registerTransparencyJobs,
    registerMessengerJobs,
    registerOpsJobs,
  ])
    register(ctx);
  ctx.jobs.assertSchedulesKnown();
  return ctx;
}
