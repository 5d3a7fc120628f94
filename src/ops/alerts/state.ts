import type { AppContext } from "../../context";
import { activeSilences, type ActiveSilences } from "./silences";
import { baseOf, enqueueLinkMessage, type LinkEvent, type LinkMessage, recordLinkSkip } from "../link-inbox/notify";

// Alert state: ops_alert_runs records every evaluation (one row per alert per run); this file turns those rows
// into each alert key's state (ops_alert_state) and sends its state CHANGES, as Alertmanager and PagerDuty do:
// an alert that starts firing is sent at its level (warn or fail), one that escalates is sent again (even inside
// the cooldown), and one that stops firing is sent as resolved — only if its firing was sent. An alert that stays
// at its level sends nothing more. Per issue and target, LINK_INBOX_COOLDOWN_SECONDS still holds: a flapping alert
// is sent once per cooldown (src/ops/link-inbox/notify.ts). A silenced alert changes state like any other; its notice
// becomes a `silenced` skip event instead of a message.
//
// Rows are applied in id order from a cursor kept in the database (the newest row applied to any key), so every
// writer of ops_alert_runs — the alerts-monitor job, the preflight detector, a row written by hand — is covered,
// and two processes applying at once cannot apply a row twice (each key's last_row_id guards it, inside the
// batch's transaction). Both the alerts-monitor job (right after its run) and the link-inbox job (every 5 s) apply.

export type AlertLevel = "ok" | "warn" | "fail";
const RANK: Record<AlertLevel, number> = { ok: 0, warn: 1, fail: 2 };
/** ok / warn / fail; any other status a writer used ("pass") is not firing. */
export const levelOf = (status: string): AlertLevel => (status === "fail" ? "fail" : status === "warn" ? "warn" : "ok");
export const alertKeyOf = (source: string, name: string) => `${source}:${name}`;
/** The link-inbox issue of an alert: preflight anomalies keep their own issue ids. */
export const alertIssueId = (source: string, name: string) => (source === "preflight" ? `preflight:${name}` : `alert:${source}:${name}`);
/** The operator page of one alert (src/ops/console/alert-pages.ts), the link every alert notice carries. */
export const alertPagePath = (id: number) => `/admin/ops/alerts-monitor/alerts/${id}`;

export interface AlertStateRow {
  id: number;
  alert_key: string;
  source: string;
  name: string;
  level: AlertLevel;
  since: string;
  fired_at: string | null;
  resolved_at: string | null;
  last_row_id: number;
  last_seen_at: string;
  notified_level: AlertLevel | null;
  notified_at: string | null;
}

interface RunRow {
  id: number;
  at: string;
  source: string;
  name: string;
  status: string;
  value: string | null;
  details: string | null;
}

type Deps = Pick<AppContext, "db" | "clock" | "config">;

const BATCH = 500;
const MAX_BATCHES = 40;
/** On a database whose alert runs were never applied (a fresh one, or one upgraded to this version): the last day. */
const FIRST_LOOKBACK_MS = 86_400_000;

/** A short human summary of an evaluation's details: a status check's summary, the audit's reasons, a finding's why. */
export function summaryOf(details: string | Record<string, unknown> | null): string | null {
  let d: Record<string, unknown> | null = null;
  if (typeof details === "string") {
    try {
      const v = JSON.parse(details);
      d = v && typeof v === "object" && !Array.isArray(v) ? v : null;
    } catch {
      d = null;
    }
  } else d = details;
  if (!d) return null;
  if (typeof d.summary === "string" && d.summary) return d.summary;
  if (Array.isArray(d.reasons) && d.reasons.length) return d.reasons.filter((r) => typeof r === "string").join("; ");
  if (typeof d.error === "string") return d.error;
  return null;
}

function messageOf(ctx: Deps, s: AlertStateRow, r: RunRow, kind: "fired" | "resolved", previous: AlertLevel): LinkMessage {
  const link = `${baseOf(ctx)}${alertPagePath(s.id)}`;
  const preflight = r.source === "preflight";
  const value = r.value ? ` (${r.value.slice(0, 100)})` : "";
  const summary = summaryOf(r.details);
  const about = summary ? ` — ${summary.slice(0, 200)}` : "";
  let event: LinkEvent;
  let text: string;
  if (kind === "resolved") {
    event = "alert.resolved";
    text = `[Herald] Alert resolved: ${r.source}/${r.name} (was ${previous} since ${s.fired_at ?? s.since})${value} ${link}`;
  } else {
    event = preflight ? "preflight.anomaly" : "alert.fired";
    const what = preflight ? `Preflight anomaly: ${r.name}` : `Alert fired: ${r.source}/${r.name}`;
    text = `[Herald] ${what} [${levelOf(r.status)}]${value}${about} at ${r.at} ${link}`;
  }
  return { event, issueId: alertIssueId(r.source, r.name), text, link };
}

/**
 * Sends (queues) one notice unless a silence holds it back. Returns whether a message was queued to at least one
 * target — what the state remembers as "sent", so that a resolution is sent only for a firing that was.
 */
function notify(ctx: Deps, silences: ActiveSilences, m: LinkMessage, alertKey: string): boolean {
  const silence = silences.of(alertKey);
  if (silence) {
    recordLinkSkip(ctx, m, "", "silenced", `silence ${silence.id} by ${silence.created_by} until ${silence.ends_at}: ${silence.reason.slice(0, 200)}`);
    return false;
  }
  return enqueueLinkMessage(ctx, m).queued > 0;
}

