import { absOf } from "./amounts";
import { ANOMALY_TYPES, BASE_SEVERITY, SEVERITIES, severityRank, type AnomalyType, type Severity } from "./glossary";

// The rules of src/transparency/audit/glossary.ts as pure functions over plain values: the audit run feeds them the
// synced rows, tests feed them edge cases, and an outsider can port them line by line.

export interface TxFacts {
  signature: string;
  slot: number;
  blockTime: string | null;
  status: "ok" | "failed";
  /** Net raw change of the treasury and reserve wallets (chain_transactions.token_delta_raw). */
  delta: bigint;
  /** Net raw change of the LP wallets (chain_transactions.lp_delta_raw): trades, never declared; 0 when absent. */
  lpDelta?: bigint;
  /** Raw amount moved (chain_transactions.amount_moved_raw). */
  moved: bigint;
  /** Another synced row of the same slot, time, status, delta and amount sorts before this one. */
  hasEarlierTwin: boolean;
}

export interface ActiveDeclaration {
  id: number;
  direction: "outflow" | "inflow";
  amountRaw: bigint;
  signature: string | null;
  windowStart: string;
  windowEnd: string;
  /** Matches still allowed (max_transactions minus the matches of complete runs and of this run so far). */
  remaining: number;
}

/** Raw amount cut-offs, converted with the mint's decimals from the thresholds in force. */
export interface RawLimits {
  large: bigint;
  medium: bigint;
  high: bigint;
  critical: bigint;
}

export interface Verdict {
  types: AnomalyType[];
  severity: Severity | null;
  declarationId: number | null;
}

/** The amount level of max_abs_delta: critical, high, medium at or above their cut-offs; else low. */
export function amountLevel(absDelta: bigint, limits: RawLimits): Severity {
  if (absDelta >= limits.critical) return "critical";
  if (absDelta >= limits.high) return "high";
  if (absDelta >= limits.medium) return "medium";
  return "low";
}

/** Highest of the types' base severities and the amount level; null when there is no type. */
export function severityOf(types: readonly AnomalyType[], absDelta: bigint, limits: RawLimits): Severity | null {
  if (types.length === 0) return null;
  let rank = severityRank(amountLevel(absDelta, limits));
  for (const t of types) rank = Math.max(rank, severityRank(BASE_SEVERITY[t]));
  return SEVERITIES[rank - 1]!;
}

export const inOrder = (types: Iterable<AnomalyType>): AnomalyType[] => {
  const set = new Set(types);
  return ANOMALY_TYPES.filter((t) => set.has(t));
};

/** The first active declaration (by id) that covers the transaction; consumes one of its matches. */
export function matchDeclaration(tx: TxFacts, declarations: ActiveDeclaration[]): ActiveDeclaration | null {
  if (tx.status !== "ok" || tx.delta === 0n) return null;
  const direction = tx.delta < 0n ? "outflow" : "inflow";
  const amount = absOf(tx.delta);
  for (const d of declarations) {
    if (d.remaining <= 0 || d.direction !== direction || d.amountRaw !== amount) continue;
    if (d.signature !== null && d.signature !== tx.signature) continue;
    // Window bounds are inclusive; a transaction without a block time cannot be placed in one.
    if (tx.blockTime === null || tx.blockTime < d.windowStart || tx.blockTime > d.windowEnd) continue;
    d.remaining -= 1;
    return d;
  }
  return null;
}

/**
 * One synced transaction against the rules. `declarations` is mutated: a match uses up one of its slots.
 * LP wallets' moves (lpDelta) are trades: they can be large_transfer or duplicate_signature, never untracked_*,
 * and no declaration clears them (declarations speak about treasury/reserve movements only).
 */
export function classifyTransaction(tx: TxFacts, declarations: ActiveDeclaration[], limits: RawLimits): Verdict {
  const types: AnomalyType[] = [];
  const declared = matchDeclaration(tx, declarations);
  const abs = absOf(tx.delta);
  const lpAbs = absOf(tx.lpDelta ?? 0n);
  if (tx.status === "ok" && !declared) {
    if (tx.delta < 0n) types.push("untracked_outflow");
    if (tx.delta > 0n) types.push("untracked_inflow");
    if (abs > 0n && abs >= limits.large) types.push("large_transfer");
  }
  if (tx.status === "ok" && lpAbs > 0n && lpAbs >= limits.large) types.push("large_transfer");
  if (tx.hasEarlierTwin && tx.moved > 0n) types.push("duplicate_signature");
  const ordered = inOrder(types);
  return { types: ordered, severity: severityOf(ordered, absOf(rowDelta(tx)), limits), declarationId: declared?.id ?? null };
}

/** A transaction row's delta: token_delta, or lp_delta when that is larger in absolute value (TRANSACTION_DELTA_RULE). */
export const rowDelta = (tx: Pick<TxFacts, "delta" | "lpDelta">): bigint => {
  const lp = tx.lpDelta ?? 0n;
  return absOf(lp) > absOf(tx.delta) ? lp : tx.delta;
};

/** balance_mismatch between two comparable token snapshots: the unexplained difference, or null when none. */
export function balanceMismatch(snapshotDelta: bigint, syncedDelta: bigint): bigint | null {
  const diff = snapshotDelta - syncedDelta;
  return diff === 0n ? null : diff;
}

export interface AuthorityFacts {
  mintAuthority: string | null;
  freezeAuthority: string | null;
  mismatch: boolean;
}

/** authority_change: differs from the previous snapshot, or starts to mismatch the expectation. */
export function authorityChanged(current: AuthorityFacts, previous: AuthorityFacts | null): { changed: boolean; fields: string[]; newMismatch: boolean } {
  const fields: string[] = [];
  if (previous && previous.mintAuthority !== current.mintAuthority) fields.push("mint_authority");
  if (previous && previous.freezeAuthority !== current.freezeAuthority) fields.push("freeze_authority");
  const newMismatch = current.mismatch && (previous === null || !previous.mismatch);
  return { changed: fields.length > 0 || newMismatch, fields, newMismatch };
}
