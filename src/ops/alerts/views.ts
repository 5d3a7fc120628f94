import type { AppContext } from "../../context";
import { NotFoundError } from "../../http/errors";
import { activeSilences, type Silence } from "./silences";
import { type AlertLevel, type AlertStateRow, alertIssueId, alertPagePath, summaryOf } from "./state";

// What operators read of the alert state: the "firing now" list (firing.json, the readiness verdict, /metrics)
// and one alert with its history and notices (the alert page). Reads only: the writers apply new alert runs
// (recordAlertRun as it records, the link-inbox job every 5 s), so a view lags a row written any other way by one
// link-inbox tick at most.

export interface AlertView {
  id: number;
  key: string;
  source: string;
  name: string;
  level: AlertLevel;
  since: string;
  fired_at: string | null;
  resolved_at: string | null;
  last_evaluated_at: string;
  value: string | null;
  summary: string | null;
  details: Record<string, unknown> | null;
  silenced_by: Pick<Silence, "id" | "matcher" | "reason" | "created_by" | "ends_at"> | null;
  notified_level: AlertLevel | null;
  notified_at: string | null;
  /** The alert's operator page (a path under PUBLIC_BASE_URL). */
  page: string;
}

type Joined = AlertStateRow & { value: string | null; details: string | null };

function parse(raw: string | null): Record<string, unknown> | null {
  if (raw === null) return null;
  try {
    const v = JSON.parse(raw);
    return v && typeof v === "object" && !Array.isArray(v) ? v : { value: v };
  } catch {
    return { text: raw };
  }
}

const SELECT = `SELECT s.*, r.value AS value, r.details AS details FROM ops_alert_state s LEFT JOIN ops_alert_runs r ON r.id = s.last_row_id`;

function viewOf(j: Joined, silence: Silence | null): AlertView {
  return {
    id: j.id,
    key: j.alert_key,
    source: j.source,
    name: j.name,
    level: j.level,
    since: j.since,
    fired_at: j.level === "ok" ? null : j.fired_at,
    resolved_at: j.resolved_at,
    last_evaluated_at: j.last_seen_at,
    value: j.value,
    summary: summaryOf(j.details),
    details: parse(j.details),
    silenced_by: silence
      ? { id: silence.id, matcher: silence.matcher, reason: silence.reason, created_by: silence.created_by, ends_at: silence.ends_at }
      : null,
    notified_level: j.notified_level,
    notified_at: j.notified_at,
    page: alertPagePath(j.id),
  };
}

export interface FiringFilter {
  source?: string;
  level?: "warn" | "fail";
}

/** Every alert firing now (warn or fail), fail first, then the longest firing first. */
export function firingAlerts(ctx: AppContext, f: FiringFilter = {}): AlertView[] {
  const rows = ctx.db.sqlite
    .query(
      `${SELECT} WHERE s.level IN ('warn', 'fail') AND (?1 IS NULL OR s.source = ?1) AND (?2 IS NULL OR s.level = ?2)
       ORDER BY CASE s.level WHEN 'fail' THEN 0 ELSE 1 END, s.since, s.id`,
    )
    .all(f.source ?? null, f.level ?? null) as Joined[];
  const silences = activeSilences(ctx, ctx.clock.now().toISOString());
  return rows.map((r) => viewOf(r, silences.of(r.alert_key)));
}

/**
 * The alerts whose state changed most recently (fired, escalated or resolved), at most `limit`, newest change
 * first: the console's history of what fired and what resolved. Firing ones carry their silence.
 */
export function recentAlerts(ctx: AppContext, limit: number): AlertView[] {
  const rows = ctx.db.sqlite
    .query(`${SELECT} ORDER BY max(s.since, coalesce(s.resolved_at, ''), coalesce(s.fired_at, '')) DESC, s.id DESC LIMIT ?`)
    .all(limit) as Joined[];
  const silences = activeSilences(ctx, ctx.clock.now().toISOString());
  return rows.map((r) => viewOf(r, r.level === "ok" ? null : silences.of(r.alert_key)));
}

/** Every known alert key with its level (for /metrics), by key. */
export function alertLevels(ctx: AppContext): Array<{ key: string; level: AlertLevel }> {
  return ctx.db.sqlite.query("SELECT alert_key AS key, level FROM ops_alert_state ORDER BY alert_key").all() as Array<{ key: string; level: AlertLevel }>;
}

export interface AlertHistoryRow {
  id: number;
  run_id: string;
  at: string;
  status: string;
  value: string | null;
  summary: string | null;
}

export interface AlertNoticeRow {
  at: string;
  event: string;
  target: string;
  attempt: number;
  status_code: number | null;
  status_code_family: string | null;
  skip_reason: string | null;
  error: string | null;
}

/** Evaluations shown on an alert's page, newest first; the export has the rest. */
export const ALERT_HISTORY_SHOWN = 50;
/** Notice attempts and skips shown on a page, newest first; the link-inbox export has the rest. */
export const NOTICES_SHOWN = 50;

/** The notices (link-inbox attempts and skips) of one issue, newest first. */
export function noticesOf(ctx: AppContext, issueId: string): AlertNoticeRow[] {
  return ctx.db.sqlite
    .query(
      "SELECT at, event, target, attempt, status_code, status_code_family, skip_reason, error FROM ops_link_events WHERE issue_id = ? ORDER BY at DESC, id DESC LIMIT ?",
    )
    .all(issueId, NOTICES_SHOWN) as AlertNoticeRow[];
}

/** One alert by its id (the address in every notice), with its recent evaluations and notices; 404 when unknown. */
export function alertDetailOrThrow(ctx: AppContext, id: number) {
  const j = ctx.db.sqlite.query(`${SELECT} WHERE s.id = ?`).get(id) as Joined | null;
  if (!j) throw new NotFoundError("alert", id);
  const alert = viewOf(j, activeSilences(ctx, ctx.clock.now().toISOString()).of(j.alert_key));
  const history = (
    ctx.db.sqlite
      .query("SELECT id, run_id, at, status, value, details FROM ops_alert_runs WHERE source = ? AND name = ? ORDER BY at DESC, id DESC LIMIT ?")
      .all(j.source, j.name, ALERT_HISTORY_SHOWN) as Array<Omit<AlertHistoryRow, "summary"> & { details: string | null }>
  ).map(({ details, ...r }) => ({ ...r, summary: summaryOf(details) }));
  return { alert, history, notices: noticesOf(ctx, alertIssueId(j.source, j.name)) };
}

/**
 * How much the webhook dead-letter queue grew since `since`: the sum of the positive growths the alerts monitor
 * recorded (pruning can shrink the queue; that is not the queue healing), and the count at the newest run.
 */
export function deadLetterGrowthSince(ctx: AppContext, since: string): { now: number | null; growth: number } {
  const rows = ctx.db.sqlite
    .query("SELECT value, details FROM ops_alert_runs WHERE source = 'webhooks' AND name = 'dead_letter_growth' AND at >= ? ORDER BY at, id")
    .all(since) as Array<{ value: string | null; details: string | null }>;
  let growth = 0;
  for (const r of rows) {
    const g = parse(r.details)?.growth;
    if (typeof g === "number" && g > 0) growth += g;
  }
  const last = rows.at(-1)?.value;
  return { now: last !== undefined && last !== null && /^\d+$/.test(last) ? Number(last) : null, growth };
}
