// The durable bot outbox: replies are rows written in the webhook's transaction; the messenger-bot-outbox job
// sends them to the Bot API (MESSENGER_BOT_API_BASE). The webhook never waits on Telegram, a crash loses no reply
// (a leased row comes back when its lease passes), and Telegram's flood control is honoured: a 429's
// parameters.retry_after sets the row's next attempt.
import type { Database } from "bun:sqlite";
import type { AppContext } from "../../context";
import { bump } from "../counters";

const BATCH = 20;
const LEASE_MS = 60_000;
const TIMEOUT_MS = 10_000;
/** After this many failed attempts a reply is dead (recorded, counted, never sent). */
export const MAX_BOT_ATTEMPTS = 8;
const BACKOFF_BASE_MS = 5_000;
const BACKOFF_MAX_MS = 3_600_000;

interface OutboxRow {
  id: number;
  chat_id: number;
  method: string;
  payload: string;
  attempts: number;
}

/** Queues one Bot API call; call inside the transaction that decided to send it. */
export function queueBotCall(db: Database, now: string, updateId: number | null, chatId: number, method: string, payload: Record<string, unknown>): void {
  db.query(
    "INSERT INTO messenger_bot_outbox (update_id, chat_id, method, payload, status, attempts, next_attempt_at, created_at) VALUES (?, ?, ?, ?, 'pending', 0, ?, ?)",
  ).run(updateId, chatId, method, JSON.stringify({ chat_id: chatId, ...payload }), now, now);
}

/** Delay before attempt n+1 after n failures: 5 s, 10 s, 20 s … capped at 1 h. */
export const backoffMs = (attempts: number) => Math.min(BACKOFF_MAX_MS, BACKOFF_BASE_MS * 2 ** Math.max(0, attempts - 1));

function lease(ctx: AppContext): OutboxRow[] {
  const db = ctx.db.sqlite;
  const now = ctx.clock.now();
  const iso = now.toISOString();
  return db
    .query<OutboxRow, [string, string]>(
      `UPDATE messenger_bot_outbox SET lease_until = ?1
       WHERE id IN (SELECT id FROM messenger_bot_outbox WHERE status = 'pending' AND next_attempt_at <= ?2 AND (lease_until IS NULL OR lease_until <= ?2)
                    ORDER BY next_attempt_at, id LIMIT ${BATCH})
       RETURNING id, chat_id, method, payload, attempts`,
    )
    .all(new Date(now.getTime() + LEASE_MS).toISOString(), iso)
    .sort((a, b) => a.id - b.id);
}

type Outcome = { kind: "sent" } | { kind: "retry"; afterMs: number; error: string; label: string } | { kind: "dead"; error: string; label: string };

async function callBotApi(ctx: AppContext, row: OutboxRow): Promise<Outcome> {
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

function record(ctx: AppContext, row: OutboxRow, outcome: Outcome): void {
  const db = ctx.db.sqlite;
  const now = ctx.clock.now();
  const iso = now.toISOString();
  if (outcome.kind === "sent") {
    db.query("UPDATE messenger_bot_outbox SET status = 'sent', attempts = attempts + 1, sent_at = ?2, lease_until = NULL, last_error = NULL WHERE id = ?1").run(
      row.id,
      iso,
    );
    bump(db, ctx.clock, "bot_messages_sent", row.method);
    return;
  }
  bump(db, ctx.clock, "bot_api_errors", outcome.label);
  const attempts = row.attempts + 1;
  if (outcome.kind === "dead" || attempts >= MAX_BOT_ATTEMPTS) {
    db.query("UPDATE messenger_bot_outbox SET status = 'dead', attempts = ?2, lease_until = NULL, last_error = ?3 WHERE id = ?1").run(
      row.id,
      attempts,
      outcome.error,
    );
    ctx.log.warn("bot reply dead-lettered", { outbox_id: row.id, attempts, error: outcome.error });
    return;
  }
  const next = new Date(now.getTime() + outcome.afterMs).toISOString();
  db.query("UPDATE messenger_bot_outbox SET attempts = ?2, next_attempt_at = ?3, lease_until = NULL, last_error = ?4 WHERE id = ?1").run(
    row.id,
    attempts,
    next,
    outcome.error,
  );
}

/** One pass: lease due replies, send them (in order, one at a time per pass), record each outcome. */
export async function sendDueBotCalls(ctx: AppContext): Promise<{ idle: boolean; sent: number; failed: number }> {
  if (!ctx.config.messenger.botToken) return { idle: true, sent: 0, failed: 0 };
  const rows = lease(ctx);
  let sent = 0;
  for (const row of rows) {
    const outcome = await callBotApi(ctx, row);
    record(ctx, row, outcome);
    if (outcome.kind === "sent") sent++;
  }
  return { idle: rows.length === 0, sent, failed: rows.length - sent };
}

export function outboxBacklog(db: Database): { pending: number; dead: number; oldest_pending_at: string | null } {
  const r = db
    .query<{ pending: number; dead: number; oldest: string | null }, []>(
      "SELECT COALESCE(SUM(CASE WHEN status = 'pending' THEN 1 ELSE 0 END), 0) AS pending, COALESCE(SUM(CASE WHEN status = 'dead' THEN 1 ELSE 0 END), 0) AS dead, MIN(CASE WHEN status = 'pending' THEN created_at END) AS oldest FROM messenger_bot_outbox WHERE status IN ('pending', 'dead')",
    )
    .get()!;
  return { pending: r.pending, dead: r.dead, oldest_pending_at: r.oldest };
}
