import type { AppContext } from "../../context";
import { errorFields } from "../../log";
import { worst, type CheckBase, type Level } from "./types";
import { chainRpcCheck, FRESHNESS_CHECK_NAMES, freshnessCheck, mintAuthorityCheck } from "./chain";
import { jobsCheck } from "./jobs";
import { databaseCheck, requestErrorsCheck, webhooksCheck } from "./system";
import type { StatusPolicy } from "./policy";
import { reliabilityCheck } from "./reliability";
import { auditAnomaliesCheck } from "./audit";
import type { Failed } from "../model";

// The status engine: every named check, evaluated against the policy in force, and the overall verdict.

/** What an evaluation may be asked to hold still: `requestsBefore` ends the request-derived windows there. */
export interface EvaluationOptions {
  requestsBefore?: Date;
}

type CheckFn = (ctx: AppContext, policy: StatusPolicy, options: EvaluationOptions) => CheckBase | Promise<CheckBase>;

/** Every check in display order. Names are stable: snapshots, badges and uptime are keyed by them. */
export const CHECKS: ReadonlyArray<readonly [string, CheckFn]> = [
  ["database", databaseCheck],
  ["reliability", reliabilityCheck],
  ["jobs", jobsCheck],
  ["chain_rpc", chainRpcCheck],
  ...FRESHNESS_CHECK_NAMES.map((name) => [name, (ctx: AppContext, p: StatusPolicy) => freshnessCheck(ctx, p, name)] as const),
  ["mint_authority", mintAuthorityCheck],
  ["audit_anomalies", auditAnomaliesCheck],
  ["webhooks", webhooksCheck],
  ["request_errors", (ctx, p, o) => requestErrorsCheck(ctx, p, o.requestsBefore)],
];

export const CHECK_NAMES: readonly string[] = CHECKS.map(([name]) => name);

export interface StatusEvaluation {
  generated_at: string;
  overall: Level;
  policy_version: string;
  checks: Record<string, CheckBase>;
}

/**
 * A check with nothing to judge: the chain checks mark it with note "not_configured" (no TOKEN_MINT). The
 * mark is read here, in one place, so every check answers `configured` the same way.
 */
export const isNotConfigured = (c: CheckBase): boolean => (c as { note?: unknown }).note === "not_configured";

/**
 * Worst of the checks that count. Left out: a not-configured check, unless the policy raised it above ok
 * (freshness.not_configured: warn is the operator saying "this deployment must have a token"); and an
 * audit-anomalies check's warn unless the policy says audit_anomalies_warn_degrades (anomalies in published
 * data are worth showing without calling the service degraded; its bad always counts).
 */
export function overallOf(checks: Record<string, Pick<CheckBase, "status" | "configured">>, policy: StatusPolicy): Level {
  return worst(
    Object.entries(checks)
      .filter(([, c]) => c.configured !== false || c.status !== "ok")
      .map(([name, c]) => (name === "audit_anomalies" && c.status === "warn" && !policy.audit_anomalies_warn_degrades ? "ok" : c.status)),
  );
}

export async function evaluateChecks(ctx: AppContext, policy: StatusPolicy, options: EvaluationOptions = {}): Promise<StatusEvaluation> {
  const checks: Record<string, CheckBase> = {};
  for (const [name, fn] of CHECKS) {
    try {
      const c = await fn(ctx, policy, options);
      checks[name] = { ...c, configured: !isNotConfigured(c) };
    } catch (err) {
      ctx.log.error("status check failed", { check: name, ...errorFields(err) });
      // A check that threw: shown as warn with the error, never hidden, never allowed to take the others down.
      const failed: typeof Failed.static = {
        status: "warn",
        summary: "the check could not be evaluated",
        configured: true,
        evaluation_error: (err as Error).message?.slice(0, 200) ?? String(err),
      };
      checks[name] = failed;
    }
  }
  return { generated_at: ctx.clock.now().toISOString(), overall: overallOf(checks, policy), policy_version: policy.version, checks };
}
