import type { AppContext } from "../context";
import { recordHolderGrowth, takeHoldersSnapshot } from "./holders-snapshot";
import { pruneRpcCalls, RPC_CALLS_RETENTION_DAYS } from "./rpc-log";
import { takeMintAuthoritySnapshot, takeTokenSnapshot } from "./token-snapshot";
import { syncTransactions } from "./tx-sync";

/** The chain jobs by name, in the order the rollup proof lists them. */
export const CHAIN_JOBS = ["token-snapshot", "holders-snapshot", "mint-authority-snapshot", "transaction-sync", "holder-growth"] as const;
export type ChainJob = (typeof CHAIN_JOBS)[number];

/**
 * Registers the chain jobs. Each run is recorded in job_runs by the registry and writes one immutable snapshot
 * row naming that run. Without TOKEN_MINT they stay listed but do nothing, and their scheduled ticks leave no
 * job_runs rows (quietWhenIdle): an unconfigured chain is not a healthy one, nor a failing one.
 */
export function registerChainJobs(ctx: AppContext): void {
  const configured = ctx.chain.configured;
  const s = ctx.config.chain.schedules;
  const job = (name: ChainJob, pattern: string, description: string, work: (ctx: AppContext, runId: number | null) => Promise<unknown>) =>
    ctx.jobs.register({
      name,
      pattern,
      description: configured ? description : `${description} (idle: TOKEN_MINT is not set)`,
      quietWhenIdle: !configured,
      run: async ({ runId }) => {
        if (!configured) {
          ctx.log.debug("chain job skipped: TOKEN_MINT is not set", { job: name });
          return { idle: true };
        }
        const out = (await work(ctx, runId)) as { id?: number } | undefined;
        ctx.log.info("chain snapshot written", { job: name, run_id: runId, snapshot_id: out?.id ?? null });
        return { idle: false };
      },
    });
  job("token-snapshot", s.tokenSnapshot, "Supply, treasury and reserve balances, circulating supply (CHAIN_TOKEN_SNAPSHOT_CRON)", takeTokenSnapshot);
  job("holders-snapshot", s.holdersSnapshot, "Scans every token account of the mint (amounts only): holders and top-1/5/10 concentration", takeHoldersSnapshot);
  job(
    "mint-authority-snapshot",
    s.mintAuthority,
    "Mint and freeze authority against EXPECTED_MINT_AUTHORITY / EXPECTED_FREEZE_AUTHORITY",
    takeMintAuthoritySnapshot,
  );
  job("transaction-sync", s.transactionSync, "Stores new signatures of the treasury, reserve and mint addresses with their token deltas", syncTransactions);
  job("holder-growth", s.holderGrowth, "Records a holder-count point from the latest holders snapshot", recordHolderGrowth);
  ctx.metrics.gauge(
    "herald_chain_rpc_breakers_open",
    "Solana RPC URLs whose circuit breaker is open or half-open.",
    () => ctx.chain.health().filter((e) => e.state !== "closed").length,
  );
  ctx.jobs.register({
    name: "chain-rpc-prune",
    pattern: "0 31 4 * * *",
    description: `Deletes RPC call outcomes older than ${RPC_CALLS_RETENTION_DAYS} days`,
    run: async () => {
      // Bounded in time: rows the bound left (done: false) go at the next day's run.
      const { deleted, done } = await pruneRpcCalls(ctx);
      ctx.log.info("rpc call outcomes pruned", { deleted, done });
    },
  });
}
