import { startDevRpc, type DevRpcOptions, type DevRpcServer } from "../../src/chain/dev-rpc";
import type { ChainFixture, FixtureTx } from "../../src/chain/fixture-data";
import { freePort } from "./process";

// The Solana RPC peer of the chain tests: the same deterministic fixture `herald dev-rpc` serves, as a real
// HTTP server on 127.0.0.1, with switches for 429, 500, timeouts, malformed and slow replies
// (server.fault({ kind, times, method })). The expected values below are computed here by brute force from the
// fixture's own data, independently of src/chain's streaming scan, heap and delta logic.

export type { DevRpcServer };

export function startSolanaRpc(opts: DevRpcOptions = {}): DevRpcServer {
  return startDevRpc({ holders: 500, transactions: 30, ...opts });
}

/** A URL on which nothing listens: connection refused, the plainest failing RPC. */
export function deadRpcUrl(): string {
  return `http://127.0.0.1:${freePort()}`;
}

/** Herald's environment for a fixture: its mint, wallets and URL(s), fast retries. */
export function chainEnv(rpc: DevRpcServer, urls: string[] = [rpc.url], extra: Record<string, string> = {}): Record<string, string> {
  const f = rpc.fixture;
  return {
    SOLANA_RPC_URLS: urls.join(","),
    TOKEN_MINT: f.mint,
    TREASURY_WALLETS: f.treasury.map((w) => w.owner).join(","),
    RESERVE_WALLETS: f.reserve.map((w) => w.owner).join(","),
    ...(f.lp.length ? { LP_WALLETS: f.lp.map((w) => w.owner).join(",") } : {}),
    SOLANA_RPC_BACKOFF_MS: "1",
    SOLANA_RPC_TIMEOUT_MS: "3000",
    ...extra,
  };
}

/** Every token account amount of the mint, sorted largest first: the brute-force reference for the scan. */
export function expectedHolders(f: ChainFixture) {
  const amounts: bigint[] = f.wallets().flatMap((w) => w.accounts.map((a) => a.amount));
  for (let i = 0; i < f.holderCount; i++) amounts.push(BigInt(f.holderAmount(i)));
  const nonZero = amounts.filter((a) => a > 0n).sort((a, b) => (a > b ? -1 : a < b ? 1 : 0));
  const sumTop = (n: number) => nonZero.slice(0, n).reduce((s, a) => s + a, 0n);
  return {
    accounts: amounts.length,
    holders: nonZero.length,
    total: amounts.reduce((s, a) => s + a, 0n),
    top1: sumTop(1),
    top5: sumTop(5),
    top10: sumTop(10),
  };
}

export function expectedBalances(f: ChainFixture) {
  const sum = (ws: ChainFixture["treasury"]) => ws.reduce((s, w) => s + w.accounts.reduce((t, a) => t + a.amount, 0n), 0n);
  const treasury = sum(f.treasury);
  const reserve = sum(f.reserve);
  const supply = f.supply();
  return { supply, treasury, reserve, tracked: treasury + reserve, circulating: supply - treasury - reserve };
}

/** What a transaction should be stored as: the tracked wallets' net change and the amount moved. */
export function expectedTx(f: ChainFixture, tx: FixtureTx) {
  const tracked = new Set(f.wallets().map((w) => w.owner));
  const amount = tx.failed ? 0n : tx.amount;
  let delta = 0n;
  if (tracked.has(tx.to.owner)) delta += amount;
  if (tracked.has(tx.from.owner)) delta -= amount;
  return {
    signature: tx.signature,
    slot: tx.slot,
    status: tx.failed ? "failed" : "ok",
    delta,
    moved: amount,
    blockTime: new Date(tx.blockTime * 1000).toISOString(),
  };
}

/** Decimal string of a raw amount, written independently of src/chain/amounts.ts. */
export function decimalString(raw: bigint, decimals: number): string {
  const neg = raw < 0n;
  const abs = neg ? -raw : raw;
  const base = 10n ** BigInt(decimals);
  const whole = abs / base;
  let frac = (abs % base).toString().padStart(decimals, "0");
  while (frac.endsWith("0")) frac = frac.slice(0, -1);
  return (neg ? "-" : "") + whole.toString() + (frac ? "." + frac : "");
}
