import type { Database } from "bun:sqlite";
import type { AppContext } from "../context";
import { AppError, NotFoundError } from "../http/errors";

export const PROMOTION_POLICY = "sandbox_to_live_manual_approval" as const;
/** Readiness is judged on the sandbox traffic of the last WINDOW_DAYS days (request_log keeps at least that). */
export const WINDOW_DAYS = 30;
export const MIN_SUCCESSFUL_CALLS = 10;
/** Share of signed sandbox calls answered 4xx/5xx (429 excluded: backing off is the right reaction, not a bug). */
export const MAX_ERROR_RATE_PCT = 20;

const KEYS = "SELECT value FROM json_each(?1)";

interface Traffic {
  total: number;
  successful: number;
  errors: number;
  rate_limited: number;
  replays: number;
  simulator_runs: number;
}

function traffic(db: Database, keyIds: string, since: string): Traffic {
  return db
    .query(
      `SELECT count(*) AS total, coalesce(sum(status < 400), 0) AS successful, coalesce(sum(status >= 400 AND status <> 429), 0) AS errors,
              coalesce(sum(status = 429), 0) AS rate_limited, coalesce(sum(error_code = 'idempotency_replay'), 0) AS replays,
              coalesce(sum(route = '/api/partner/sandbox/webhook-simulator/run' AND method = 'POST' AND status < 400), 0) AS simulator_runs
       FROM request_log WHERE key_ref IN (SELECT ref FROM request_log_keys WHERE key_id IN (${KEYS})) AND at > ?2`,
    )
    .get(keyIds, since) as Traffic;
}

/** Durable evidence that mutations carried Idempotency-Key: stored records (24 h) and the ledger's own column. */
function idempotentMutations(db: Database, partner: string, keyIds: string): number {
  const records = db.query(`SELECT count(*) AS n FROM idempotency_records WHERE key_id IN (${KEYS}) AND state = 'completed'`).get(keyIds) as { n: number };
  const ledger = db.query("SELECT count(*) AS n FROM salutes_ledger WHERE partner = ? AND mode = 'sandbox' AND idempotency_key IS NOT NULL").get(partner) as {
    n: number;
  };
  return records.n + ledger.n;
}

const acknowledged = (db: Database, partner: string) =>
  (db.query("SELECT count(*) AS n FROM webhook_deliveries WHERE partner = ? AND mode = 'sandbox' AND status = 'succeeded'").get(partner) as { n: number }).n;

type Check = {
  id: string;
  title: string;
  required: boolean;
  status: "pass" | "fail";
  observed: number | null;
  threshold: string;
  detail: string;
  links: Record<string, string>;
};

