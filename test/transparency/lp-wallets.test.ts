import { afterEach, describe, expect, test } from "bun:test";
import { type ConfigError, loadConfig } from "../../src/config";
import { ChainFixture } from "../../src/chain/fixture-data";
import { openTestApp, type TestApp } from "../support/app";
import { FakeClock } from "../support/clock";
import { spawnHerald } from "../support/process";
import { chainEnv, startSolanaRpc, type DevRpcServer } from "../support/solana-rpc";
import { job, P, rows, T0 } from "./support";

// LP_WALLETS: the pool wallets are synced and audited as trades. A fixture history with one pool: ordinary buys
// and sells (not flagged: no untracked_* for LP moves), a pool move above large_transfer_amount, a duplicated
// pool trade, a pool balance that grows without a transaction (balance_mismatch on token-snapshot:<id>:lp), and a
// treasury → pool move (the treasury side is still an untracked_outflow).

let h: TestApp | undefined;
let rpc: DevRpcServer | undefined;
afterEach(async () => {
  await h?.close();
  await rpc?.stop();
  h = undefined;
  rpc = undefined;
});

const AMOUNTS = {
  buy: 5_000_000_000n,
  sell: 7_000_000_000n,
  large: 1_500_000_000_000n,
  dup: 3_000_000n,
  addLiquidity: 2_000_000_000n,
  mismatch: 4_321_000_000n,
};

