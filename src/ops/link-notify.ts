import { createHash } from "node:crypto";
import type { AppContext } from "../context";
import { type IncidentView, incidentEventListeners, type StatusEventType } from "../status/service";

// The link inbox's producers: an incident change (a listener of the status domain, called in the incident's own
// transaction), a failing alert run and a preflight anomaly (rows of ops_alert_runs, polled by the link-inbox
// job). Each becomes one outbox row per configured chat target, or an event row saying why it was not queued.

export const LINK_EVENTS = ["incident.opened", "incident.updated", "incident.resolved", "alert.fired", "preflight.anomaly"] as const;
export type LinkEvent = (typeof LINK_EVENTS)[number];
export const STATUS_CODE_FAMILIES = ["2xx", "4xx", "5xx", "timeout", "other"] as const;
export const SKIP_REASONS = ["no_url", "cooldown", "other"] as const;

type Deps = Pick<AppContext, "db" | "clock" | "config">;

/**
 * How a target is stored and shown: scheme-less host, the first path segment and `…`, then a short fingerprint
 * of the whole URL so two Slack webhooks (same host, same `/services/`) stay distinct. Slack and Discord webhook
 * URLs carry their secret in the path: the full URL is never written to the database, a log or an answer; the
 * sender maps this label back to the configured URL at send time.
 */
export function redactTarget(raw: string): string {
  const fp = createHash("sha256").update(raw).digest("hex").slice(0, 6);
  try {
    const u = new URL(raw);
    const first = u.pathname.split("/").filter(Boolean)[0];
    return `${u.host}${first ? `/${first}` : ""}/…#${fp}`;
  } catch {
    return `invalid-url/…#${fp}`;
  }
}

export interface LinkTarget {
  label: string;
  /** The incoming-webhook URL; empty for the messenger bot target. */
  url: string;
  /** Set for the messenger bot target: the Telegram chat its sendMessage posts to. */
  messengerChatId?: string;
}

/** The label of the messenger bot target (chat ids are not secrets; the bot token is never part of it). */
export const messengerTargetLabel = (chatId: string) => `messenger-bot:chat:${chatId}`;

/**
 * The configured targets, in configuration order, duplicates removed: the incoming webhooks, then the messenger
 * bot's chat when LINK_INBOX_MESSENGER_CHAT_ID and MESSENGER_BOT_TOKEN are both set.
 */
export function linkTargets(ctx: Pick<AppContext, "config">): LinkTarget[] {
  const seen = new Set<string>();
  const out: LinkTarget[] = [];
  for (const url of ctx.config.linkInbox.webhookUrls) {
    const label = redactTarget(url);
    if (seen.has(label)) continue;
    seen.add(label);
    out.push({ label, url });
  }
  const chat = ctx.config.linkInbox.messengerChatId;
  if (chat && ctx.config.messenger.botToken) out.push({ label: messengerTargetLabel(chat), url: "", messengerChatId: chat });
  return out;
}

export interface LinkMessage {
  event: LinkEvent;
  issueId: string;
  text: string;
  /** The Herald page or route the message links to (absolute, under PUBLIC_BASE_URL). */
  link: string;
}

const baseOf = (ctx: Pick<AppContext, "config">) => ctx.config.publicBaseUrl.replace(/\/+$/, "");

/**
 * Queues a message to every target (synchronous: call inside the transaction of the change it reports).
 * Cooldown: a message for the same issue and target queued less than LINK_INBOX_COOLDOWN_SECONDS ago means this
 * one is not queued (an event with skip_reason cooldown). A resolution is exempt: the operator must hear that
 * it is over even when the incident opened a minute ago. No target configured → one no_url event.
 */
export function enqueueLinkMessage(ctx: Deps, m: LinkMessage): { queued: number; skipped: number } {
  const sqlite = ctx.db.sqlite;
  const now = ctx.clock.now();
  const nowIso = now.toISOString();
  const payload = JSON.stringify({ text: m.text, content: m.text });
  const skip = (target: string, reason: (typeof SKIP_REASONS)[number], error: string | null) =>
    sqlite
      .query("INSERT INTO ops_link_events (at, event, issue_id, target, url, attempt, skip_reason, error) VALUES (?, ?, ?, ?, ?, 0, ?, ?)")
      .run(nowIso, m.event, m.issueId, target, m.link, reason, error);
  const targets = linkTargets(ctx);
  if (targets.length === 0) {
    skip("", "no_url", "LINK_INBOX_WEBHOOK_URLS is empty");
    return { queued: 0, skipped: 1 };
  }
  const cooldownStart = new Date(now.getTime() - ctx.config.linkInbox.cooldownSeconds * 1000).toISOString();
  let queued = 0;
  let skipped = 0;
  for (const t of targets) {
    if (m.event !== "incident.resolved" && ctx.config.linkInbox.cooldownSeconds > 0) {
      const recent = sqlite
        .query("SELECT id, created_at FROM ops_link_outbox WHERE issue_id = ? AND target = ? AND created_at > ? ORDER BY id DESC LIMIT 1")
        .get(m.issueId, t.label, cooldownStart) as { id: number; created_at: string } | null;
      if (recent) {
        skip(t.label, "cooldown", `message ${recent.id} for this issue and target was queued at ${recent.created_at}`);
        skipped++;
        continue;
      }
    }
    sqlite
      .query(
        "INSERT INTO ops_link_outbox (event, issue_id, target, payload, status, attempts, next_attempt_at, created_at) VALUES (?, ?, ?, ?, 'pending', 0, ?, ?)",
      )
      .run(m.event, m.issueId, t.label, payload, nowIso, nowIso);
    queued++;
  }
  return { queued, skipped };
}

