import { PLANTABLE, type Plantable } from "../../src/chain/fixture-anomalies";
import type { Param } from "../../src/db/port";
import { openTestApp, type TestApp } from "../support/app";
import { FakeClock } from "../support/clock";
import { chainEnv, startSolanaRpc, type DevRpcServer } from "../support/solana-rpc";

// A herald over the planted fixture of `herald dev-rpc --plant`, and the job rounds that read it.

export const T0 = "2026-01-01T00:00:00.000Z";
export const P = "/transparency/audit-anomalies";

export interface AuditWorld {
  h: TestApp;
  rpc: DevRpcServer;
  close(): Promise<void>;
}

export async function plantedWorld(types: readonly Plantable[] = PLANTABLE, opts: { env?: Record<string, string>; seed?: string } = {}): Promise<AuditWorld> {
  const rpc = startSolanaRpc({ holders: 40, transactions: 0, seed: opts.seed ?? "audit", plant: types });
  const h = await openTestApp({ clock: new FakeClock(T0), env: chainEnv(rpc, [rpc.url], { ...rpc.plan?.env, ...opts.env }) });
  return {
    h,
    rpc,
    async close() {
      await h.close();
      await rpc.stop();
    },
  };
}

/** A job that must succeed; the clock moves a minute after it, so each later job's rows are strictly later. */
export async function job(h: TestApp, name: string) {
  const r = await h.ctx.jobs.runNow(name);
  if (!r.ok) throw new Error(`${name} failed: ${r.error}`);
  h.clock.advanceSeconds(60);
  return r;
}

/** Snapshots and a sync, in the order the dev-rpc walk-through runs them. */
export async function chainRound(h: TestApp) {
  await job(h, "token-snapshot");
  await job(h, "mint-authority-snapshot");
  await job(h, "transaction-sync");
}

/** Two chain rounds (act 1 and act 2 of the plan) and one audit run. */
export async function plantedRun(w: AuditWorld) {
  await chainRound(w.h);
  await chainRound(w.h);
  return job(w.h, "audit-anomalies");
}

/** Rows of a query on the app's store (either engine). */
export const rows = <T = Record<string, any>>(h: TestApp, sql: string, ...args: Param[]): Promise<T[]> => h.ctx.store.all<T>(sql, args);

/** A statement on the app's store (either engine): the tests' direct edits of the data. */
export const exec = async (h: TestApp, sql: string, ...args: Param[]): Promise<void> => {
  await h.ctx.store.run(sql, args);
};
