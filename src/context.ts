import type { Server } from "bun";
import type { Config } from "./config";
import type { Store } from "./db/port";
import type { JobRegistry } from "./jobs/registry";
import type { Logger } from "./log";
import type { RequestLog } from "./http/request-log/log";
import type { RateLimiter } from "./http/rate-limit/rate-limit";
import type { Metrics } from "./http/metrics";
import type { SecretBox } from "./auth/secret-box";
import type { ChainClient } from "./solana/rpc-client";
import type { Clock, Rng } from "./clock";

/** Everything a verb may touch, passed in — never imported as a global. */
export interface AppContext {
  config: Config;
  /**
   * The storage port (docs/design.md §8a): SQLite over the file, or PostgreSQL (DATABASE_URL). Every domain reaches
   * the database only through it.
   */
  store: Store;
  /** This instance's name in job runs and job leases (HERALD_INSTANCE_ID, or <hostname>-<pid>-<random>). */
  instanceId: string;
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
  /**
   * The per-context state modules keep (a sender, a store, a cache, a listener set): each declared as a Slot by the
   * module that owns it and made on first use, so it lives and dies with this context — never in a module-level
   * map — and `state.names()` says what a context holds.
   */
  state: ContextState;
  /** When the context was made (a start): answers that change only with a restart date themselves from it (Last-Modified, preflight). */
  startedAt: Date;
  /**
   * Where this process itself answers HTTP (`http://127.0.0.1:<bound port>`), set by `serve` once it listens;
   * unset when not serving (tests, CLI commands). The synthetic probes call Herald's own endpoints here.
   */
  listenUrl?: string;
  /**
   * The listening server, set by `serve` with listenUrl: the HTTP core asks it for a request's client address. Read
   * from here rather than from each request's context, where Elysia would then define it on every request.
   */
  server?: Server<unknown>;
  /**
   * Set by `serve` when SIGTERM arrives: from then on /readyz answers 503 (its `shutdown` check) while requests are
   * still served, so a load balancer takes this instance out of rotation before it stops listening.
   */
  draining?: Draining;
}

/** A stop in progress (AppContext.draining). */
export interface Draining {
  signal: string;
  since: Date;
  /** When the listening socket closes (since + SHUTDOWN_DRAIN_DELAY_MS, or earlier on a second signal). */
  stopsListeningAt: Date;
}

/** A named piece of per-context state, made from the context on first use (see AppContext.state). */
export interface Slot<T> {
  readonly name: string;
  readonly make: (ctx: AppContext) => T;
}

export const slot = <T>(name: string, make: (ctx: AppContext) => T): Slot<T> => ({ name, make });

export class ContextState {
  private readonly values = new Map<Slot<unknown>, unknown>();

  /** The slot's value in `ctx` (whose state this is), made on first use. */
  of<T>(ctx: AppContext, s: Slot<T>): T {
    if (!this.values.has(s)) this.values.set(s, s.make(ctx));
    return this.values.get(s) as T;
  }

  /** The slot's value if it was made, without making it (shutdown: stop what runs, start nothing). */
  peek<T>(s: Slot<T>): T | undefined {
    return this.values.get(s) as T | undefined;
  }

  /** The names of the slots made so far, in the order they were made. */
  names(): string[] {
    return [...this.values.keys()].map((s) => s.name);
  }
}

/** The value of `s` in `ctx`, made on first use. */
export const stateOf = <T>(ctx: AppContext, s: Slot<T>): T => ctx.state.of(ctx, s);

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
