import type { Statement } from "bun:sqlite";
import type { AppContext } from "../context";
import { ChainClient } from "../solana/rpc-client";

const DAY_MS = 86_400_000;
/** Outcomes are kept a week: enough for the status checks' windows and for an incident review. */
export const RPC_CALLS_RETENTION_DAYS = 7;

/** The context's chain client: its attempts are recorded in chain_rpc_calls for the status checks. */
export function createChainClient(ctx: Pick<AppContext, "config" | "db" | "clock" | "rng" | "log">): ChainClient {
  // Prepared on the first call: the client is built for every context, also where the chain group is off
  // (PostgreSQL in preview, src/engine-groups.ts), and there is no SQLite handle to prepare on.
  let insert: Statement | null = null;
  const record = (r: { at: string; host: string; method: string; outcome: string; httpStatus: number | null; latencyMs: number; error: string | null }) => {
    insert ??= ctx.db.sqlite.prepare("INSERT INTO chain_rpc_calls (at, host, method, outcome, http_status, latency_ms, error) VALUES (?, ?, ?, ?, ?, ?, ?)");
    insert.run(r.at, r.host, r.method, r.outcome, r.httpStatus, r.latencyMs, r.error);
  };
  return new ChainClient({ chain: ctx.config.chain, clock: ctx.clock, rng: ctx.rng, log: ctx.log, record });
}

export interface RpcHostHealth {
  host: string;
  breaker: ReturnType<ChainClient["health"]>[number]["state"];
  consecutive_failures: number;
  opened_at: string | null;
  calls: number;
  failures: number;
  error_rate_pct: number | null;
  p50_latency_ms: number | null;
  last_outcome: string | null;
  last_error: string | null;
  last_success_at: string | null;
}

/**
 * Per-URL health over the last `windowMinutes`: what the status engine's RPC check reads. Failures are attempts
 * whose outcome is not ok (a retried-then-successful call shows its failed attempts too: that is the signal).
 */
export function rpcHealth(ctx: AppContext, windowMinutes = 60): { configured: boolean; window_minutes: number; hosts: RpcHostHealth[] } {
  const since = new Date(ctx.clock.now().getTime() - windowMinutes * 60_000).toISOString();
  const hosts = ctx.chain.health().map((h) => {
    const agg = ctx.db.sqlite
      .query("SELECT COUNT(*) AS calls, COALESCE(SUM(outcome <> 'ok'), 0) AS failures FROM chain_rpc_calls WHERE host = ? AND at >= ?")
      .get(h.host, since) as { calls: number; failures: number };
    const latencies = ctx.db.sqlite
      .query(
        "SELECT latency_ms FROM chain_rpc_calls WHERE host = ? AND at >= ? AND outcome = 'ok' ORDER BY latency_ms LIMIT 1 OFFSET (SELECT COUNT(*) / 2 FROM chain_rpc_calls WHERE host = ? AND at >= ? AND outcome = 'ok')",
      )
      .get(h.host, since, h.host, since) as { latency_ms: number } | null;
    const last = ctx.db.sqlite.query("SELECT outcome, error FROM chain_rpc_calls WHERE host = ? ORDER BY id DESC LIMIT 1").get(h.host) as {
      outcome: string;
      error: string | null;
    } | null;
    const lastOk = ctx.db.sqlite.query("SELECT at FROM chain_rpc_calls WHERE host = ? AND outcome = 'ok' ORDER BY id DESC LIMIT 1").get(h.host) as {
      at: string;
    } | null;
    return {
      host: h.host,
      breaker: h.state,
      consecutive_failures: h.consecutive_failures,
      opened_at: h.opened_at,
      calls: agg.calls,
      failures: agg.failures,
      error_rate_pct: agg.calls ? Math.round((agg.failures / agg.calls) * 10_000) / 100 : null,
      p50_latency_ms: latencies?.latency_ms ?? null,
      last_outcome: last?.outcome ?? null,
      last_error: last?.error ?? null,
      last_success_at: lastOk?.at ?? null,
    };
  });
  return { configured: ctx.chain.configured, window_minutes: windowMinutes, hosts };
}

export function pruneRpcCalls(ctx: AppContext): number {
  const cutoff = new Date(ctx.clock.now().getTime() - RPC_CALLS_RETENTION_DAYS * DAY_MS).toISOString();
  return ctx.db.sqlite.query("DELETE FROM chain_rpc_calls WHERE at < ?").run(cutoff).changes;
}
