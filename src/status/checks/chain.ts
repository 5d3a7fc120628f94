import type { AppContext } from "../../context";
import {
  holderCacheProof,
  holderGrowthProof,
  publicStatsCacheProof,
  tokenDistributionProof,
  transactionSyncProof,
  jobsRollupProof,
  mintAuthoritiesProof,
  rpcHealth,
} from "../../chain/service";
import { levelAtLeast, worst, type Level } from "./types";
import type { StatusPolicy } from "./policy";

// The chain-backed checks. Without TOKEN_MINT there is no chain data to judge: such a check is ok with
// `note: "not_configured"` (policy freshness.not_configured may raise it to warn, never to bad), so a
// deployment that publishes no token is not shown as broken. The engine turns the note into
// `configured: false`, which the page shows as a grey "not configured" and the overall leaves out.

const NOT_CONFIGURED = "not_configured" as const;

/**
 * A host is unusable (bad) when its breaker is open or it failed at least error_rate_bad_pct of its calls,
 * degraded (warn) when its breaker is half-open or it failed at least error_rate_warn_pct. Rates are judged
 * only from min_calls calls. The check is bad when no host is usable, warn when any host is not ok: with
 * failover, one healthy URL keeps the service answering.
 */
function hostLevel(h: { breaker: string; calls: number; error_rate_pct: number | null }, p: StatusPolicy["checks"]["chain_rpc"]): Level {
  if (h.breaker === "open") return "bad";
  const judged = h.calls >= Math.max(1, p.min_calls) && h.error_rate_pct !== null;
  const byRate = judged ? levelAtLeast(h.error_rate_pct!, p.error_rate_warn_pct, p.error_rate_bad_pct) : "ok";
  return worst([byRate, h.breaker === "half_open" ? "warn" : "ok"]);
}

export async function chainRpcCheck(ctx: AppContext, policy: StatusPolicy) {
  const p = policy.checks.chain_rpc;
  const health = await rpcHealth(ctx, p.window_minutes);
  const hosts = health.hosts.map((h) => ({
    host: h.host,
    breaker: h.breaker,
    calls: h.calls,
    failures: h.failures,
    error_rate_pct: h.error_rate_pct,
    last_outcome: h.last_outcome,
    last_success_at: h.last_success_at,
    level: hostLevel(h, p),
  }));
  const base = { configured: health.configured, window_minutes: p.window_minutes, total_hosts: hosts.length, hosts };
  if (!health.configured) {
    const status = policy.checks.freshness.not_configured;
    return { status, summary: "TOKEN_MINT is not set: no Solana RPC is used", note: NOT_CONFIGURED, usable_hosts: 0, degraded_hosts: 0, ...base };
  }
  const usable = hosts.filter((h) => h.level !== "bad").length;
  const degraded = hosts.filter((h) => h.level !== "ok").length;
  const status: Level = usable === 0 ? "bad" : degraded > 0 ? "warn" : "ok";
  const summary =
    usable === 0
      ? `no usable RPC URL (${hosts.length} configured)`
      : degraded
        ? `${degraded} of ${hosts.length} RPC URLs degraded: ${hosts
            .filter((h) => h.level !== "ok")
            .map((h) => `${h.host} (${h.breaker}, ${h.error_rate_pct ?? 0}% failed)`)
            .join(", ")}`
        : `${hosts.length} RPC URL(s) healthy over ${p.window_minutes} min`;
  return { status, summary, note: null, usable_hosts: usable, degraded_hosts: degraded, ...base };
}

interface ProofLike {
  freshness_status: "fresh" | "stale" | "missing" | "not_configured";
  age_hours: number | null;
  stale_after_hours: number;
  reason: string | null;
  snapshot_at_utc?: string | null;
}