const INCIDENT_EVENT: Record<StatusEventType, LinkEvent> = {
  "status.incident.created": "incident.opened",
  "status.incident.updated": "incident.updated",
  "status.incident.resolved": "incident.resolved",
};

/** The message of an incident change: headline, severity, and the incident's admin route. */
export function incidentMessage(ctx: Pick<AppContext, "config">, type: StatusEventType, incident: IncidentView): LinkMessage {
  const event = INCIDENT_EVENT[type];
  const link = `${baseOf(ctx)}/admin/status/incidents/${incident.id}`;
  const verb = event === "incident.opened" ? "opened" : event === "incident.resolved" ? "resolved" : "updated";
  const latest = incident.updates[0]?.message;
  const text = `[Herald] Incident ${verb}: ${incident.title} (${incident.severity})${latest ? ` — ${latest.slice(0, 200)}` : ""} ${link}`;
  return { event, issueId: `incident:${incident.id}`, text, link };
}

/** The status domain's listener: one message per incident change, queued in the change's transaction. */
export function onIncidentEvent(ctx: Deps, type: StatusEventType, incident: IncidentView): void {
  enqueueLinkMessage(ctx, incidentMessage(ctx, type, incident));
}

/** Subscribes the link inbox to incident changes (idempotent: the listener set holds one function). */
export function subscribeLinkInbox(): void {
  incidentEventListeners.add(onIncidentEvent);
}

interface AlertRunRow {
  id: number;
  at: string;
  source: string;
  name: string;
  status: string;
  value: string | null;
}

/** The message of a failing alert run; `source = preflight` is a preflight anomaly. */
export function alertMessage(ctx: Pick<AppContext, "config">, row: AlertRunRow): LinkMessage {
  const preflight = row.source === "preflight";
  const link = preflight ? `${baseOf(ctx)}/admin/ops/preflight-guards/anomalies.json` : `${baseOf(ctx)}/admin/ops/alerts-monitor/export.json`;
  const what = preflight ? `Preflight anomaly: ${row.name}` : `Alert fired: ${row.source}/${row.name}`;
  const text = `[Herald] ${what}${row.value ? ` (${row.value.slice(0, 100)})` : ""} at ${row.at} ${link}`;
  return {
    event: preflight ? "preflight.anomaly" : "alert.fired",
    issueId: preflight ? `preflight:${row.name}` : `alert:${row.source}:${row.name}`,
    text,
    link,
  };
}

// The last ops_alert_runs id each process has turned into messages. On a process's first poll it starts after the
// newest alert run no later than the last alert message or skip already recorded (so a restart neither repeats
// nor loses runs, up to runs sharing that very instant, which the cooldown then absorbs), or from the last
// 24 hours on a database that never had one.
const cursors = new WeakMap<object, number>();

function initialCursor(ctx: Deps): number {
  const sqlite = ctx.db.sqlite;
  const last = sqlite
    .query(
      `SELECT max(at) AS at FROM (SELECT max(created_at) AS at FROM ops_link_outbox WHERE event IN ('alert.fired', 'preflight.anomaly')
         UNION ALL SELECT max(at) FROM ops_link_events WHERE event IN ('alert.fired', 'preflight.anomaly'))`,
    )
    .get() as { at: string | null };
  const since = last.at ?? new Date(ctx.clock.now().getTime() - 86_400_000).toISOString();
  const op = last.at ? "<=" : "<";
  const row = sqlite.query(`SELECT coalesce(max(id), 0) AS id FROM ops_alert_runs WHERE at ${op} ?`).get(since) as { id: number };
  return row.id;
}

/** Turns failing alert runs newer than the cursor into messages, in one transaction; returns how many runs. */
export function pollAlertRuns(ctx: Deps): number {
  const sqlite = ctx.db.sqlite;
  let cursor = cursors.get(ctx.db) ?? initialCursor(ctx);
  // Read the ceiling first: a run written between the two reads waits for the next poll instead of being passed.
  const newest = (sqlite.query("SELECT coalesce(max(id), 0) AS id FROM ops_alert_runs").get() as { id: number }).id;
  const rows = sqlite
    .query("SELECT id, at, source, name, status, value FROM ops_alert_runs WHERE id > ? AND id <= ? AND status = 'fail' ORDER BY id LIMIT 500")
    .all(cursor, newest) as AlertRunRow[];
  sqlite.transaction(() => {
    for (const r of rows) enqueueLinkMessage(ctx, alertMessage(ctx, r));
  })();
  cursor = rows.length === 500 ? rows[rows.length - 1]!.id : Math.max(cursor, newest);
  cursors.set(ctx.db, cursor);
  return rows.length;
}
