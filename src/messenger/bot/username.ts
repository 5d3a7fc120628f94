// The bot's own @username, which tells `/help@ThisBot` (answered) from `/help@SomeOtherBot` (ignored).
// MESSENGER_BOT_USERNAME when set; otherwise getMe, asked when `herald serve` listens or when an addressed command
// first needs it, then kept for the process's life: a per-instance cache, not coordination state (docs/design.md §8).
// A failed getMe is not retried for a minute (one timeout a minute, not one per update); meanwhile an addressed
// command is left unanswered, since answering a command meant for another bot is the worse error.
import { type AppContext, slot, stateOf } from "../../context";
import { type BotUser, callBotApiRead } from "./api";

/** How long after a failed getMe the next addressed command may ask again. */
const RETRY_AFTER_FAILURE_MS = 60_000;
/** The webhook waits for this getMe: short, since Telegram is waiting for the webhook's answer meanwhile. */
const GET_ME_TIMEOUT_MS = 3_000;

export class BotUsername {
  private learnt: string | null = null;
  private failedAtMs = Number.NEGATIVE_INFINITY;
  private pending: Promise<string | null> | null = null;

  constructor(private readonly ctx: AppContext) {}

  /** What is known without asking Telegram: the configured or an already learnt username, else null. */
  known(): string | null {
    return this.ctx.config.messenger.botUsername ?? this.learnt;
  }

  /** The username, asking getMe when it is not known yet (at most one call in flight); null when Telegram cannot say. */
  async resolve(): Promise<string | null> {
    const known = this.known();
    if (known) return known;
    if (this.ctx.clock.now().getTime() - this.failedAtMs < RETRY_AFTER_FAILURE_MS) return null;
    this.pending ??= this.ask().finally(() => {
      this.pending = null;
    });
    return this.pending;
  }

  private async ask(): Promise<string | null> {
    const me = await callBotApiRead<BotUser>(this.ctx, "getMe", GET_ME_TIMEOUT_MS);
    const username = me.ok && typeof me.result.username === "string" && /^[A-Za-z0-9_]{1,64}$/.test(me.result.username) ? me.result.username : null;
    if (username) {
      this.learnt = username;
      return username;
    }
    this.failedAtMs = this.ctx.clock.now().getTime();
    this.ctx.log.warn("getMe did not give the bot's username; addressed commands stay unanswered until it does", {
      error: me.ok ? "getMe answered without a username" : me.error,
    });
    return null;
  }
}

const BOT_USERNAME = slot("messenger.botUsername", (ctx) => new BotUsername(ctx));

/** The context's one BotUsername: the webhook reads it, `herald serve` warms it. */
export const botUsernameOf = (ctx: AppContext): BotUsername => stateOf(ctx, BOT_USERNAME);

/** Called by `herald serve` once it listens, not awaited: so the first addressed command's answer need not wait on getMe. */
export function warmBotUsername(ctx: AppContext): void {
  if (!ctx.config.messenger.botToken || ctx.config.messenger.botUsername) return;
  void botUsernameOf(ctx).resolve();
}
