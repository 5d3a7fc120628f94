// What the bot answers to /start, /help, /balance and /play. Runs inside the webhook's transaction, so the
// player it creates and the replies it queues commit together with the update's record.
import type { AppContext } from "../../context";
import { AppError } from "../../http/errors/errors";
import type { BotUser } from "./api";
import { GAMES } from "../catalog";
import { counted, freeSpinsText, missilesText, pointsText } from "../count-words";
import type { GamesConfig } from "../config/cache";
import { activeWheel } from "../config/wheel-campaigns";
import { claimPromoIn } from "../games/promos";
import { freeSpinState } from "../games/wheel";
import type { ActionScope } from "../ledger";
import { getPlayer, getPlayerOrCreate } from "../players";
import { mergeBotProfile, setReferrer } from "../store/players";
import { inSavepoint } from "../store/savepoint";

/** A message's sender: a Telegram user as getMe answers one, with the profile fields the bot stores. */
export type TelegramUser = BotUser & { language_code?: string; is_premium?: boolean };

export const BOT_COMMANDS = [
  { command: "start", description: "Start, optionally with a parameter from a link (t.me/<bot>?start=…)" },
  { command: "help", description: "What the bot can do" },
  { command: "balance", description: "Your free spins, missiles and points" },
  { command: "play", description: "The games and when you can play next" },
] as const;

/**
 * The update kinds the webhook acts on: ingestUpdate answers `update.message` (private-chat commands) and only
 * records the other kinds. The operators' readiness check compares setWebhook's allowed_updates with this.
 */
export const HANDLED_UPDATE_KINDS = ["message"] as const;

const helpText = () => ["Commands:", ...BOT_COMMANDS.map((c) => `/${c.command} — ${c.description}`)].join("\n");

/** One sendMessage the bot queues: its text, and the button that opens the mini-app where there is one. */
export interface BotReply {
  text: string;
  reply_markup?: { inline_keyboard: Array<Array<{ text: string; web_app: { url: string } }>> };
}

/** The label of the button that opens the mini-app (MESSENGER_MINI_APP_URL) inside Telegram. */
export const OPEN_MINI_APP = "Open the mini-app";

/**
 * A reply that invites the player into the mini-app, with a web_app button to it when MESSENGER_MINI_APP_URL is
 * set (core.telegram.org/bots/api#webappinfo: the button opens the page inside Telegram with the player's init data;
 * the bot answers private chats only, where such buttons are allowed). Without the URL, the text alone.
 */
function withMiniAppButton(ctx: AppContext, text: string): BotReply {
  const url = ctx.config.messenger.miniAppUrl;
  return url ? { text, reply_markup: { inline_keyboard: [[{ text: OPEN_MINI_APP, web_app: { url } }]] } } : { text };
}

/** The replies to one command, in the webhook's transaction `s.t`; `config` was read before it. */
export async function botReplies(ctx: AppContext, config: GamesConfig, s: ActionScope, from: TelegramUser, command: string, arg: string): Promise<BotReply[]> {
  const { t, now } = s;
  switch (command) {
    case "start": {
      const player = await getPlayerOrCreate(t, from.id, now);
      await mergeBotProfile(t, from.id, { username: from.username ?? null, firstName: from.first_name ?? null, languageCode: from.language_code ?? null });
      const name = from.first_name ?? from.username ?? "player";
      const lines = [`Welcome, ${name}!`, "Open the mini-app to spin the wheel and play the recon grid.", helpText()];
      const extra = await startParamReply(ctx, config, s, player.telegram_user_id, arg);
      return [withMiniAppButton(ctx, lines.join("\n\n")), ...(extra ? [{ text: extra }] : [])];
    }
    case "help":
      return [{ text: helpText() }];
    case "balance": {
      const p = await getPlayer(t, from.id);
      const b = p ?? { free_spin_balance: 0, missile_balance: 0, points_balance: 0 };
      return [{ text: `Free spins: ${b.free_spin_balance}\nMissiles: ${b.missile_balance}\nPoints: ${b.points_balance}` }];
    }
    case "play": {
      const p = await getPlayerOrCreate(t, from.id, now);
      // The cooldown of the wheel this player gets (their audience's active campaign, else the default).
      const spin = freeSpinState(p, new Date(now), activeWheel(config, p, now).cooldown_seconds);
      const wheel = spin.free_spin_available ? "free spin available now" : `next free spin at ${spin.next_free_spin_at} (UTC)`;
      const lines = GAMES.map(
        (g) => `${g.title}: ${g.game_key === "spin_wheel" ? `${wheel}; ${counted(p.free_spin_balance, "spin")} in hand` : missilesText(p.missile_balance)}`,
      );
      return [withMiniAppButton(ctx, ["Open the mini-app to play:", ...lines].join("\n"))];
    }
    default:
      return [{ text: `Unknown command /${command}.\n\n${helpText()}` }];
  }
}

/**
 * Start parameters the bot understands (t.me/<bot>?start=<param>): `promo_<CODE>` claims the promo (a nested
 * ledger action, in a savepoint: a refused claim rolls back alone and the welcome still goes out); `ref_<telegram
 * user id>` records who invited the player, once, if that player exists and is not the player itself.
 */
async function startParamReply(ctx: AppContext, config: GamesConfig, s: ActionScope, telegramUserId: number, arg: string): Promise<string | null> {
  const ref = /^ref_([1-9][0-9]{0,15})$/.exec(arg);
  if (ref) {
    const referrer = Number(ref[1]);
    const inviter = referrer === telegramUserId ? null : await getPlayer(s.t, referrer);
    if (!inviter) return null;
    const set = await setReferrer(s.t, telegramUserId, referrer);
    return set ? `You were invited by ${inviter.first_name ?? inviter.username ?? "a player"}.` : null;
  }
  const promo = /^promo_([A-Za-z0-9_-]{1,48})$/.exec(arg);
  if (!promo) return null;
  try {
    const r = await inSavepoint(s.t, () => claimPromoIn(ctx, config, s, telegramUserId, { request_id: `start-promo:${promo[1]}`, code: promo[1]! }));
    const g = r.promo.reward;
    return `Promo ${r.promo.code} ${r.replayed ? "was already applied" : "applied"}: +${freeSpinsText(g.free_spins)}, +${missilesText(g.missiles)}, +${pointsText(g.points)}.`;
  } catch (err) {
    return err instanceof AppError ? `Promo ${promo[1]} could not be applied: ${err.message}.` : null;
  }
}
