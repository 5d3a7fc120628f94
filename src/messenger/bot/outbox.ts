// The durable bot outbox: replies are rows written in the webhook's transaction; the messenger-bot-outbox job
// sends them to the Bot API (MESSENGER_BOT_API_BASE). The webhook never waits on Telegram, a crash loses no reply
// (a leased row comes back when its lease passes), and Telegram's flood control is honoured: a 429's
// parameters.retry_after sets the row's next attempt.
import type { AppContext } from "../../context";
import type { Queryable } from "../../db/port";
import { bump } from "../counters";
import { type LeasedRow, leaseDue, queueCall, recordDead, recordRetry, recordSent } from "../store/bot";

const BATCH = 20;
const LEASE_MS = 60_000;
const TIMEOUT_MS = 10_000;
/** After this many failed attempts a reply is dead (recorded, counted, never sent). */
const MAX_BOT_ATTEMPTS = 8;
const BACKOFF_BASE_MS = 5_000;
const BACKOFF_MAX_MS = 3_600_000;

/** Queues one Bot API call, in the transaction that decided to send it. */
export function queueBotCall(t: Queryable, now: string, updateId: number | null, chatId: number, method: string, payload: object): Promise<void> {
  return queueCall(t, { update_id: updateId, chat_id: chatId, method, payload: JSON.stringify({ chat_id: chatId, ...payload }), created_at: now });
}

/** Delay before attempt n+1 after n failures: 5 s, 10 s, 20 s … capped at 1 h. */
const backoffMs = (attempts: number) => Math.min(BACKOFF_MAX_MS, BACKOFF_BASE_MS * 2 ** Math.max(0, attempts - 1));

/**
 * Leases the due replies (every instance runs this job: the lease, with SKIP LOCKED on PostgreSQL, keeps two from
 * taking one reply). One statement, so the lease is its own short transaction; the sends happen after it.
 */
async function lease(ctx: AppContext): Promise<LeasedRow[]> {
  const now = ctx.clock.now();
  const rows = await leaseDue(ctx.store, ctx.store.dialect, now.toISOString(), new Date(now.getTime() + LEASE_MS).toISOString(), BATCH);
  return rows.sort((a, b) => a.id - b.id);
}

type Outcome = { kind: "sent" } | { kind: "retry"; afterMs: number; error: string; label: string } | { kind: "dead"; error: string; label: string };

async function callBotApi(ctx: AppContext, row: LeasedRow): Promise<Outcome> {
  const { botApiBase, botToken } = ctx.config.messenger;
  try {
    const res = await fetch(`${botApiBase}/bot${botToken}/${row.method}`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: row.payload,
      signal: AbortSignal.timeout(TIMEOUT_MS),
    });
    const body = (await res.json().catch(() => null)) as { ok?: boolean; description?: string; parameters?: { retry_after?: number } } | null;
    if (res.ok && body?.ok === true) return { kind: "sent" };
    const error = `${res.status} ${String(body?.description ?? "").slice(0, 200)}`.trim();
    if (res.status === 429) {
      const retryAfter = Number(body?.parameters?.retry_after ?? res.headers.get("retry-after") ?? 0);
      const afterMs = Number.isFinite(retryAfter) && retryAfter > 0 ? Math.min(retryAfter, 86_400) * 1000 : backoffMs(row.attempts + 1);
      return { kind: "retry", afterMs, error, label: "429" };
    }
    // Other 4xx (chat not found, bot blocked by the user, bad request) will not get better by retrying.
    if (res.status >= 400 && res.status < 500) return { kind: "dead", error, label: String(res.status) };
    return { kind: "retry", afterMs: backoffMs(row.attempts + 1), error, label: String(res.status) };
  } catch (err) {
    // The URL holds the bot token: report only the error's name, never the request.
    return { kind: "retry", afterMs: backoffMs(row.attempts + 1), error: `network: ${(err as Error).name}`, label: "network" };
  }
}

/** Writes the outcome and its counter in one transaction, after the send (never during it). */
async function record(ctx: AppContext, row: LeasedRow, outcome: Outcome): Promise<void> {
  const iso = ctx.clock.now().toISOString();
  const leasedUntil = row.lease_until!;
  if (outcome.kind === "sent") {
    await ctx.store.tx(async (t) => {
      if (await recordSent(t, row.id, leasedUntil, iso)) await bump(t, ctx.clock, "bot_messages_sent", row.method);
    });
    return;
  }
  const attempts = row.attempts + 1;
  const next = outcome.kind === "retry" && attempts < MAX_BOT_ATTEMPTS ? new Date(Date.parse(iso) + outcome.afterMs).toISOString() : null;
  await ctx.store.tx(async (t) => {
    const recorded =
      next === null
        ? await recordDead(t, row.id, leasedUntil, attempts, outcome.error)
        : await recordRetry(t, row.id, leasedUntil, attempts, next, outcome.error);
    if (recorded) await bump(t, ctx.clock, "bot_api_errors", outcome.label);
  });
  if (next === null) ctx.log.warn("bot reply dead-lettered", { outbox_id: row.id, attempts, error: outcome.error });
}

/** One pass: lease due replies, send them (in order, one at a time per pass), record each outcome. */
export async function sendDueBotCalls(ctx: AppContext): Promise<{ idle: boolean; sent: number; failed: number }> {
  if (!ctx.config.messenger.botToken) return { idle: true, sent: 0, failed: 0 };
  const rows = await lease(ctx);
  let sent = 0;
  for (const row of rows) {
    const outcome = await callBotApi(ctx, row);
    await record(ctx, row, outcome);
    if (outcome.kind === "sent") sent++;
  }
  return { idle: rows.length === 0, sent, failed: rows.length - sent };
}
