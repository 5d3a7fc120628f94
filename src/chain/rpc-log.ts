import type { AppContext } from "../context";
import { type BatchedDeleteResult, DAILY_PRUNE_MAX_MS } from "../db/batched-delete";
import { BufferedWriter } from "../db/buffered-writer";
import type { Store } from "../db/port";
import { errorFields, type Logger } from "../log";
import { ChainClient, type RpcAttemptRecord } from "../solana/rpc-client";
import { hostLatest, hostWindow, insertCalls, pruneCalls } from "./store/rpc-calls";

const DAY_MS = 86_400_000;
/** Outcomes are kept a week: enough for the status checks' windows and for an incident review. */
export const RPC_CALLS_RETENTION_DAYS = 7;

/** Attempts past this are dropped (and counted) rather than letting a stuck database grow memory without bound. */
const MAX_BUFFERED = 20_000;
const BATCH_WHEN = 500;
/** How long an attempt may wait in memory before its batch is written (the status check flushes before it reads). */
const FLUSH_AFTER_MS = 1000;

/**
 * The RPC attempts, recorded off the call's path (src/db/buffered-writer.ts): an attempt is pushed onto an in-memory
 * buffer, and the buffer is written in one transaction through the storage port about a second after its first row
 * (sooner when it fills, and whenever a reader or shutdown flushes it). A write never delays or fails an RPC call.
 * The buffer is per-process and lost on a hard crash: outcomes are monitoring data, and a graceful stop flushes them.
 */
export function rpcCallLog(store: Store, log: Logger): BufferedWriter<RpcAttemptRecord> {
  return new BufferedWriter<RpcAttemptRecord>({
    maxBuffered: MAX_BUFFERED,
    batchRows: BATCH_WHEN,
    flushAfterMs: FLUSH_AFTER_MS,
    write: async (rows) => {
      await store.tx((t) => insertCalls(t, rows));
    },
    failed: (err, rows) => log.warn("rpc outcomes not written; kept for the next flush", { rows, ...errorFields(err) }),
  });
}

/** The context's chain client: its attempts are recorded in chain_rpc_calls (in batches) for the status checks. */
export function createChainClient(ctx: Pick<AppContext, "config" | "store" | "clock" | "rng" | "log">): ChainClient {
  const calls = rpcCallLog(ctx.store, ctx.log);
  return new ChainClient({
    chain: ctx.config.chain,
    clock: ctx.clock,
    rng: ctx.rng,
    log: ctx.log,
    record: (r) => calls.record(r),
    flushRecords: () => calls.flush(),
  });
}

/**
 * Per-URL health over the last `windowMinutes`: what the status engine's RPC check reads. Failures are attempts
 * whose outcome is not ok (a retried-then-successful call shows its failed attempts too: that is the signal).
 * Breakers are this instance's; the outcomes are every instance's.
 */
export async function rpcHealth(ctx: AppContext, windowMinutes = 60) {
  await ctx.chain.flushRecords(); // buffered off the call path: judge the latest attempts too
  const since = new Date(ctx.clock.now().getTime() - windowMinutes * 60_000).toISOString();
  const hosts = [];
  for (const h of ctx.chain.health()) {
    const w = await hostWindow(ctx.store, h.host, since);
    const { last, lastOkAt } = await hostLatest(ctx.store, h.host);
    hosts.push({
      host: h.host,
      breaker: h.state,
      consecutive_failures: h.consecutive_failures,
      opened_at: h.opened_at,
      calls: w.calls,
      failures: w.failures,
      error_rate_pct: w.calls ? Math.round((w.failures / w.calls) * 10_000) / 100 : null,
      p50_latency_ms: w.p50_latency_ms,
      last_outcome: last?.outcome ?? null,
      last_error: last?.error ?? null,
      last_success_at: lastOkAt,
    });
  }
  return { configured: ctx.chain.configured, window_minutes: windowMinutes, hosts };
}

/** The chain-rpc-prune job (daily): in bounded batches, with a day's time bound; `done: false` leaves the rest for tomorrow. */
export async function pruneRpcCalls(ctx: AppContext): Promise<BatchedDeleteResult> {
  const cutoff = new Date(ctx.clock.now().getTime() - RPC_CALLS_RETENTION_DAYS * DAY_MS).toISOString();
  return pruneCalls(ctx.store, cutoff, { maxMs: DAILY_PRUNE_MAX_MS });
}
