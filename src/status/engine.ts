import type { AppContext } from "../context";
import { errorFields } from "../log";
import { worst, type CheckBase, type Level } from "./check-types";
import { chainRpcCheck, FRESHNESS_CHECK_NAMES, freshnessCheck, mintAuthorityCheck } from "./checks-chain";
import { jobsCheck } from "./checks-jobs";
import { databaseCheck, requestErrorsCheck, webhooksCheck } from "./checks-system";
import type { StatusPolicy } from "./policy";
import { reliabilityCheck } from "./reliability";

// The status engine: every named check, evaluated against the policy in force, and the overall verdict.

type CheckFn = (ctx: AppContext, policy: StatusPolicy) => CheckBase;

/** Every check in display order. Names are stable: snapshots, badges and uptime are keyed by them. */
export const CHECKS: ReadonlyArray<readonly [string, CheckFn]> = [
  ["database", databaseCheck],
  ["reliability", reliabilityCheck],
  ["jobs", jobsCheck],
  ["chain_rpc", chainRpcCheck],
  ...FRESHNESS_CHECK_NAMES.map((name) => [name, (ctx: AppContext, p: StatusPolicy) => freshnessCheck(ctx, p, name)] as const),
  ["mint_authority", mintAuthorityCheck],
  ["webhooks", webhooksCheck],
  ["request_errors", requestErrorsCheck],
];

export const CHECK_NAMES: readonly string[] = CHECKS.map(([name]) => name);

/** A check that threw: shown as warn with the error, never hidden, never allowed to take the others down. */
export interface FailedCheck extends CheckBase {
  evaluation_error: string;
}

export interface StatusEvaluation {
  generated_at: string;
  overall: Level;
  policy_version: string;
  checks: Record<string, CheckBase>;
}

/**
 * Worst of the checks. The one exception: an audit-anomalies check's warn counts only when the policy says
 * audit_anomalies_warn_degrades (anomalies in published data are worth showing without calling the service
 * degraded); its bad always counts. No such check exists yet; the rule is here so adding one cannot forget it.
 */
export function overallOf(checks: Record<string, Pick<CheckBase, "status">>, policy: StatusPolicy): Level {
  return worst(
    Object.entries(checks).map(([name, c]) =>
      name === "audit_anomalies" && c.status === "warn" && !policy.audit_anomalies_warn_degrades ? "ok" : c.status,
    ),
  );
}

export function evaluateChecks(ctx: AppContext, policy: StatusPolicy): StatusEvaluation {
  const checks: Record<string, CheckBase> = {};
  for (const [name, fn] of CHECKS) {
    try {
      checks[name] = fn(ctx, policy);
    } catch (err) {
      ctx.log.error("status check failed", { check: name, ...errorFields(err) });
      const failed: FailedCheck = { status: "warn", summary: "the check could not be evaluated", evaluation_error: (err as Error).message?.slice(0, 200) ?? String(err) };
      checks[name] = failed;
    }
  }
  return { generated_at: ctx.clock.now().toISOString(), overall: overallOf(checks, policy), policy_version: policy.version, checks };
}
