import { createHash } from "node:crypto";
import type { AppContext } from "../../context";
import type { Queryable } from "../../db/port";
import { type IncidentView, incidentListeners, type StatusEventType } from "../../status/service";
import { insertMessage, insertSkip, recentMessage } from "./store";

// The link inbox's producers: an incident change and an alert's state change (src/ops/alerts/state.ts). Each
// becomes one outbox row per configured chat target, or an event row saying why it was not queued, written in the
// transaction of the change it reports.

export const LINK_EVENTS = ["incident.opened", "incident.updated", "incident.resolved", "alert.fired", "alert.resolved", "preflight.anomaly"] as const;
export type LinkEvent = (typeof LINK_EVENTS)[number];
export const STATUS_CODE_FAMILIES = ["2xx", "4xx", "5xx", "timeout", "other"] as const;
export const SKIP_REASONS = ["no_url", "cooldown", "silenced", "other"] as const;
export type SkipReason = (typeof SKIP_REASONS)[number];

/** Notices an operator must get even inside the cooldown: that something is over. */
const RESOLUTIONS: ReadonlySet<LinkEvent> = new Set(["incident.resolved", "alert.resolved"]);

type Deps = Pick<AppContext, "clock" | "config">;

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

/** The incoming webhooks (duplicates removed), then the messenger bot's chat when its id and bot token are both set. */
export function linkTargets(ctx: Pick<AppContext, "config">): LinkTarget[] {
  // The label fingerprints the whole URL: equal labels are the same URL listed twice.
  const byLabel = new Map(ctx.config.linkInbox.webhookUrls.map((url) => [redactTarget(url), url]));
  const out: LinkTarget[] = [...byLabel].map(([label, url]) => ({ label, url }));
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
  /** Queued even inside the cooldown (an alert escalating to a worse level than the one last sent). */
  bypassCooldown?: boolean;
}

export const baseOf = (ctx: Pick<AppContext, "config">) => ctx.config.publicBaseUrl.replace(/\/+$/, "");

export async function recordLinkSkip(q: Queryable, ctx: Deps, m: LinkMessage, target: string, reason: SkipReason, error: string | null): Promise<void> {
  await insertSkip(q, { at: ctx.clock.now().toISOString(), event: m.event, issue_id: m.issueId, target, url: m.link, skip_reason: reason, error });
}

/**
 * Queues a message to every target, on `q`: the transaction of the change it reports. Within
 * LINK_INBOX_COOLDOWN_SECONDS of a message for the same issue and target it is skipped (cooldown), except a
 * resolution (the operator must hear that it is over) and an escalation (`bypassCooldown`). With several instances
 * the cooldown reads committed rows only: two changes of one issue committed at once on two instances may both be
 * queued (a duplicate notice, never a lost one); an alert's key is applied under a row lock, so its notices cannot race.
 */
export async function enqueueLinkMessage(q: Queryable, ctx: Deps, m: LinkMessage): Promise<{ queued: number; skipped: number }> {
  const now = ctx.clock.now();
  const nowIso = now.toISOString();
  const payload = JSON.stringify({ text: m.text, content: m.text });
  const skip = (target: string, reason: SkipReason, error: string | null) => recordLinkSkip(q, ctx, m, target, reason, error);
  const targets = linkTargets(ctx);
  if (targets.length === 0) {
    await skip("", "no_url", "LINK_INBOX_WEBHOOK_URLS is empty");
    return { queued: 0, skipped: 1 };
  }
  const cooldownStart = new Date(now.getTime() - ctx.config.linkInbox.cooldownSeconds * 1000).toISOString();
  let queued = 0;
  let skipped = 0;
  for (const t of targets) {
    if (!RESOLUTIONS.has(m.event) && !m.bypassCooldown && ctx.config.linkInbox.cooldownSeconds > 0) {
      const recent = await recentMessage(q, m.issueId, t.label, cooldownStart);
      if (recent) {
        await skip(t.label, "cooldown", `message ${recent.id} for this issue and target was queued at ${recent.created_at}`);
        skipped++;
        continue;
      }
    }
    await insertMessage(q, { event: m.event, issue_id: m.issueId, target: t.label, payload }, nowIso);
    queued++;
  }
  return { queued, skipped };
}

const INCIDENT_EVENT: Record<StatusEventType, LinkEvent> = {
  "status.incident.created": "incident.opened",
  "status.incident.updated": "incident.updated",
  "status.incident.resolved": "incident.resolved",
};

/** The operator page of one incident: unlike the JSON route, it opens for a person following a chat link (session cookie). */
export const incidentPagePath = (id: number) => `/admin/ops/incidents/${id}`;

/** The message of an incident change: headline, severity, and the incident's operator page. */
export function incidentMessage(ctx: Pick<AppContext, "config">, type: StatusEventType, incident: IncidentView): LinkMessage {
  const event = INCIDENT_EVENT[type];
  const link = `${baseOf(ctx)}${incidentPagePath(incident.id)}`;
  const verb = event.slice("incident.".length);
  const latest = incident.updates[0]?.message;
  const text = `[Herald] Incident ${verb}: ${incident.title} (${incident.severity})${latest ? ` — ${latest.slice(0, 200)}` : ""} ${link}`;
  return { event, issueId: `incident:${incident.id}`, text, link };
}

/** The status domain's listener: one message per incident change, queued in the change's transaction `q`. */
export async function onIncidentEvent(ctx: Deps, type: StatusEventType, incident: IncidentView, q: Queryable): Promise<void> {
  await enqueueLinkMessage(q, ctx, incidentMessage(ctx, type, incident));
}

/** Subscribes the link inbox to this context's incident changes (idempotent: the listener set holds one function). */
export function subscribeLinkInbox(ctx: AppContext): void {
  incidentListeners(ctx).add(onIncidentEvent);
}
