// GET /api/messenger/admin/bot/preview: what the bot received and sent in the last hours. Every read is bounded:
// the hourly series come from messenger_counters (primary key leads with the hour), the per-command counts from
// at most SCAN_CAP updates walked down the received_at index, the outbox window from at most SCAN_CAP rows
// walked down its primary key (ids grow with created_at), recent rows by LIMIT. No message text is returned:
// updates keep only their kind and command, outbox rows their method and status, never the payload.
import type { AppContext } from "../../context";
import { callBotApiRead, type WebhookInfo } from "../bot/api";
import { hourOf } from "../counters";
import { newestOutboxRows, outboxBacklog, outboxWindowCounts, recentUpdates, unsentWithErrors, updatesPerHourAndCommand } from "../store/bot";
import { counterRowsSince } from "../store/counters";
import { expectedWebhookUrl } from "./bot-readiness";

/** The most rows one preview reads to count per command and per outbox status; more sets `capped: true`. */
export const PREVIEW_SCAN_CAP = 50_000;
const NO_COMMAND = "(no command)";

type Counts = Record<string, number>;
const add = (c: Counts, k: string, n: number) => {
  c[k] = (c[k] ?? 0) + n;
};

const emptyBucket = (hour: string) => ({
  hour,
  updates_by_kind: {} as Counts,
  updates_by_command: {} as Counts,
  sent_by_method: {} as Counts,
  bot_api_errors_by_status: {} as Counts,
});
type HourBucket = ReturnType<typeof emptyBucket>;

/** Telegram's view of the webhook (getWebhookInfo), with live=1. */
async function liveWebhook(ctx: AppContext) {
  const info = await callBotApiRead<WebhookInfo>(ctx, "getWebhookInfo");
  if (!info.ok) return { ok: false, error: info.error, pending_update_count: null, url_matches: null, last_error_date: null, last_error_message: null };
  const w = info.result;
  return {
    ok: true,
    error: null,
    pending_update_count: w.pending_update_count ?? 0,
    url_matches: w.url === expectedWebhookUrl(ctx),
    last_error_date: w.last_error_date ? new Date(w.last_error_date * 1000).toISOString() : null,
    last_error_message: w.last_error_message?.slice(0, 200) ?? null,
  };
}

async function hourlyFromCounters(ctx: AppContext, since: string, buckets: Map<string, HourBucket>) {
  const rows = await counterRowsSince(ctx.store, since, ["updates_received", "bot_messages_sent", "bot_api_errors"]);
  for (const r of rows) {
    const b = buckets.get(r.hour);
    if (!b) continue;
    if (r.metric === "updates_received") add(b.updates_by_kind, r.label, r.count);
    else if (r.metric === "bot_messages_sent") add(b.sent_by_method, r.label, r.count);
    else add(b.bot_api_errors_by_status, r.label, r.count);
  }
}

async function receivedCommands(ctx: AppContext, since: string, buckets: Map<string, HourBucket>) {
  const rows = await updatesPerHourAndCommand(ctx.store, since, PREVIEW_SCAN_CAP);
  const byCommand: Counts = {};
  let scanned = 0;
  for (const r of rows) {
    const key = r.command ?? NO_COMMAND;
    add(byCommand, key, r.n);
    const b = buckets.get(`${r.hour13}:00:00.000Z`);
    if (b) add(b.updates_by_command, key, r.n);
    scanned += r.n;
  }
  return { byCommand, capped: scanned >= PREVIEW_SCAN_CAP };
}

async function outboxWindow(ctx: AppContext, since: string) {
  const rows = await outboxWindowCounts(ctx.store, since, PREVIEW_SCAN_CAP);
  const byStatus: Counts = { pending: 0, sent: 0, dead: 0 };
  const byMethod: Counts = {};
  let scanned = 0;
  let oldest: string | null = null;
  for (const r of rows) {
    scanned += r.scanned;
    if (oldest === null || r.oldest < oldest) oldest = r.oldest;
    if (r.n === 0) continue;
    add(byStatus, r.status, r.n);
    add(byMethod, r.method, r.n);
  }
  // Capped only if the cap stopped the walk while its rows were still inside the window.
  return { byStatus, byMethod, capped: scanned >= PREVIEW_SCAN_CAP && oldest !== null && oldest >= since };
}

export async function botPreview(ctx: AppContext, input: { hours: number; limit: number; live: boolean }) {
  const q = ctx.store;
  const nowMs = ctx.clock.now().getTime();
  const since = hourOf(nowMs - (input.hours - 1) * 3_600_000);
  const buckets = new Map<string, HourBucket>();
  for (let i = 0; i < input.hours; i++) {
    const hour = hourOf(Date.parse(since) + i * 3_600_000);
    buckets.set(hour, emptyBucket(hour));
  }
  await hourlyFromCounters(ctx, since, buckets);
  const commands = await receivedCommands(ctx, since, buckets);
  const hourly = [...buckets.values()];
  const byKind: Counts = {};
  for (const b of hourly) for (const [k, n] of Object.entries(b.updates_by_kind)) add(byKind, k, n);

  const updates = await recentUpdates(q, since, input.limit);
  const out = await outboxWindow(ctx, since);
  const recentSent = await newestOutboxRows(q, input.limit);
  const lastErrors = await unsentWithErrors(q, input.limit);
  const backlog = await outboxBacklog(q);

  const sum = (c: Counts) => Object.values(c).reduce((a, b) => a + b, 0);
  return {
    window: { hours: input.hours, since_hour_utc: since, limit: input.limit },
    received: {
      total: sum(byKind),
      by_kind: byKind,
      by_command: commands.byCommand,
      by_command_capped: commands.capped,
      recent: updates,
    },
    sent: {
      total_sent: hourly.reduce((a, b) => a + sum(b.sent_by_method), 0),
      bot_api_errors: hourly.reduce((a, b) => a + sum(b.bot_api_errors_by_status), 0),
      queued_by_status: out.byStatus,
      queued_by_method: out.byMethod,
      queued_capped: out.capped,
      backlog,
      recent: recentSent,
      last_errors: lastErrors,
    },
    hourly,
    live: input.live ? await liveWebhook(ctx) : null,
  };
}
