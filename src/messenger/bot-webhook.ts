// POST /api/messenger/webhook: Telegram's updates. Each update_id is recorded durably before anything else in
// one transaction, so a redelivered update (Telegram retries until it gets a 2xx) is acknowledged and not
// processed twice, even across restarts. Replies go to the bot outbox in the same transaction.
import { createHash, timingSafeEqual } from "node:crypto";
import type { AppContext } from "../context";
import { AppError } from "../http/errors";
import { queueBotCall } from "./bot-outbox";
import { botReplies, type TelegramUser } from "./bot-commands";
import { bump } from "./counters";

export interface TelegramUpdate {
  update_id: number;
  message?: { message_id: number; chat: { id: number; type?: string }; from?: TelegramUser; text?: string; date?: number };
  [other: string]: unknown;
}

const digest = (s: string) => createHash("sha256").update(s).digest();

/** Constant-time comparison of the secret-token header (hashing first makes the lengths equal). */
export function checkWebhookSecret(ctx: AppContext, header: string | null): void {
  const expected = ctx.config.messenger.webhookSecret;
  if (!ctx.config.messenger.botToken)
    throw new AppError("messenger_not_configured", "The messenger bot is not configured on this service (MESSENGER_BOT_TOKEN is unset)");
  const ok = expected !== undefined && header !== null && timingSafeEqual(digest(header), digest(expected));
  if (!ok) throw new AppError("webhook_secret_invalid", "X-Messenger-Bot-Api-Secret-Token is missing or does not match MESSENGER_WEBHOOK_SECRET");
}

/** The kind of an update: the name of its one payload field (message, callback_query, …). */
const kindOf = (u: TelegramUpdate) => Object.keys(u).find((k) => k !== "update_id") ?? "empty";

/** `/start@MyBot promo_X` → { command: "start", arg: "promo_X" }; null for text that is not a command. */
export function parseCommand(text: string | undefined): { command: string; arg: string } | null {
  const m = /^\/([a-z0-9_]{1,32})(?:@[A-Za-z0-9_]{1,64})?(?:\s+([\s\S]*))?$/i.exec(text?.trim() ?? "");
  return m ? { command: m[1]!.toLowerCase(), arg: (m[2] ?? "").trim().slice(0, 256) } : null;
}

export function ingestUpdate(ctx: AppContext, update: TelegramUpdate) {
  const db = ctx.db.sqlite;
  const kind = kindOf(update);
  const message = update.message;
  const cmd = parseCommand(message?.text);
  return db
    .transaction(() => {
      const now = ctx.clock.now().toISOString();
      const fresh = db
        .query("INSERT INTO messenger_updates (update_id, kind, chat_id, command, received_at) VALUES (?, ?, ?, ?, ?) ON CONFLICT (update_id) DO NOTHING")
        .run(update.update_id, kind, message?.chat.id ?? null, cmd?.command ?? null, now).changes;
      if (fresh === 0) {
        bump(db, ctx.clock, "updates_replayed", kind);
        return { update_id: update.update_id, duplicate: true, replies_queued: 0 };
      }
      bump(db, ctx.clock, "updates_received", kind);
      // Only private-chat commands from people get an answer; everything else is recorded and acknowledged.
      if (!message || !cmd || !message.from || message.from.is_bot) return { update_id: update.update_id, duplicate: false, replies_queued: 0 };
      const replies = botReplies(ctx, db, now, message.from, cmd.command, cmd.arg);
      for (const r of replies) queueBotCall(db, now, update.update_id, message.chat.id, "sendMessage", r);
      return { update_id: update.update_id, duplicate: false, replies_queued: replies.length };
    })
    .immediate();
}
