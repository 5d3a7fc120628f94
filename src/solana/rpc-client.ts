import { AsyncLocalStorage } from "node:async_hooks";
import { Connection, PublicKey, type ConnectionConfig } from "@solana/web3.js";
import type { Config } from "../config";
import type { Clock, Rng } from "../clock";
import type { Logger } from "../log";
import { CircuitBreaker } from "./breaker";
import { ChainUnavailableError, classify, httpError, redactUrls, RpcCallError, timeoutError, type RpcOutcome } from "./rpc-errors";
import { streamProgramAccounts, type ScanRequest, type ScanResult } from "./scan-call";

// The one way Herald talks to Solana: an ordered list of RPC URLs, each behind a circuit breaker; every call
// has a timeout, is retried with capped exponential backoff and jitter on 429/5xx/timeouts/malformed replies,
// fails over to the next URL, and every attempt's outcome is recorded for the status checks.

export interface RpcAttemptRecord {
  at: string;
  host: string;
  method: string;
  outcome: RpcOutcome;
  httpStatus: number | null;
  latencyMs: number;
  error: string | null;
}

export interface Endpoint {
  url: string;
  /** host[:port] only: never the path or query, which may carry an API key. */
  host: string;
  connection: Connection;
  breaker: CircuitBreaker;
}

export interface ChainClientDeps {
  chain: Config["chain"];
  clock: Clock;
  rng: Rng;
  log: Logger;
  /** Called once per attempt, on the call's path: it must only hand the record over (a buffer), never write. */
  record(r: RpcAttemptRecord): void;
  /** Writes the records handed over so far (readers of the outcomes and shutdown await it). */
  flushRecords?(): Promise<unknown>;
  sleep?(ms: number): Promise<void>;
}

export interface CallResult<T> {
  value: T;
  host: string;
}

const BACKOFF_CAP_MS = 30_000;

export const hostOf = (url: string): string => new URL(url).host;
/** What we publish as rpc_url: scheme and host, no credentials, path or query. */
export const displayUrl = (url: string): string => {
  const u = new URL(url);
  return `${u.protocol}//${u.host}`;
};

/**
 * The typed error of the attempt in progress. Some web3.js methods (getBalance) re-wrap whatever the transport
 * threw into a plain Error with a message; the typed original is kept here, per call, for classification.
 */
const attemptError = new AsyncLocalStorage<{ error: RpcCallError | null }>();

/** web3.js's fetch, with our deadline over headers and body, and HTTP statuses turned into typed errors. */
function timedFetch(timeoutMs: number): NonNullable<ConnectionConfig["fetch"]> {
  const typedFetch = async (input: unknown, init?: RequestInit) => {
    try {
      const res = await fetch(input as string, { method: init?.method, headers: init?.headers, body: init?.body, signal: AbortSignal.timeout(timeoutMs) });
      const text = await res.text();
      if (!res.ok) throw httpError(res.status, res.headers.get("retry-after"));
      return new Response(text, { status: res.status, headers: { "content-type": "application/json" } });
    } catch (err) {
      const name = (err as { name?: string }).name;
      const typed =
        err instanceof RpcCallError
          ? err
          : name === "TimeoutError" || name === "AbortError"
            ? timeoutError(timeoutMs)
            : new RpcCallError("network", `cannot reach the RPC node: ${(err as Error).message ?? String(err)}`, { retryable: true, hostFault: true });
      const slot = attemptError.getStore();
      if (slot) slot.error = typed;
      throw typed;
    }
  };
  return typedFetch as unknown as NonNullable<ConnectionConfig["fetch"]>;
}

export class ChainClient {
  readonly endpoints: Endpoint[];
  private readonly sleep: (ms: number) => Promise<void>;

  constructor(private readonly deps: ChainClientDeps) {
    const rpc = deps.chain.rpc;
    this.endpoints = deps.chain.rpcUrls.map((url) => ({
      url,
      host: hostOf(url),
      connection: new Connection(url, { commitment: "confirmed", fetch: timedFetch(rpc.timeoutMs), disableRetryOnRateLimit: true, httpAgent: false }),
      breaker: new CircuitBreaker(deps.clock, rpc.breakerThreshold, rpc.breakerCooldownSeconds * 1000),
    }));
    this.sleep = deps.sleep ?? ((ms) => Bun.sleep(ms));
  }

  /** The mint is set and there is somewhere to ask (config guarantees the second when the first holds). */
  get configured(): boolean {
    return Boolean(this.deps.chain.tokenMint) && this.endpoints.length > 0;
  }

  get primaryUrl(): string | null {
    return this.endpoints[0] ? displayUrl(this.endpoints[0].url) : null;
  }

