// POST /api/messenger/webhook: Telegram's updates. Each update_id is recorded durably first, in the transaction that
// queues the replies, so a redelivered update is acknowledged and not processed twice, even across restarts.
// Only commands in private chats are answered (docs/messenger.md); the rest are recorded, acknowledged with 200
// (Telegram would redeliver anything else) and counted as updates_ignored with the reason.
import { createHash, timingSafeEqual } from "node:crypto";
import type { AppContext } from "../../context";
import { AppError } from "../../http/errors/errors";
import { gamesConfig } from "../config/cache";
import { bump } from "../counters";
import { type ActionScope, inOwnTx } from "../ledger";
import { claimUpdate } from "../store/bot";
import { botReplies, type TelegramUser } from "./commands";
import { queueBotCall } from "./outbox";
import type { BotUsername } from "./username";

export interface TelegramUpdate {
  update_id: number;
  message?: { message_id: number; chat: { id: number; type?: string }; from?: TelegramUser; text?: string; date?: number };
  [other: string]: unknown;
}

/**
 * Telegram sends setWebhook's secret_token in X-Telegram-Bot-Api-Secret-Token (core.telegram.org/bots/api#setwebhook).
 * The spec writes "messenger" for the platform's name, in paths and in this header alike, so its literal
 * X-Messenger-Bot-Api-Secret-Token is read too; when both are sent, Telegram's name wins.
 */
export const WEBHOOK_SECRET_HEADER = "X-Telegram-Bot-Api-Secret-Token";
export const WEBHOOK_SECRET_HEADER_SPEC = "X-Messenger-Bot-Api-Secret-Token";

const digest = (s: string) => createHash("sha256").update(s).digest();

/**
 * Whether the request carries the webhook secret: constant-time (hashing first makes the lengths equal). A post
 * without it is refused (401) whatever the configuration; one with it is then refused 503 when the bot is not
 * configured (`requireMessengerBot`).
 */
export function webhookSecretMatches(ctx: AppContext, headers: Headers): boolean {
  const expected = ctx.config.messenger.webhookSecret;
  const given = headers.get(WEBHOOK_SECRET_HEADER) ?? headers.get(WEBHOOK_SECRET_HEADER_SPEC);
  return expected !== undefined && given !== null && timingSafeEqual(digest(given), digest(expected));
}

export const webhookSecretInvalid = () =>
  new AppError(
    "webhook_secret_invalid",
    `${WEBHOOK_SECRET_HEADER} (or ${WEBHOOK_SECRET_HEADER_SPEC}) is missing or does not match MESSENGER_WEBHOOK_SECRET; give setWebhook the same secret_token`,
  );

/** The kind of an update: the name of its one payload field (message, callback_query, …). */
const kindOf = (u: TelegramUpdate) => Object.keys(u).find((k) => k !== "update_id") ?? "empty";

export interface ParsedCommand {
  command: string;
  arg: string;
  /** The bot named after `@` (`/help@SomeBot` → "SomeBot"); null when the command names none. */
  addressedTo: string | null;
}

/** `/start@MyBot promo_X` → { command: "start", arg: "promo_X", addressedTo: "MyBot" }; null for text that is not a command. */
export function parseCommand(text: string | undefined): ParsedCommand | null {
  const m = /^\/([a-z0-9_]{1,32})(?:@([A-Za-z0-9_]{1,64}))?(?:\s+([\s\S]*))?$/i.exec(text?.trim() ?? "");
  return m ? { command: m[1]!.toLowerCase(), addressedTo: m[2] ?? null, arg: (m[3] ?? "").trim().slice(0, 256) } : null;
}

/** Why an update gets no answer (the label of the updates_ignored counter and the ack's ignored_reason). */
export const IGNORED_REASONS = ["unhandled_kind", "not_private_chat", "from_a_bot", "not_a_command", "for_another_bot", "bot_username_unknown"] as const;
export type IgnoredReason = (typeof IGNORED_REASONS)[number];

