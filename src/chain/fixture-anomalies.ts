import { commaList } from "../config/parse";
import type { ChainFixture, FixtureParty, FixtureTx } from "./fixture-data";

// Planted audit anomalies for `herald dev-rpc --plant …` and the transparency tests: a clean base history, one
// planted case per anomaly type with a known amount, in two acts. Act 1 is there from the start; act 2 begins
// once the mint's signatures have been listed once (herald's first transaction sync has read act 1), so the
// next round of snapshots and syncs sees what changed: a new mint authority, a treasury balance that moved
// without a transaction, and more new transfers than CHAIN_TX_MAX_PER_RUN (the env to run herald with is in
// `env`). Amounts are raw units at the fixture's decimals (6 by default).

export const PLANTABLE = [
  "untracked_outflow",
  "untracked_inflow",
  "large_transfer",
  "balance_mismatch",
  "authority_change",
  "sync_gap",
  "duplicate_signature",
] as const;
export type Plantable = (typeof PLANTABLE)[number];

export const PLANTED_AMOUNTS = {
  untracked_outflow: 12_345_678_901n, // 12,345.678901 tokens, treasury → holder
  untracked_inflow: 2_500_500_000n, // 2,500.5 tokens, holder → reserve
  large_transfer: 1_250_000_000_000n, // 1,250,000 tokens, treasury → holder (also untracked_outflow)
  balance_mismatch: 4_321_000_000n, // 4,321 tokens added to a treasury account without a transaction
  duplicate_signature: 777_000_000n, // 777 tokens reserve → treasury, recorded under two signatures
} as const;

/** More than the CHAIN_TX_MAX_PER_RUN the plan asks herald to run with: the sync stops short, a gap. */
export const GAP_TRANSFERS = 8;
export const GAP_MAX_PER_RUN = 5;

export interface PlantedCase {
  type: Plantable;
  act: 1 | 2;
  /** The planted transaction (null for balance and authority cases, which are snapshot findings). */
  signature: string | null;
  amount_raw: string | null;
  note: string;
}

export interface AnomalyPlan {
  types: Plantable[];
  act: 1 | 2;
  cases: PlantedCase[];
  /** Environment herald needs for the plan to show (EXPECTED_MINT_AUTHORITY, CHAIN_TX_MAX_PER_RUN). */
  env: Record<string, string>;
  /** Called by dev-rpc after answering each request; starts act 2 after the mint's first signature listing. */
  afterCall(method: string, params: unknown[]): void;
  /** Starts act 2 now (tests that drive the fixture directly). */
  startAct2(): void;
}

export function parsePlant(text: string): Plantable[] {
  if (text === "all") return [...PLANTABLE];
  const list = commaList(text);
  const unknown = list.filter((s) => !(PLANTABLE as readonly string[]).includes(s));
  if (unknown.length || list.length === 0)
    throw new Error(`--plant takes all or a comma list of: ${PLANTABLE.join(", ")}${unknown.length ? ` (unknown: ${unknown.join(", ")})` : ""}`);
  return PLANTABLE.filter((p) => list.includes(p));
}

export function plantAnomalies(f: ChainFixture, types: readonly Plantable[]): AnomalyPlan {
  const want = new Set(types);
  const cases: PlantedCase[] = [];
  const t0 = f.treasury[0]!;
  const t1 = f.treasury[1] ?? t0;
  const r0 = f.reserve[0] ?? t0;
  const internal = (amount: bigint, twinOf?: FixtureTx) =>
    f.appendTransfer({ from: f.walletParty(r0), to: f.walletParty(t1), amount, twinOf, applyToBalances: !twinOf });
  const record = (type: Plantable, act: 1 | 2, tx: FixtureTx | null, amount: bigint | null, note: string) =>
    cases.push({ type, act, signature: tx?.signature ?? null, amount_raw: amount?.toString() ?? null, note });

  // A clean base: internal reserve → treasury moves and holder ↔ holder transfers change nothing the audit flags.
  internal(5_000_000_000n);
  f.appendTransfer({ from: f.holderParty(1), to: f.holderParty(2), amount: 900_000_000n });
  internal(15_000_000_000n);
  const transfer = (type: "untracked_outflow" | "untracked_inflow" | "large_transfer", from: FixtureParty, to: FixtureParty, note: string) => {
    if (!want.has(type)) return;
    const amount = PLANTED_AMOUNTS[type];
    record(type, 1, f.appendTransfer({ from, to, amount, applyToBalances: true }), amount, note);
  };
  transfer("untracked_outflow", f.walletParty(t0), f.holderParty(3), "treasury → holder 3, no declaration");
  transfer("untracked_inflow", f.holderParty(5), f.walletParty(r0), "holder 5 → reserve, no declaration");
  transfer("large_transfer", f.walletParty(t0), f.holderParty(7), "treasury → holder 7, above the default large_transfer_amount (1,000,000)");
  if (want.has("duplicate_signature")) {
    const first = internal(PLANTED_AMOUNTS.duplicate_signature);
    const twin = internal(PLANTED_AMOUNTS.duplicate_signature, first);
    // Which of the two is flagged: the one whose signature sorts second.
    const flagged = first.signature < twin.signature ? twin : first;
    record("duplicate_signature", 1, flagged, PLANTED_AMOUNTS.duplicate_signature, "reserve → treasury recorded under two signatures in one slot");
  }

  let act: 1 | 2 = 1;
  const startAct2 = () => {
    if (act === 2) return;
    act = 2;
    if (want.has("authority_change")) {
      f.mintAuthority = f.authority(0);
      record("authority_change", 2, null, null, "the mint authority becomes an address (EXPECTED_MINT_AUTHORITY=none)");
    }
    if (want.has("balance_mismatch")) {
      t0.accounts[0]!.amount += PLANTED_AMOUNTS.balance_mismatch;
      record("balance_mismatch", 2, null, PLANTED_AMOUNTS.balance_mismatch, "a treasury account grows without a transaction");
    }
    if (want.has("sync_gap")) {
      for (let i = 0; i < GAP_TRANSFERS; i++) internal(1_000_000n * BigInt(i + 1));
      record("sync_gap", 2, null, null, `${GAP_TRANSFERS} new transfers for CHAIN_TX_MAX_PER_RUN=${GAP_MAX_PER_RUN}`);
    }
  };
  const env: Record<string, string> = {};
  if (want.has("authority_change")) env.EXPECTED_MINT_AUTHORITY = "none";
  if (want.has("sync_gap")) env.CHAIN_TX_MAX_PER_RUN = String(GAP_MAX_PER_RUN);
  return {
    types: [...want],
    get act() {
      return act;
    },
    cases,
    env,
    afterCall(method, params) {
      if (method === "getSignaturesForAddress" && params[0] === f.mint) startAct2();
    },
    startAct2,
  };
}