/** The seven public freshness proofs, by check name: what they are called, where they live, how to read them. */
export const FRESHNESS_PROOFS = {
  freshness_holder_cache: { label: "Holder cache", path: "/api/public/holder-cache-freshness", read: holderCacheProof },
  freshness_holder_growth: { label: "Holder growth", path: "/api/public/holder-growth-freshness", read: holderGrowthProof },
  freshness_public_stats_cache: { label: "Public-stats cache", path: "/api/public/public-stats-cache-freshness", read: publicStatsCacheProof },
  freshness_token_distribution: { label: "Token distribution", path: "/api/public/token-distribution-freshness", read: tokenDistributionProof },
  freshness_mint_authorities: { label: "Mint authorities", path: "/api/public/token-mint-authorities", read: mintAuthoritiesProof },
  freshness_snapshot_jobs_rollup: { label: "Snapshot jobs rollup", path: "/api/public/token-snapshot-jobs-rollup", read: jobsRollupProof },
  freshness_transaction_sync: { label: "Transaction sync", path: "/api/public/transaction-sync-freshness", read: transactionSyncProof },
} as const satisfies Record<string, { label: string; path: string; read: (ctx: AppContext) => Promise<ProofLike> }>;

export type FreshnessCheckName = keyof typeof FRESHNESS_PROOFS;
export const FRESHNESS_CHECK_NAMES = Object.keys(FRESHNESS_PROOFS) as FreshnessCheckName[];

export async function freshnessCheck(ctx: AppContext, policy: StatusPolicy, name: FreshnessCheckName) {
  const def = FRESHNESS_PROOFS[name];
  const proof: ProofLike = await def.read(ctx);
  const fs = proof.freshness_status;
  const status = policy.checks.freshness[fs];
  const age = proof.age_hours === null ? "" : ` (${proof.age_hours} h old, limit ${proof.stale_after_hours} h)`;
  return {
    status,
    // Words, not the enum value: "not configured: TOKEN_MINT is not set" reads as what it is.
    summary: fs === "fresh" ? `fresh${age}` : `${fs.replace("_", " ")}${age}${proof.reason ? `: ${proof.reason}` : ""}`,
    proof: def.label,
    freshness_status: fs,
    age_hours: proof.age_hours,
    stale_after_hours: proof.stale_after_hours,
    snapshot_at_utc: proof.snapshot_at_utc ?? null,
    reason: proof.reason,
    note: fs === "not_configured" ? NOT_CONFIGURED : null,
    proof_url: `${def.path}.json`,
    csv_url: `${def.path}.csv`,
  };
}

/**
 * A mismatch between the authorities on chain and EXPECTED_MINT/FREEZE_AUTHORITY is `mismatch` (bad by
 * default): someone can mint or freeze who should not. No expectation configured is expectation_missing.
 * No snapshot yet is ok with a note: its freshness check already reports the missing snapshot.
 */
export async function mintAuthorityCheck(ctx: AppContext, policy: StatusPolicy) {
  const p = policy.checks.mint_authority;
  const proof = await mintAuthoritiesProof(ctx);
  const base = {
    configured: ctx.chain.configured,
    review_status: proof.review_status,
    expected_review_status: proof.expected_review_status,
    expectation_configured: proof.expectation_configured,
    mismatch: proof.mismatch,
    mismatch_fields: proof.mismatch_fields,
    snapshot_at_utc: proof.snapshot_at_utc,
    proof_url: "/api/public/token-mint-authorities.json",
  };
  if (!ctx.chain.configured)
    return { status: policy.checks.freshness.not_configured, summary: "TOKEN_MINT is not set: no authority to review", note: NOT_CONFIGURED, ...base };
  if (proof.review_status === null)
    return { status: "ok" as const, summary: "no mint-authority snapshot yet (see freshness_mint_authorities)", note: "no_snapshot", ...base };
  if (proof.mismatch) {
    return {
      status: p.mismatch,
      summary: `authorities differ from the expectation: ${proof.mismatch_fields.join(", ")} (review ${proof.review_status}, expected ${proof.expected_review_status})`,
      note: null,
      ...base,
    };
  }
  if (!proof.expectation_configured) {
    return {
      status: p.expectation_missing,
      summary: `review ${proof.review_status}; no expectation configured (EXPECTED_MINT_AUTHORITY / EXPECTED_FREEZE_AUTHORITY)`,
      note: "expectation_missing",
      ...base,
    };
  }
  return { status: "ok" as const, summary: `review ${proof.review_status}, as expected`, note: null, ...base };
}