/**
 * The chat policy, as a pure function: a command in a private chat from a person, addressed to no bot or to this
 * one, is answered; anything else is ignored with its reason. Usernames compare without case, as Telegram's do.
 */
export function routeUpdate(update: TelegramUpdate, botUsername: string | null): { command: ParsedCommand } | { ignored: IgnoredReason } {
  const message = update.message;
  if (!message) return { ignored: "unhandled_kind" };
  // Telegram always sends chat.type; an update without it is not trusted to be private.
  if (message.chat.type !== "private") return { ignored: "not_private_chat" };
  if (!message.from || message.from.is_bot) return { ignored: "from_a_bot" };
  const command = parseCommand(message.text);
  if (!command) return { ignored: "not_a_command" };
  if (command.addressedTo !== null) {
    if (botUsername === null) return { ignored: "bot_username_unknown" };
    if (command.addressedTo.toLowerCase() !== botUsername.toLowerCase()) return { ignored: "for_another_bot" };
  }
  return { command };
}

/** The webhook's verb: learns the bot's username first if this update needs it (network, before the transaction). */
export async function handleUpdate(ctx: AppContext, username: BotUsername, update: TelegramUpdate) {
  let name = username.known();
  if (name === null) {
    const decision = routeUpdate(update, null);
    if ("ignored" in decision && decision.ignored === "bot_username_unknown") name = await username.resolve();
  }
  return ingestUpdate(ctx, update, name);
}

/**
 * Records the update and answers it, in one transaction. The update id is claimed first: of two deliveries of one
 * update — a redelivery, or two instances behind one address — exactly one inserts it and answers; the other
 * (on PostgreSQL after waiting for the first to commit) finds it claimed and acknowledges it as a duplicate.
 */
export async function ingestUpdate(ctx: AppContext, update: TelegramUpdate, botUsername: string | null) {
  const kind = kindOf(update);
  const message = update.message;
  const decision = routeUpdate(update, botUsername);
  const cmd = "command" in decision ? decision.command : null;
  const ack = (replies: number, ignored: IgnoredReason | "duplicate" | null) => ({
    update_id: update.update_id,
    duplicate: ignored === "duplicate",
    handled: cmd !== null && ignored === null,
    ignored_reason: ignored,
    replies_queued: replies,
  });
  // What a command may need of the games configuration (a /start promo's audience, /play's wheel), read before
  // the transaction: its body awaits only its own statements.
  const config = cmd ? await gamesConfig(ctx) : null;
  const now = ctx.clock.now().toISOString();
  const ingest = async (s: ActionScope) => {
    const { t } = s;
    // The command is stored only when the bot answers it, so the operators' per-command counts are answers.
    const fresh = await claimUpdate(t, {
      update_id: update.update_id,
      kind,
      chat_id: message?.chat.id ?? null,
      command: cmd?.command ?? null,
      received_at: now,
    });
    if (!fresh) {
      await bump(t, ctx.clock, "updates_replayed", kind);
      return ack(0, "duplicate");
    }
    let answered: ReturnType<typeof ack>;
    if (!cmd || !message?.from || !config) {
      const reason = "ignored" in decision ? decision.ignored : "from_a_bot";
      await bump(t, ctx.clock, "updates_ignored", reason);
      answered = ack(0, reason);
    } else {
      const replies = await botReplies(ctx, config, s, message.from, cmd.command, cmd.arg);
      for (const r of replies) await queueBotCall(t, now, update.update_id, message.chat.id, "sendMessage", r);
      answered = ack(replies.length, null);
    }
    // Last: every update shares this counter's row (on PostgreSQL its lock is then held only until the commit).
    await bump(t, ctx.clock, "updates_received", kind);
    return answered;
  };
  return inOwnTx(ctx, ingest, undefined, now);
}