describe("LP wallets in the transaction sync and the audit", () => {
  test("planted LP anomalies are detected with exact deltas; ordinary pool trades are not untracked", async () => {
    rpc = startSolanaRpc({ holders: 30, transactions: 0, seed: "lp-audit", lpWallets: 1 });
    const f = rpc.fixture;
    const env = chainEnv(rpc);
    expect(env.LP_WALLETS).toBe(f.lp[0]!.owner);
    h = await openTestApp({ clock: new FakeClock(T0), env });
    // A first transfer between holders: later transfers then get slots after snapshot P's (the fixture's slot clock).
    f.appendTransfer({ from: f.holderParty(5), to: f.holderParty(6), amount: 1_000n });
    await job(h, "token-snapshot"); // P

    const pool = f.walletParty(f.lp[0]!);
    const buy = f.appendTransfer({ from: pool, to: f.holderParty(1), amount: AMOUNTS.buy, applyToBalances: true });
    const sell = f.appendTransfer({ from: f.holderParty(2), to: pool, amount: AMOUNTS.sell, applyToBalances: true });
    const large = f.appendTransfer({ from: pool, to: f.holderParty(3), amount: AMOUNTS.large, applyToBalances: true });
    const first = f.appendTransfer({ from: f.holderParty(4), to: pool, amount: AMOUNTS.dup, applyToBalances: true });
    const twin = f.appendTransfer({ from: f.holderParty(4), to: pool, amount: AMOUNTS.dup, twinOf: first });
    const duplicate = first.signature < twin.signature ? twin : first;
    const addLiquidity = f.appendTransfer({ from: f.walletParty(f.treasury[0]!), to: pool, amount: AMOUNTS.addLiquidity, applyToBalances: true });
    await job(h, "transaction-sync");
    f.lp[0]!.accounts[0]!.amount += AMOUNTS.mismatch; // the pool grows without a transaction
    await job(h, "token-snapshot"); // S
    await job(h, "transaction-sync"); // a sync after S: the snapshots can be compared
    await job(h, "audit-anomalies");

    // The pool address has its own sync cursor, and each transaction stored its LP delta apart from token_delta.
    expect(await rows(h, "SELECT address FROM chain_sync_cursors WHERE address = ?", f.lp[0]!.owner)).toHaveLength(1);
    const stored = async (sig: string) => (await rows(h!, "SELECT token_delta_raw, lp_delta_raw FROM chain_transactions WHERE signature = ?", sig))[0];
    expect(await stored(buy.signature)).toEqual({ token_delta_raw: "0", lp_delta_raw: `-${AMOUNTS.buy}` });
    expect(await stored(addLiquidity.signature)).toEqual({ token_delta_raw: `-${AMOUNTS.addLiquidity}`, lp_delta_raw: `${AMOUNTS.addLiquidity}` });

    const row = async (sig: string) =>
      (await rows(h!, "SELECT kind, delta_raw, types, severity_rank, detail FROM audit_rows WHERE run_id = 1 AND signature = ?", sig))[0]!;
    // Ordinary trades: examined, nothing flagged, both deltas in detail.
    for (const [tx, lp] of [
      [buy, `-${AMOUNTS.buy}`],
      [sell, `${AMOUNTS.sell}`],
    ] as const) {
      expect(await row(tx.signature)).toMatchObject({ kind: "transaction", delta_raw: lp, types: "", severity_rank: 0 });
      expect(JSON.parse((await row(tx.signature)).detail)).toEqual({ token_delta_raw: "0", lp_delta_raw: lp });
    }
    // Above large_transfer_amount (1,000,000 tokens) and the critical cut-off: large_transfer, critical, never untracked.
    expect(await row(large.signature)).toMatchObject({ delta_raw: `-${AMOUNTS.large}`, types: "large_transfer", severity_rank: 4 });
    expect(await row(duplicate.signature)).toMatchObject({ delta_raw: `${AMOUNTS.dup}`, types: "duplicate_signature", severity_rank: 1 });
    // The treasury side of a treasury → pool move is an outflow nobody declared; |token_delta| = |lp_delta|: token_delta.
    expect(await row(addLiquidity.signature)).toMatchObject({ delta_raw: `-${AMOUNTS.addLiquidity}`, types: "untracked_outflow", severity_rank: 2 });
    const mismatch = await rows(h, "SELECT signature, delta_raw, severity_rank, detail FROM audit_rows WHERE run_id = 1 AND types = 'balance_mismatch'");
    expect(mismatch).toHaveLength(1); // the treasury side agrees with its synced deltas
    // The pool grew by `mismatch` unexplained; the duplicated trade is counted twice in the synced sum but moved the
    // balance once, so the difference is mismatch − dup.
    expect(mismatch[0]).toMatchObject({ signature: "token-snapshot:2:lp", delta_raw: `${AMOUNTS.mismatch - AMOUNTS.dup}`, severity_rank: 3 });
    const synced = -AMOUNTS.buy + AMOUNTS.sell - AMOUNTS.large + AMOUNTS.dup * 2n + AMOUNTS.addLiquidity;
    expect(JSON.parse(mismatch[0]!.detail)).toMatchObject({
      previous_snapshot_id: 1,
      snapshot_id: 2,
      wallets: "lp",
      synced_delta_raw: `${synced}`,
      snapshot_delta_raw: `${synced - AMOUNTS.dup + AMOUNTS.mismatch}`,
    });
    expect((await rows(h, "SELECT count(*) AS n FROM audit_rows WHERE run_id = 1 AND severity_rank > 0"))[0]).toEqual({ n: 4 });
    expect(JSON.parse((await rows(h, "SELECT type_counts FROM audit_runs WHERE id = 1"))[0]!.type_counts)).toMatchObject({
      untracked_outflow: 1,
      untracked_inflow: 0,
      large_transfer: 1,
      balance_mismatch: 1,
      duplicate_signature: 1,
    });

    // The export carries the row with its max_abs_delta; the glossary names the pool and which rules apply to it.
    const ex = (await h.json(`${P}/export.json?run=1&signature=${large.signature}`)).body;
    expect(ex.rows[0]).toMatchObject({
      delta: "-1500000",
      max_abs_delta: "1500000",
      anomaly_types: ["large_transfer"],
      severity: "critical",
      detail: { token_delta_raw: "0", lp_delta_raw: `-${AMOUNTS.large}` },
    });
    const g = (await h.json(`${P}/glossary.json`)).body;
    expect(g.tracked_wallets.lp).toEqual([f.lp[0]!.owner]);
    const applies = Object.fromEntries(g.glossary.map((e: { type: string; applies_to: string[] }) => [e.type, e.applies_to]));
    expect(applies).toMatchObject({
      untracked_outflow: ["treasury", "reserve"],
      untracked_inflow: ["treasury", "reserve"],
      large_transfer: ["treasury", "reserve", "lp"],
      balance_mismatch: ["treasury", "reserve", "lp"],
      sync_gap: ["treasury", "reserve", "lp"],
      duplicate_signature: ["treasury", "reserve", "lp"],
    });
  });

  test("the pool's balance is not excluded from circulating supply", async () => {
    rpc = startSolanaRpc({ holders: 10, transactions: 0, seed: "lp-supply", lpWallets: 1 });
    h = await openTestApp({ clock: new FakeClock(T0), env: chainEnv(rpc) });
    const snap = await job(h, "token-snapshot");
    expect(snap.ok).toBe(true);
    const s = (await rows(h, "SELECT supply_raw, treasury_raw, reserve_raw, circulating_raw, wallets_json FROM chain_token_snapshots"))[0]!;
    expect(BigInt(s.circulating_raw)).toBe(BigInt(s.supply_raw) - BigInt(s.treasury_raw) - BigInt(s.reserve_raw));
    expect(JSON.parse(s.wallets_json).filter((w: { role: string }) => w.role === "lp")).toEqual([
      { role: "lp", wallet: rpc.fixture.lp[0]!.owner, amount_raw: `${rpc.fixture.lp[0]!.accounts[0]!.amount}`, token_accounts: 1 },
    ]);
  });

  test("an LP wallet may not also be a treasury or reserve wallet", () => {
    const address = "So11111111111111111111111111111111111111112";
    const problems = (env: Record<string, string>) => {
      try {
        loadConfig({ NODE_ENV: "test", HERALD_DB_PATH: ":memory:", ...env });
        return [];
      } catch (err) {
        return (err as ConfigError).problems;
      }
    };
    expect(problems({ TREASURY_WALLETS: address, LP_WALLETS: address })[0]).toContain("is in LP_WALLETS and in TREASURY_WALLETS or RESERVE_WALLETS");
    expect(problems({ LP_WALLETS: "bad" })[0]).toContain("LP_WALLETS has entries that are not base58");
    expect(problems({ LP_WALLETS: address })).toEqual([]);
  });

  test("the fixture's pool wallets are opt-in: without them the chain is unchanged; dev-rpc --lp-wallets prints them", async () => {
    const plain = new ChainFixture({ seed: "lp-cli", holders: 10 });
    const pooled = new ChainFixture({ seed: "lp-cli", holders: 10, lpWallets: 2 });
    expect(plain.lp).toEqual([]);
    expect(pooled.treasury).toEqual(plain.treasury);
    expect(pooled.reserve).toEqual(plain.reserve);
    expect(pooled.holderOwner(3)).toBe(plain.holderOwner(3));
    expect(pooled.supply()).toBe(plain.supply() + pooled.lp.reduce((s, w) => s + w.accounts[0]!.amount, 0n));
    const server = spawnHerald(["dev-rpc", "--port", "0", "--holders", "10", "--seed", "lp-cli", "--lp-wallets", "2", "--json"], { LOG_LEVEL: "warn" });
    try {
      const reader = (server.stdout as ReadableStream<Uint8Array>).getReader();
      let text = "";
      for (let i = 0; i < 100 && !text.includes("\n"); i++) {
        const { done, value } = await reader.read();
        if (done) break;
        text += new TextDecoder().decode(value);
      }
      const info = JSON.parse(text.split("\n")[0]!);
      expect(info).toMatchObject({ lp_wallets: pooled.lp.map((w) => w.owner), treasury_wallets: plain.treasury.map((w) => w.owner) });
    } finally {
      server.kill("SIGTERM");
      await server.exited;
    }
  });
});
