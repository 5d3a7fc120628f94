import type { Static } from "elysia";
import type { AppContext } from "../context";
import type { Queryable } from "../db/port";
import { AppError, NotFoundError } from "../http/errors/errors";
import { schemaView } from "../http/schema-view";
import { activeLiveKeyCount, promotionEvidenceTask, sandboxKeysOf, sandboxUserOf, type Traffic, userCounts } from "./store";
import { type Check as CheckSchema, Metrics } from "./model";

export const PROMOTION_POLICY = "sandbox_to_live_manual_approval" as const;
/** Readiness is judged on the sandbox traffic of the last WINDOW_DAYS days (request_log keeps at least that). */
export const WINDOW_DAYS = 30;
export const MIN_SUCCESSFUL_CALLS = 10;
/** Share of signed sandbox calls answered 4xx/5xx (429 excluded: backing off is the right reaction, not a bug). */
export const MAX_ERROR_RATE_PCT = 20;

type Check = Static<typeof CheckSchema>;

/** The ids of the required checks that fail, as a sentence lists them. */
const failing = (items: Check[]) =>
  items
    .filter((c) => c.required && c.status === "fail")
    .map((c) => c.id)
    .join(", ");

function checklist(t: Traffic, idem: number, acks: number): Check[] {
  const pass = (ok: boolean) => (ok ? ("pass" as const) : ("fail" as const));
  const counted = t.total_requests - t.rate_limited_requests;
  const errorRate = counted > 0 ? Math.round((t.error_requests / counted) * 10_000) / 100 : null;
  return [
    {
      id: "signed_calls_succeeded",
      title: "Signed sandbox calls succeed",
      required: true,
      status: pass(t.successful_requests >= MIN_SUCCESSFUL_CALLS),
      observed: t.successful_requests,
      threshold: `at least ${MIN_SUCCESSFUL_CALLS} successful signed calls in ${WINDOW_DAYS} days`,
      detail: "Counts answers below 400 to this partner's sandbox keys; a call with a bad signature never reaches a key.",
      links: { try: "/api/partner/sandbox/verify", signing: "/api/partner/capabilities" },
    },
    {
      id: "idempotency_used",
      title: "Mutations carry an Idempotency-Key",
      required: true,
      status: pass(idem > 0),
      observed: idem,
      threshold: "at least 1 completed mutation with an Idempotency-Key",
      detail: "Stored idempotency records of the sandbox keys plus sandbox ledger entries written under a key.",
      links: { try: "/api/partner/sandbox/salutes/credit", errors: "/api/partner/errors.json" },
    },
    {
      id: "webhook_receiver_acknowledged",
      title: "A webhook receiver acknowledged a sandbox delivery",
      required: true,
      status: pass(acks > 0),
      observed: acks,
      threshold: "at least 1 sandbox delivery answered 2xx",
      detail: "Register a sandbox webhook on your receiver and send a test delivery; the receiver must answer 2xx.",
      links: { create: "/api/partner/sandbox/webhooks", test: "/api/partner/sandbox/webhooks/WEBHOOK_ID/test", events: "/api/partner/sandbox/webhook-events" },
    },
    {
      id: "error_rate_below_threshold",
      title: "Error rate is low",
      required: true,
      status: pass(errorRate !== null && errorRate <= MAX_ERROR_RATE_PCT),
      observed: errorRate,
      threshold: `at most ${MAX_ERROR_RATE_PCT}% of signed sandbox calls answered 4xx/5xx (429 excluded)`,
      detail: "Percent of the window's signed calls; with no calls there is no rate and the check fails.",
      links: { errors: "/api/partner/errors.json", usage: "/api/partner/analytics/usage" },
    },
    {
      id: "webhook_simulator_used",
      title: "Signature verification practised with the simulator",
      required: false,
      status: pass(t.simulator_runs > 0),
      observed: t.simulator_runs,
      threshold: "recommended: at least 1 simulator run",
      detail: "Optional: sign a scenario and check your receiver's verifier accepts it.",
      links: { scenarios: "/api/partner/sandbox/webhook-simulator/scenarios", run: "/api/partner/sandbox/webhook-simulator/run" },
    },
  ];
}

async function userSection(q: Queryable, partner: string, rawUserId: string) {
  const id = /^[1-9]\d{0,15}$/.test(rawUserId) ? Number(rawUserId) : null;
  const u = id === null ? null : await sandboxUserOf(q, partner, id);
  // Like every partner read: another partner's (or a live) user id is answered as unknown.
  if (!u) throw new NotFoundError("user", rawUserId);
  return { user_id: String(u.id), external_id: u.external_id, status: u.status, ...(await userCounts(q, u.id)) };
}

export interface ReportOptions {
  userId?: string;
  /** How many recent failed calls to list. */
  limit: number;
}

/**
 * Readiness of a partner for a live key, from its sandbox keys' request_log rows and its sandbox state. The
 * same function answers the partner (GET promotion-report) and the operator (POST promote, and its 409).
 */
export async function promotionReport(ctx: AppContext, partner: string, opts: ReportOptions) {
  const q = ctx.store;
  // The request log is buffered off the request path; flush so the report sees the calls just made.
  await ctx.requestLog.flush();
  const keys = await sandboxKeysOf(q, partner);
  if (keys.length === 0) throw new NotFoundError("partner with a sandbox key", partner);
  const keyIds = keys.map((k) => k.key_id);
  const end = ctx.clock.now();
  const start = new Date(end.getTime() - WINDOW_DAYS * 86_400_000);
  const evidence = { partner, keyIds, sinceIso: start.toISOString(), limit: opts.limit };
  const { traffic: t, idempotent, acknowledged, recent } = await q.apart(promotionEvidenceTask, evidence);
  const items = checklist(t, idempotent, acknowledged);
  const required = items.filter((c) => c.required);
  const passed = required.filter((c) => c.status === "pass").length;
  const liveKeys = await activeLiveKeyCount(q, partner);
  const user = opts.userId === undefined ? null : await userSection(q, partner, opts.userId);
  return {
    partner,
    promotion_policy: PROMOTION_POLICY,
    ready: passed === required.length,
    score: { passed, required: required.length, percent: Math.round((passed / required.length) * 100) },
    window: { days: WINDOW_DAYS, start_utc: start.toISOString(), end_utc: end.toISOString() },
    metrics: schemaView(Metrics, t, {}),
    checklist: items,
    sandbox_keys: keys.map((k) => ({ key_id: k.key_id, status: k.status, scopes: k.scopes ? k.scopes.split(",") : [], last_used_at: k.last_used_at })),
    active_live_keys: liveKeys,
    recent_errors: recent,
    user,
    next_step:
      passed === required.length
        ? "Ready: ask the operators to promote you (they call POST /admin/partners/{partner}/promote and hand over the live key)."
        : `Not ready: fix the failing checks (${failing(items)}), then ask for promotion.`,
    links: { capabilities: "/api/partner/capabilities", errors: "/api/partner/errors.json", promote: "/admin/partners/PARTNER/promote (operators only)" },
  };
}

export type PromotionReport = Awaited<ReturnType<typeof promotionReport>>;

export const notReady = (report: PromotionReport) =>
  new AppError(
    "promotion_not_ready",
    `Partner ${report.partner} is not ready for a live key: ${failing(report.checklist)} failing; fix them or promote with force=true and a reason`,
    { details: report },
  );
