// The anomaly types, their descriptions and the rules that decide them (docs/transparency.md states the same
// rules with worked examples). Order matters: a row lists its types in this order, and reports list types in it.

export const ANOMALY_TYPES = [
  "untracked_outflow",
  "untracked_inflow",
  "large_transfer",
  "balance_mismatch",
  "authority_change",
  "sync_gap",
  "duplicate_signature",
  "snapshot_slot_regression",
] as const;
export type AnomalyType = (typeof ANOMALY_TYPES)[number];

export const SEVERITIES = ["low", "medium", "high", "critical"] as const;
export type Severity = (typeof SEVERITIES)[number];
/** 1 low … 4 critical; 0 = no anomaly (stored as audit_rows.severity_rank). */
export const severityRank = (s: Severity): number => SEVERITIES.indexOf(s) + 1;
export const severityOfRank = (rank: number): Severity | null => SEVERITIES[rank - 1] ?? null;

export interface GlossaryEntry {
  type: AnomalyType;
  description: string;
  /** The rule, precise enough to recompute from public chain data. */
  rule: string;
  /** The least severity a row with this type gets; amounts can raise it (see `severity_rule`). */
  base_severity: Severity;
  /** What max_abs_delta is for a row of this type. */
  delta: string;
  /** The tracked wallet sets the rule looks at (LP_WALLETS moves are trades: only some rules apply to them). */
  applies_to: readonly WalletRole[];
}

export const WALLET_ROLES = ["treasury", "reserve", "lp"] as const;
export type WalletRole = (typeof WALLET_ROLES)[number];

/** What a transaction row's delta (and so its max_abs_delta) is, once LP wallets are tracked too. */
export const TRANSACTION_DELTA_RULE =
  "A transaction row's delta is its token_delta (net change of the TREASURY_WALLETS and RESERVE_WALLETS owners' balances of the mint), or its lp_delta (the same over the LP_WALLETS owners) when |lp_delta| > |token_delta|; detail then carries both (token_delta_raw, lp_delta_raw).";

