import { startDevRpc } from "../chain/dev-rpc";
import { parsePlant, type Plantable } from "../chain/fixture-anomalies";
import { flagString, UsageError, type ParsedArgs } from "./args";

function intFlag(args: ParsedArgs, name: string, fallback: number, min: number, max: number): number {
  const raw = flagString(args, name);
  if (raw === undefined) return fallback;
  if (!/^\d+$/.test(raw) || Number(raw) < min || Number(raw) > max) throw new UsageError(`--${name} must be an integer from ${min} to ${max}`);
  return Number(raw);
}

/**
 * `herald dev-rpc`: the deterministic Solana fixture (src/chain/dev-rpc.ts) as a local JSON-RPC server, so a
 * newcomer sees live-looking chain numbers without a provider account. With --json the first stdout line is
 * {"url","mint","treasury_wallets","reserve_wallets",…} for scripts. Runs until SIGINT/SIGTERM.
 */
export function devRpcCommand(args: ParsedArgs, json: boolean): number {
  const port = intFlag(args, "port", 8899, 0, 65535);
  const holders = intFlag(args, "holders", 1000, 1, 10_000_000);
  const plantText = flagString(args, "plant");
  let plant: Plantable[] | undefined;
  try {
    plant = plantText === undefined ? undefined : parsePlant(plantText);
  } catch (err) {
    throw new UsageError((err as Error).message);
  }
  // Planted anomalies come on a clean base history (fixture-anomalies.ts), so the report shows only them.
  const transactions = intFlag(args, "transactions", plant ? 0 : 40, 0, 100_000);
  const seed = flagString(args, "seed") ?? "herald";
  const hostname = flagString(args, "host") ?? "127.0.0.1";
  // Pool wallets (LP_WALLETS) are opt-in: without the flag the chain is the same as before they existed.
  const lpWallets = intFlag(args, "lp-wallets", 0, 0, 10);
  let server: ReturnType<typeof startDevRpc>;
  try {
    server = startDevRpc({ port, hostname, holders, seed, transactions, plant, lpWallets });
  } catch (err) {
    throw new UsageError(`cannot listen on ${hostname}:${port} (${(err as Error).message}); choose another --port`);
  }
  const info = server.fixture.describe(server.url);
  const plan = server.plan;
  if (json) process.stdout.write(JSON.stringify(plan ? { ...info, plant: { env: plan.env, cases: plan.cases } } : info) + "\n");
  else {
    process.stdout.write(
      [
        `dev-rpc: a deterministic Solana JSON-RPC fixture on ${server.url} (seed ${JSON.stringify(seed)}, ${holders} holders)`,
        "Point herald at it:",
        `  export SOLANA_RPC_URLS=${server.url}`,
        `  export TOKEN_MINT=${info.mint}`,
        `  export TREASURY_WALLETS=${info.treasury_wallets.join(",")}`,
        `  export RESERVE_WALLETS=${info.reserve_wallets.join(",")}`,
        `  export LP_MINT=${info.lp_mint}`,
        ...(info.lp_wallets.length ? [`  export LP_WALLETS=${info.lp_wallets.join(",")}`] : []),
        ...Object.entries(plan?.env ?? {}).map(([k, v]) => `  export ${k}=${v}`),
        plan
          ? `then (planted: ${plan.types.join(", ")}; docs/transparency.md):\n  herald jobs run token-snapshot mint-authority-snapshot transaction-sync token-snapshot mint-authority-snapshot transaction-sync audit-anomalies && herald serve`
          : "then: herald jobs run token-snapshot && herald jobs run holders-snapshot && herald serve",
        "",
      ].join("\n"),
    );
  }
  const stop = () => void server.stop().finally(() => process.exit(0));
  process.once("SIGINT", stop);
  process.once("SIGTERM", stop);
  return -1; // keeps running
}