  /** Resolves once every attempt recorded so far is stored: before reading outcomes, and at shutdown. */
  async flushRecords(): Promise<void> {
    await this.deps.flushRecords?.();
  }

  health() {
    return this.endpoints.map((e) => ({ host: e.host, ...e.breaker.snapshot() }));
  }

  /**
   * Runs `fn` against the first URL whose breaker lets it through, retrying retryable failures there with
   * backoff, then the next URL. Throws ChainUnavailableError when every URL failed or was skipped.
   */
  async call<T>(method: string, fn: (ep: Endpoint) => Promise<T>): Promise<CallResult<T>> {
    const retries = this.deps.chain.rpc.retries;
    let last: RpcCallError | null = null;
    let tried = 0;
    for (const ep of this.endpoints) {
      for (let attempt = 0; attempt <= retries; attempt++) {
        if (!ep.breaker.tryAcquire()) {
          if (attempt === 0) this.record(ep, method, "breaker_open", 0, null, "circuit breaker open");
          break;
        }
        tried++;
        const t0 = performance.now();
        const slot: { error: RpcCallError | null } = { error: null };
        try {
          const value = await attemptError.run(slot, () => fn(ep));
          ep.breaker.success();
          this.record(ep, method, "ok", performance.now() - t0, null, null);
          return { value, host: ep.host };
        } catch (err) {
          const e = slot.error ?? classify(err);
          e.message = redactUrls(e.message);
          last = e;
          if (e.opts.hostFault) ep.breaker.failure(e.message);
          else ep.breaker.release();
          this.record(ep, method, e.outcome, performance.now() - t0, e.opts.httpStatus ?? null, e.message);
          if (!e.opts.retryable) break; // this URL will answer the same again; the next one may not
          if (attempt < retries) await this.sleep(this.backoffMs(attempt, e.opts.retryAfterMs));
        }
      }
    }
    const why = tried === 0 ? "every RPC URL's circuit breaker is open" : `every RPC URL failed (last: ${last?.message ?? "unknown"})`;
    throw new ChainUnavailableError(`${method}: ${why}`, last);
  }

  private backoffMs(attempt: number, retryAfterMs: number | undefined): number {
    const base = this.deps.chain.rpc.backoffMs * 2 ** attempt;
    const u = this.deps.rng.bytes(1)[0]! / 255; // ±20 % jitter so retries of many callers spread out
    const jittered = base * (0.8 + 0.4 * u);
    return Math.min(BACKOFF_CAP_MS, Math.max(jittered, retryAfterMs ?? 0));
  }

  private record(ep: Endpoint, method: string, outcome: RpcOutcome, latencyMs: number, httpStatus: number | null, error: string | null): void {
    try {
      this.deps.record({ at: this.deps.clock.now().toISOString(), host: ep.host, method, outcome, httpStatus, latencyMs: Math.round(latencyMs), error });
    } catch (err) {
      this.deps.log.warn("rpc outcome not recorded", { error: (err as Error).message });
    }
  }

  // ------------------------------------------------------------------------------------------ the calls

  tokenSupply(mint: string) {
    return this.call("getTokenSupply", (ep) => ep.connection.getTokenSupply(new PublicKey(mint)));
  }

  parsedAccount(address: string) {
    return this.call("getAccountInfo", (ep) => ep.connection.getParsedAccountInfo(new PublicKey(address)));
  }

  parsedTokenAccounts(owner: string, mint: string) {
    return this.call("getTokenAccountsByOwner", (ep) => ep.connection.getParsedTokenAccountsByOwner(new PublicKey(owner), { mint: new PublicKey(mint) }));
  }

  lamports(address: string) {
    return this.call("getBalance", (ep) => ep.connection.getBalance(new PublicKey(address)));
  }

  signatures(address: string, opts: { until?: string; before?: string; limit: number }) {
    return this.call("getSignaturesForAddress", (ep) => ep.connection.getSignaturesForAddress(new PublicKey(address), opts));
  }

  parsedTransaction(signature: string) {
    return this.call("getTransaction", (ep) => ep.connection.getParsedTransaction(signature, { maxSupportedTransactionVersion: 0, commitment: "confirmed" }));
  }

  /** Every token account of the mint, amounts only, streamed (a fresh sink per attempt: ScanRequest.begin). */
  scanTokenAccounts(req: ScanRequest): Promise<CallResult<ScanResult>> {
    return this.call("getProgramAccounts", (ep) => streamProgramAccounts(ep.url, req, this.deps.chain.rpc.scanTimeoutMs));
  }
}