export const GLOSSARY: readonly GlossaryEntry[] = [
  {
    type: "untracked_outflow",
    description: "Tokens left the treasury/reserve wallets in a transaction that no declared movement covers.",
    rule: "A synced transaction (status ok) whose token_delta (net change of all TREASURY_WALLETS and RESERVE_WALLETS owners' balances of the mint, from the transaction's pre/post token balances) is negative, and which no active declared movement matches.",
    base_severity: "medium",
    delta: "|token_delta|",
    applies_to: ["treasury", "reserve"],
  },
  {
    type: "untracked_inflow",
    description: "Tokens arrived in the treasury/reserve wallets in a transaction that no declared movement covers.",
    rule: "As untracked_outflow, with token_delta positive. Neither applies to LP_WALLETS: a pool's balance moves with every swap, which nobody declares; lp_delta never makes an untracked_* row (a treasury ↔ pool move is still caught by its token_delta side).",
    base_severity: "low",
    delta: "|token_delta|",
    applies_to: ["treasury", "reserve"],
  },
  {
    type: "large_transfer",
    description: "The treasury/reserve wallets' (or the LP wallets') net change in one transaction is at or above the large-transfer threshold.",
    rule: "A synced transaction with status ok and either |token_delta| >= large_transfer_amount (the threshold in force when the run started) and no active declared movement matches it, or |lp_delta| >= large_transfer_amount (declared movements never cover LP_WALLETS: a trade or liquidity removal that large is always flagged).",
    base_severity: "medium",
    delta: "max(|token_delta|, |lp_delta|)",
    applies_to: ["treasury", "reserve", "lp"],
  },
  {
    type: "balance_mismatch",
    description: "The tracked wallets' balance changed between two token snapshots by a different amount than the synced transactions between them add up to.",
    rule: "For consecutive token snapshots P and S of the mint with the same wallet set: (treasury_raw + reserve_raw)(S) − (treasury_raw + reserve_raw)(P) ≠ Σ token_delta of synced transactions with status ok and P.slot < slot ≤ S.slot. Compared once a transaction sync has finished after S was taken. The row's signature is token-snapshot:<S id>. LP_WALLETS separately: lp(S) − lp(P) ≠ Σ lp_delta over the same transactions, where lp is the sum of the wallets_json entries with role lp; that row's signature is token-snapshot:<S id>:lp.",
    base_severity: "high",
    delta: "|snapshot delta − synced delta|",
    applies_to: ["treasury", "reserve", "lp"],
  },
  {
    type: "authority_change",
    description: "The mint or freeze authority changed since the previous mint-authority snapshot, or started to differ from the published expectation.",
    rule: "A mint-authority snapshot whose mint_authority or freeze_authority differs from the previous snapshot's, or which mismatches EXPECTED_MINT_AUTHORITY / EXPECTED_FREEZE_AUTHORITY while the previous snapshot did not (or there was none). The row's signature is mint-authority-snapshot:<id>.",
    base_severity: "critical",
    delta: "0 (no amount moves)",
    applies_to: [],
  },
  {
    type: "sync_gap",
    description:
      "A transaction sync stopped before reaching the last stored signature: some transactions of that window were never stored, so the audit could not examine them.",
    rule: "A transaction-sync run with gap_detected = true (more new signatures for one address than CHAIN_TX_MAX_PER_RUN; the addresses are the TREASURY_WALLETS, RESERVE_WALLETS and LP_WALLETS owners and the mint). The row's signature is sync-run:<id>.",
    base_severity: "medium",
    delta: "0 (the missing amount is unknown)",
    applies_to: ["treasury", "reserve", "lp"],
  },
  {
    type: "duplicate_signature",
    description: "The same movement is recorded under two signatures: a sum over signatures counts it twice.",
    rule: "A synced transaction with amount_moved > 0 for which another synced transaction of the mint has the same slot, block_time, status, token_delta, lp_delta and amount_moved and a signature that sorts before it (byte order). The first of such a group is not flagged. Two genuine identical transfers in one slot are possible: triage them as false_positive.",
    base_severity: "low",
    delta: "max(|token_delta|, |lp_delta|)",
    applies_to: ["treasury", "reserve", "lp"],
  },
  {
    type: "snapshot_slot_regression",
    description:
      "A token snapshot was read at an earlier slot than the snapshot before it (an RPC node behind the others): the balance change between the two cannot be checked against the synced transactions.",
    rule: "For consecutive token snapshots P and S of the mint with the same wallet set and S.slot < P.slot (balance_mismatch is not computed for such a pair: no slot lies in P.slot < slot ≤ S.slot). Reported once a transaction sync has finished after S was taken, whatever the balances did. The row's signature is token-snapshot:<S id>; its delta is (treasury_raw + reserve_raw)(S) − (treasury_raw + reserve_raw)(P), or lp(S) − lp(P) when that is larger in absolute value; detail carries both and the two slots. The next snapshot is compared with S.",
    base_severity: "medium",
    delta: "max(|treasury+reserve change|, |lp change|) between the two snapshots",
    applies_to: ["treasury", "reserve", "lp"],
  },
];

export const BASE_SEVERITY: Record<AnomalyType, Severity> = Object.fromEntries(GLOSSARY.map((g) => [g.type, g.base_severity])) as Record<AnomalyType, Severity>;

export const SEVERITY_RULE =
  "severity = the highest of: each type's base_severity, and the amount level of max_abs_delta (critical at or above severity_critical_amount, high at or above severity_high_amount, medium at or above severity_medium_amount).";
export const OVERALL_RULE = "A run's overall is bad when any row is high or critical, warn when any row is low or medium, ok when no row is anomalous.";

export const isAnomalyType = (v: string): v is AnomalyType => (ANOMALY_TYPES as readonly string[]).includes(v);
export const isSeverity = (v: string): v is Severity => (SEVERITIES as readonly string[]).includes(v);
