// The operator routes' read-only Bot API calls (getMe, getWebhookInfo): a fetch to MESSENGER_BOT_API_BASE (never a
// URL from a request) with a bounded timeout. The URL carries the bot token, so no error text here includes it.
import type { AppContext } from "../../context";

/** How long an operator waits for one Bot API answer before the check reports a timeout. */
export const BOT_API_READ_TIMEOUT_MS = 5_000;

export type BotApiResult<T> = { ok: true; result: T } | { ok: false; error: string; status: number | null };

export interface BotUser {
  id: number;
  is_bot?: boolean;
  first_name?: string;
  username?: string;
}

/** Telegram's WebhookInfo (core.telegram.org/bots/api#webhookinfo): the fields the readiness checks read. */
export interface WebhookInfo {
  url: string;
  has_custom_certificate?: boolean;
  pending_update_count: number;
  ip_address?: string;
  last_error_date?: number;
  last_error_message?: string;
  last_synchronization_error_date?: number;
  max_connections?: number;
  allowed_updates?: string[];
}

/** Telegram's MenuButton (core.telegram.org/bots/api#menubutton): what the button beside a chat's input opens. */
export interface MenuButton {
  type: "commands" | "web_app" | "default";
  text?: string;
  web_app?: { url: string };
}

/** Removes anything that looks like a bot token from text we did not write (a proxy could echo the URL). */
const scrub = (text: string, token: string) =>
  text
    .split(token)
    .join("<BOT_TOKEN>")
    .replace(/\d{1,20}:[A-Za-z0-9_-]{20,100}/g, "<BOT_TOKEN>");

export async function callBotApiRead<T>(
  ctx: AppContext,
  method: "getMe" | "getWebhookInfo" | "getChatMenuButton",
  timeoutMs = BOT_API_READ_TIMEOUT_MS,
): Promise<BotApiResult<T>> {
  const { botApiBase, botToken } = ctx.config.messenger;
  if (!botToken) return { ok: false, error: "MESSENGER_BOT_TOKEN is unset", status: null };
  try {
    const res = await fetch(`${botApiBase.replace(/\/+$/, "")}/bot${botToken}/${method}`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: "{}",
      signal: AbortSignal.timeout(timeoutMs),
    });
    const body = (await res.json().catch(() => null)) as { ok?: boolean; result?: T; description?: unknown } | null;
    if (res.ok && body?.ok === true && body.result !== undefined) return { ok: true, result: body.result };
    const description = typeof body?.description === "string" ? ` ${scrub(body.description, botToken).slice(0, 200)}` : "";
    return { ok: false, error: `${method}: HTTP ${res.status}${description}`, status: res.status };
  } catch (err) {
    const name = (err as Error).name === "TimeoutError" ? `timeout after ${timeoutMs} ms` : (err as Error).name || "error";
    return { ok: false, error: `${method}: network: ${name} (${scrub(botApiBase, botToken)} unreachable)`, status: null };
  }
}
