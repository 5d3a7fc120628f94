import type { Config } from "./config";
import { type AppContext, ContextState } from "./context";
import { cryptoRng, systemClock, type Clock, type Rng } from "./clock";
import { openDatabase } from "./db/client";
import { migrate } from "./db/migrate";
import { RateLimiter } from "./http/rate-limit";
import { RequestLog } from "./http/request-log/log";
import { JobRegistry } from "./jobs/registry";
import { createLogger, type Logger } from "./log";
import { registerSystemJobs } from "./system/jobs";
import { Metrics } from "./http/metrics";
import { verifyMasterKey } from "./auth/master-key-check";
import { resolveMasterKey } from "./auth/secret-box";
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
}

/**
 * Opens the database, applies the embedded migrations and wires the context. Starts nothing: the caller
 * (main.ts, or a test) decides whether jobs and the request-log timer run.
 */
export function openContext(config: Config, opts: ContextOptions = {}): AppContext {
  const clock = opts.clock ?? systemClock;
  const log = opts.log ?? createLogger(config.logLevel);
  const db = openDatabase(config.dbPath);
  migrate(db);
  const metrics = new Metrics({ processMetrics: config.nodeEnv !== "test" });
  const secrets = resolveMasterKey(config, log);
  // Is this the key the database was made with? A mismatch refuses sealing and makes /readyz 503; `serve`
  // refuses to start with it in production (src/auth/master-key-check.ts).
  verifyMasterKey(db.sqlite, secrets, clock.now().toISOString(), log);
  const rng = opts.rng ?? cryptoRng;
  // Built in dependency order, so that no field is ever missing: the chain client needs only the basics, the
  // webhook dispatcher everything but itself.
  const core = {
    config,
    db,
    clock,
    rng,
    log,
    metrics,
    secrets,
    jobs: new JobRegistry({ sqlite: db.sqlite, clock, log, disabled: config.jobsDisabled, onRun: (name, ok) => metrics.observeJob(name, ok) }),
    requestLog: new RequestLog(db.sqlite, log),
    rateLimiter: new RateLimiter(clock),
    startedAt: clock.now(),
    state: new ContextState(),
    chain: createChainClient({ config, db, clock, rng, log }),
  };
  const ctx: AppContext = { ...core, dispatcher: new Dispatcher(core) };
  registerSystemJobs(ctx);
  registerAuthJobs(ctx);
  registerWebhookJobs(ctx);
  registerChainJobs(ctx);
  registerAudioShareJobs(ctx);
  registerStatusJobs(ctx);
  registerTransparencyJobs(ctx);
  registerMessengerJobs(ctx);
  registerOpsJobs(ctx);
  return ctx;
}
