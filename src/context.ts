import type { Config } from "./config";
import type { DbHandle } from "./db/client";
import type { JobRegistry } from "./jobs/registry";
import type { Logger } from "./log";
import type { RequestLog } from "./http/request-log/log";
import type { RateLimiter } from "./http/rate-limit";
import type { Metrics } from "./http/metrics";
import type { SecretBox } from "./auth/secret-box";
import type { ChainClient } from "./solana/rpc-client";
import type { Clock, Rng } from "./clock";

/** Everything a verb may touch, passed in — never imported as a global. */
export interface AppContext {
  config: Config;
  db: DbHandle;
  clock: Clock;
  rng: Rng;
  log: Logger;
  jobs: JobRegistry;
  requestLog: RequestLog;
  rateLimiter: RateLimiter;
  metrics: Metrics;
  /** AES-256-GCM under HERALD_MASTER_KEY, for secrets at rest. */
  secrets: SecretBox;
  /** Webhook delivery: producers nudge it after committing an event. */
  dispatcher: DeliveryDispatcher;
  /** Solana RPC (ordered URLs, breakers, outcome recording); inert without TOKEN_MINT. */
  chain: ChainClient;
  /** Set by main.ts once the server listens; readiness reports it. */
  startedAt: Date;
  /**
   * Where this process itself answers HTTP (`http://127.0.0.1:<bound port>`), set by `serve` once it listens;
   * unset when not serving (tests, CLI commands). The synthetic probes call Herald's own endpoints here.
   */
  listenUrl?: string;
}

/**
 * What producers, shutdown and tests need of the webhook dispatcher (src/webhooks/dispatcher.ts implements it).
 * Declared here rather than imported, because the dispatcher itself takes an AppContext.
 */
export interface DeliveryDispatcher {
  /** Schedule a pass soon (after a commit that queued deliveries). */
  nudge(): void;
  /** One pass: lease due deliveries, send them, record the outcomes. */
  runOnce(): Promise<void>;
  /** One pass that reports whether nothing was due. */
  runOnceCounted(): Promise<{ idle: boolean }>;
  /** Resolves when no pass is running. */
  idle(): Promise<void>;
}
