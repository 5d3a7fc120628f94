import { openTestApp, type TestApp } from "../support/app";
import { FakeClock } from "../support/clock";
import { chainEnv, startSolanaRpc, type DevRpcServer } from "../support/solana-rpc";
import { job, T0 } from "./support";

// Runs with chosen counts: each round adds `outflows` treasury → holder transfers of `amount` raw units (each an
// untracked_outflow) and `internal` reserve → treasury moves (clean rows), syncs and runs the audit.

export interface CountsWorld {
  h: TestApp;
  rpc: DevRpcServer;
  round(outflows: number, internal?: number, amount?: bigint): Promise<number>;
  close(): Promise<void>;
}

export async function countsWorld(env: Record<string, string> = {}): Promise<CountsWorld> {
  const rpc = startSolanaRpc({ holders: 30, transactions: 0, seed: "counts" });
  const h = await openTestApp({ clock: new FakeClock(T0), env: chainEnv(rpc, [rpc.url], env) });
  await job(h, "token-snapshot");
  const f = rpc.fixture;
  let holder = 0;
  return {
    h,
    rpc,
    async round(outflows, internal = 0, amount = 1_000_000n) {
      for (let i = 0; i < outflows; i++)
        f.appendTransfer({ from: f.walletParty(f.treasury[0]!), to: f.holderParty(holder++ % 30), amount, applyToBalances: true });
      for (let i = 0; i < internal; i++)
        f.appendTransfer({ from: f.walletParty(f.reserve[0]!), to: f.walletParty(f.treasury[1]!), amount: 1_000n, applyToBalances: true });
      await job(h, "transaction-sync");
      const r = await job(h, "audit-anomalies");
      const row = await h.ctx.store.get<{ id: number }>("SELECT id FROM audit_runs WHERE job_run_id = ?", [r.run_id]);
      return row!.id;
    },
    async close() {
      await h.close();
      await rpc.stop();
    },
  };
}
