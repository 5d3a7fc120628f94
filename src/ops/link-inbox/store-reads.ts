import { countOf, type Queryable, Where } from "../../db/port";
import { EVENT_FIELDS, type EventField, type ExportQueryEcho } from "./exports-model";
import type { LinkEventRow, OutboxRow } from "./store";

// The link inbox's read models over ops_link_events and ops_link_outbox: target health, the verification
// summaries, the events export and an issue's notices. Written once for both engines.

// ---- target health (src/ops/link-inbox/target-health.ts)

/** The newest attempt of a target: any event with an outcome family (a request made, or a send-time refusal). */
export const latestAttempt = (q: Queryable, target: string) =>
  q.get<Pick<LinkEventRow, "at" | "status_code_family" | "error">>(
    "SELECT at, status_code_family, error FROM ops_link_events WHERE target = ? AND status_code_family IS NOT NULL ORDER BY at DESC, id DESC LIMIT 1",
    [target],
  );

export async function lastSuccessAt(q: Queryable, target: string): Promise<string | null> {
  return (
    (await q.get<{ at: string | null }>("SELECT max(at) AS at FROM ops_link_events WHERE target = ? AND status_code_family = '2xx'", [target]))?.at ?? null
  );
}

/** A target's attempts after `after` ("" for all) that `failed` (an SQL predicate, one of the two below) holds for. */
const failuresAfterOf = (failed: string) => async (q: Queryable, target: string, after: string) =>
  countOf(q, `SELECT count(*) AS n FROM ops_link_events WHERE target = ? AND ${failed} AND at > ?`, [target, after]);

/** Failed attempts by latestAttempt's meaning (any outcome family, send-time refusals included): the target's health. */
export const failuresAfter = failuresAfterOf("status_code_family IS NOT NULL AND status_code_family <> '2xx'");

export const newestMessage = (q: Queryable, target: string) =>
  q.get<Pick<OutboxRow, "status" | "last_error">>("SELECT status, last_error FROM ops_link_outbox WHERE target = ? ORDER BY id DESC LIMIT 1", [target]);

export const deadMessages = (q: Queryable, target: string) =>
  countOf(q, "SELECT count(*) AS n FROM ops_link_outbox WHERE target = ? AND status = 'dead'", [target]);

// ---- verification summaries (src/ops/link-inbox/readmodels.ts)

export type SummaryEvent = Pick<LinkEventRow, "id" | "at" | "event" | "issue_id" | "target" | "status_code_family" | "skip_reason">;
const SUMMARY_COLUMNS = "id, at, event, issue_id, target, status_code_family, skip_reason";

export const eventsSince = (q: Queryable, since: string) =>
  q.all<SummaryEvent>(`SELECT ${SUMMARY_COLUMNS} FROM ops_link_events WHERE at >= ? ORDER BY id`, [since]);

export const outboxCountsSince = (q: Queryable, since: string) =>
  q.all<Pick<OutboxRow, "event" | "target" | "status"> & { n: number }>(
    "SELECT event, target, status, count(*) AS n FROM ops_link_outbox WHERE created_at >= ? GROUP BY event, target, status",
    [since],
  );

/** The resolution notice's events of one issue (attempts and skips), oldest first. */
export const resolvedEventsOf = (q: Queryable, issueId: string) =>
  q.all<SummaryEvent>(`SELECT ${SUMMARY_COLUMNS} FROM ops_link_events WHERE issue_id = ? AND event = 'incident.resolved' ORDER BY id`, [issueId]);

export const resolvedMessagesOf = (q: Queryable, issueId: string) =>
  q.all<Pick<OutboxRow, "target" | "status">>("SELECT target, status FROM ops_link_outbox WHERE issue_id = ? AND event = 'incident.resolved' ORDER BY id", [
    issueId,
  ]);

// ---- an issue's notices (the alert page)

export type NoticeRow = Pick<LinkEventRow, "at" | "event" | "target" | "attempt" | "status_code" | "status_code_family" | "skip_reason" | "error">;

export const noticesOfIssue = (q: Queryable, issueId: string, limit: number) =>
  q.all<NoticeRow>(
    "SELECT at, event, target, attempt, status_code, status_code_family, skip_reason, error FROM ops_link_events WHERE issue_id = ? ORDER BY at DESC, id DESC LIMIT ?",
    [issueId, limit],
  );

// ---- the events export (src/ops/link-inbox/exports.ts)

/** What the export filters by, already checked against their lists (exports.ts). */
export type EventsWhere = Omit<typeof ExportQueryEcho.static, "window_preset" | "limit">;

function whereOf(f: EventsWhere): Where {
  const w = new Where().whenAny("event", f.event);
  // substr, not LIKE: a prefix holding % or _ is taken literally (and LIKE's case rules differ between engines).
  if (f.event_prefix !== null) w.add("substr(event, 1, ?) = ?", f.event_prefix.length, f.event_prefix);
  // `at` is stored as toISOString() text, so text comparison is time order.
  w.when(f.at_from, "at >= ?")
    .when(f.at_to, "at < ?")
    .whenAny("status_code_family", f.status_code_family)
    .whenAny("skip_reason", f.skip_reason)
    .when(f.issue_id, "issue_id = ?");
  // "Contains", case-sensitive on both engines without a per-engine function (SQLite's instr, PostgreSQL's strpos):
  // removing a non-empty needle changes the text exactly when the text holds it. A NULL url never matches.
  return w.when(f.url_contains, "replace(url, ?, '') <> url");
}

export async function countEvents(q: Queryable, f: EventsWhere): Promise<number> {
  const w = whereOf(f);
  return countOf(q, `SELECT count(*) AS n FROM ops_link_events ${w.sql}`, w.params);
}

/** A field name is only ever turned into SQL after it is found among the exportable columns. */
export function eventRows(q: Queryable, f: EventsWhere, fields: readonly EventField[], limit: number) {
  const w = whereOf(f);
  const cols = fields.filter((c) => EVENT_FIELDS.includes(c)).join(", ");
  return q.all<Record<EventField, string | number | null>>(`SELECT ${cols} FROM ops_link_events ${w.sql} ORDER BY at DESC, id DESC LIMIT ?`, [
    ...w.params,
    limit,
  ]);
}

export interface TargetTally {
  target: string;
  attempts: number;
  ok: number;
  failed: number;
  skipped: number;
  last_success: string | null;
  last_failure: string | null;
}

/** Per chat target (at most 100): attempts (rows without skip_reason), their 2xx and failures, skips, last success and failure. */
export const targetTallies = (q: Queryable) =>
  q.all<TargetTally>(
    `SELECT target,
       count(*) FILTER (WHERE skip_reason IS NULL) AS attempts,
       count(*) FILTER (WHERE skip_reason IS NULL AND status_code_family = '2xx') AS ok,
       count(*) FILTER (WHERE skip_reason IS NULL AND COALESCE(status_code_family, '') <> '2xx') AS failed,
       count(*) FILTER (WHERE skip_reason IS NOT NULL) AS skipped,
       max(CASE WHEN skip_reason IS NULL AND status_code_family = '2xx' THEN at END) AS last_success,
       max(CASE WHEN skip_reason IS NULL AND COALESCE(status_code_family, '') <> '2xx' THEN at END) AS last_failure
     FROM ops_link_events GROUP BY target ORDER BY target LIMIT 100`,
  );

/** Failed attempts by targetTallies' meaning (rows without skip_reason): the failing streak of a target's tallies. */
export const attemptFailuresAfter = failuresAfterOf("skip_reason IS NULL AND COALESCE(status_code_family, '') <> '2xx'");
