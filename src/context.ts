import type { Config } from "./config";
import type { DbHandle } from "./db/client";
import type { JobRegistry } from "./jobs/registry";
import type { Logger } from "./log";
import type { RequestLog } from "./http/request-log";
import type { RateLimiter } from "./http/rate-limit";
import type { Metrics } from "./system/metrics";
import type { SecretBox } from "./auth/secret-box";
import type { Dispatcher } from "./webhooks/dispatcher";
import type { ChainClient } from "./chain/client";

export interface Clock {
  now(): Date;
}

/** Randomness goes through here so tests and sandbox fixtures can be made deterministic. */
export interface Rng {
  bytes(n: number): Uint8Array;
}

export const systemClock: Clock = { now: () => new Date() };
export const cryptoRng: Rng = { bytes: (n) => crypto.getRandomValues(new Uint8Array(n)) };

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
  dispatcher: Dispatcher;
  /** Solana RPC (ordered URLs, breakers, outcome recording); inert without TOKEN_MINT. */
  chain: ChainClient;
  /** Set by main.ts once the server listens; readiness reports it. */
  startedAt: Date;
}

export const nowIso = (clock: Clock): string => clock.now().toISOString();

/** Milliseconds since 1970 by `clock`, without a Date for the system clock (for the hottest paths). */
export const epochMs = (clock: Clock): number => (clock === systemClock ? Date.now() : clock.now().getTime());