function checklist(t: Traffic, idem: number, acks: number): Check[] {
  const pass = (ok: boolean) => (ok ? ("pass" as const) : ("fail" as const));
  const errorRate = t.total - t.rate_limited > 0 ? Math.round((t.errors / (t.total - t.rate_limited)) * 10_000) / 100 : null;
  return [
    {
      id: "signed_calls_succeeded",
      title: "Signed sandbox calls succeed",
      required: true,
      status: pass(t.successful >= MIN_SUCCESSFUL_CALLS),
      observed: t.successful,
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

function userSection(db: Database, partner: string, rawUserId: string) {
  const id = /^[1-9]\d{0,15}$/.test(rawUserId) ? Number(rawUserId) : null;
  const u =
    id === null
      ? null
      : (db.query("SELECT id, external_id, status FROM partner_users WHERE id = ? AND partner = ? AND mode = 'sandbox'").get(id, partner) as {
          id: number;
          external_id: string;
          status: string;
        } | null);
  // Like every partner read: another partner's (or a live) user id is answered as unknown.
  if (!u) throw new NotFoundError("user", rawUserId);
  const n = (sql: string) => (db.query(sql).get(u.id) as { n: number }).n;
  return {
    user_id: String(u.id),
    external_id: u.external_id,
    status: u.status,
    wallets: n("SELECT count(*) AS n FROM wallet_links WHERE user_id = ?"),
    ledger_entries: n("SELECT count(*) AS n FROM salutes_ledger WHERE user_id = ?"),
    idempotent_ledger_entries: n("SELECT count(*) AS n FROM salutes_ledger WHERE user_id = ? AND idempotency_key IS NOT NULL"),
  };
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
export function promotionReport(ctx: AppContext, partner: string, opts: ReportOptions) {
  const db = ctx.db.sqlite;
  // The request log is buffered off the request path; flush so the report sees the calls just made.
  ctx.requestLog.flush();
  const keys = db
    .query("SELECT key_id, status, scopes, last_used_at FROM partner_keys WHERE partner = ? AND mode = 'sandbox' ORDER BY created_at, key_id")
    .all(partner) as Array<{ key_id: string; status: string; scopes: string; last_used_at: string | null }>;
  if (keys.length === 0) throw new NotFoundError("partner with a sandbox key", partner);
  const keyIds = JSON.stringify(keys.map((k) => k.key_id));
  const end = ctx.clock.now();
  const start = new Date(end.getTime() - WINDOW_DAYS * 86_400_000);
  const t = traffic(db, keyIds, start.toISOString());
  const items = checklist(t, idempotentMutations(db, partner, keyIds), acknowledged(db, partner));
  const required = items.filter((c) => c.required);
  const passed = required.filter((c) => c.status === "pass").length;
  const recent = db
    .query(`SELECT r.at, r.method, r.route, r.status, r.error_code, k.key_id FROM request_log r JOIN request_log_keys k ON k.ref = r.key_ref
       WHERE k.key_id IN (${KEYS}) AND r.at > ?2 AND r.status >= 400 ORDER BY r.id DESC LIMIT ?3`)
    .all(keyIds, start.toISOString(), opts.limit) as Array<{
    at: string;
    method: string;
    route: string;
    status: number;
    error_code: string | null;
    key_id: string;
  }>;
  const liveKeys = (db.query("SELECT count(*) AS n FROM partner_keys WHERE partner = ? AND mode = 'live' AND status = 'active'").get(partner) as { n: number })
    .n;
  return {
    partner,
    promotion_policy: PROMOTION_POLICY,
    ready: passed === required.length,
    score: { passed, required: required.length, percent: Math.round((passed / required.length) * 100) },
    window: { days: WINDOW_DAYS, start_utc: start.toISOString(), end_utc: end.toISOString() },
    metrics: {
      total_requests: t.total,
      successful_requests: t.successful,
      error_requests: t.errors,
      rate_limited_requests: t.rate_limited,
      idempotent_replays: t.replays,
    },
    checklist: items,
    sandbox_keys: keys.map((k) => ({ key_id: k.key_id, status: k.status, scopes: k.scopes ? k.scopes.split(",") : [], last_used_at: k.last_used_at })),
    active_live_keys: liveKeys,
    recent_errors: recent,
    user: opts.userId === undefined ? null : userSection(db, partner, opts.userId),
    next_step:
      passed === required.length
        ? "Ready: ask the operators to promote you (they call POST /admin/partners/{partner}/promote and hand over the live key)."
        : `Not ready: fix the failing checks (${required
            .filter((c) => c.status === "fail")
            .map((c) => c.id)
            .join(", ")}), then ask for promotion.`,
    links: { capabilities: "/api/partner/capabilities", errors: "/api/partner/errors.json", promote: "/admin/partners/PARTNER/promote (operators only)" },
  };
}

export type PromotionReport = ReturnType<typeof promotionReport>;

export const notReady = (report: PromotionReport) =>
  new AppError(
    "promotion_not_ready",
    `Partner ${report.partner} is not ready for a live key: ${report.checklist
      .filter((c) => c.required && c.status === "fail")
      .map((c) => c.id)
      .join(", ")} failing; fix them or promote with force=true and a reason`,
    {
      details: report,
    },
  );