function applyRow(ctx: Deps, silences: ActiveSilences, states: Map<string, AlertStateRow | null>, r: RunRow): void {
  const sqlite = ctx.db.sqlite;
  const key = alertKeyOf(r.source, r.name);
  const level = levelOf(r.status);
  let s = states.has(key) ? states.get(key)! : (sqlite.query("SELECT * FROM ops_alert_state WHERE alert_key = ?").get(key) as AlertStateRow | null);
  if (!s) {
    s = sqlite
      .query(
        `INSERT INTO ops_alert_state (alert_key, source, name, level, since, fired_at, resolved_at, last_row_id, last_seen_at)
         VALUES (?, ?, ?, ?, ?, ?, NULL, ?, ?) RETURNING *`,
      )
      .get(key, r.source, r.name, level, r.at, level === "ok" ? null : r.at, r.id, r.at) as AlertStateRow;
    if (level !== "ok" && notify(ctx, silences, messageOf(ctx, s, r, "fired", "ok"), key)) s = markNotified(ctx, s, level);
    states.set(key, s);
    return;
  }
  if (r.id <= s.last_row_id) return; // applied already (another process, or a re-run of the same rows)
  const previous = s.level;
  const next: AlertStateRow = { ...s, last_row_id: r.id, last_seen_at: r.at };
  if (level !== previous) {
    next.level = level;
    next.since = r.at;
    if (level === "ok") {
      next.resolved_at = r.at;
      // The resolution of a firing nobody was told about (silenced, cooled down, no target) would be noise.
      if (s.notified_level === "warn" || s.notified_level === "fail") {
        if (notify(ctx, silences, messageOf(ctx, next, r, "resolved", previous), key)) Object.assign(next, notified(ctx, "ok"));
        else next.notified_level = null;
      }
    } else {
      if (previous === "ok") {
        next.fired_at = r.at;
        next.resolved_at = null;
        next.notified_level = null;
      }
      const m = messageOf(ctx, next, r, "fired", previous);
      // Escalating within one firing (warn → fail) past what was sent is news even inside the cooldown; a new
      // firing or a de-escalation is not (else an alert flapping between ok and fail would page on every flap).
      const sentRank = next.notified_level === "warn" || next.notified_level === "fail" ? RANK[next.notified_level] : 0;
      m.bypassCooldown = previous !== "ok" && RANK[level] > RANK[previous] && RANK[level] > sentRank;
      if (notify(ctx, silences, m, key)) Object.assign(next, notified(ctx, level));
    }
  }
  sqlite
    .query(
      `UPDATE ops_alert_state SET level = ?, since = ?, fired_at = ?, resolved_at = ?, last_row_id = ?, last_seen_at = ?, notified_level = ?, notified_at = ?
       WHERE id = ?`,
    )
    .run(next.level, next.since, next.fired_at, next.resolved_at, next.last_row_id, next.last_seen_at, next.notified_level, next.notified_at, s.id);
  states.set(key, next);
}

const notified = (ctx: Deps, level: AlertLevel) => ({ notified_level: level, notified_at: ctx.clock.now().toISOString() });

function markNotified(ctx: Deps, s: AlertStateRow, level: AlertLevel): AlertStateRow {
  const n = notified(ctx, level);
  ctx.db.sqlite.query("UPDATE ops_alert_state SET notified_level = ?, notified_at = ? WHERE id = ?").run(n.notified_level, n.notified_at, s.id);
  return { ...s, ...n };
}

function applyBatch(ctx: Deps): number {
  const sqlite = ctx.db.sqlite;
  const { cursor } = sqlite.query("SELECT max(last_row_id) AS cursor FROM ops_alert_state").get() as { cursor: number | null };
  const columns = "id, at, source, name, status, value, details";
  const rows =
    cursor === null
      ? (sqlite
          .query(`SELECT ${columns} FROM ops_alert_runs WHERE at >= ? ORDER BY id LIMIT ?`)
          .all(new Date(ctx.clock.now().getTime() - FIRST_LOOKBACK_MS).toISOString(), BATCH) as RunRow[])
      : (sqlite.query(`SELECT ${columns} FROM ops_alert_runs WHERE id > ? ORDER BY id LIMIT ?`).all(cursor, BATCH) as RunRow[]);
  if (rows.length === 0) return 0;
  const silences = activeSilences(ctx, ctx.clock.now().toISOString());
  const states = new Map<string, AlertStateRow | null>();
  for (const r of rows) applyRow(ctx, silences, states, r);
  return rows.length;
}

/**
 * Applies every alert-run row not applied yet, in batches of 500 (one transaction each: the state, the outbox
 * rows and the skip events of a batch commit together). Returns the rows applied.
 */
export function applyAlertTransitions(ctx: Deps): number {
  // The link-inbox job calls this every 5 s: with nothing new (the usual case) it reads two small rows and takes
  // no write lock. The batch re-reads the cursor inside its transaction, so this peek decides nothing.
  const { cursor } = ctx.db.sqlite.query("SELECT max(last_row_id) AS cursor FROM ops_alert_state").get() as { cursor: number | null };
  if (cursor !== null && !ctx.db.sqlite.query("SELECT 1 FROM ops_alert_runs WHERE id > ? LIMIT 1").get(cursor)) return 0;
  let applied = 0;
  for (let i = 0; i < MAX_BATCHES; i++) {
    const n = ctx.db.sqlite.transaction(() => applyBatch(ctx)).immediate();
    applied += n;
    if (n < BATCH) break;
  }
  return applied;
}
