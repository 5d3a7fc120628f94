// The welcome gift (docs/messenger.md "Economy"): what a newcomer gets once, in their first days, so that every game
// is within reach on day one. One ledger row under a request id of its own, which no client can send (the request
// id pattern has no space): the ledger's claim makes it once per player, and opening it again answers the first
// answer with replayed: true, whichever request asks.
import type { AppContext } from "../../context";
import type { Queryable } from "../../db/port";
import { AppError } from "../../http/errors/errors";
import { WELCOME_GIFT } from "../catalog";
import { applyAction, creditOf } from "../ledger";
import type { PlayerRow } from "../players";
import { priorAction } from "../store/ledger";

export const WELCOME_GIFT_REQUEST_ID = "welcome gift";

export const welcomeGiftOpenUntil = (p: Pick<PlayerRow, "created_at">) =>
  new Date(Date.parse(p.created_at) + WELCOME_GIFT.open_for_seconds * 1000).toISOString();

/**
 * The gift as the catalog shows it. A player past the window costs no query (most requests are theirs); a newcomer
 * costs one read of the ledger's unique index (telegram_user_id, request_id).
 */
export async function welcomeGiftView(q: Queryable, player: PlayerRow, now: Date) {
  const openUntil = welcomeGiftOpenUntil(player);
  const inWindow = now.toISOString() < openUntil;
  const opened = inWindow && (await priorAction(q, player.telegram_user_id, WELCOME_GIFT_REQUEST_ID)) !== null;
  return { reward: { ...WELCOME_GIFT.reward }, available: inWindow && !opened, open_until: openUntil };
}

export function openWelcomeGift(ctx: AppContext, telegramUserId: number) {
  return applyAction(
    ctx,
    { telegramUserId, requestId: WELCOME_GIFT_REQUEST_ID, action: "welcome_gift.open", inputs: {}, gameKey: null, sharing: "player rows" },
    async (player, { now }) => {
      const openUntil = welcomeGiftOpenUntil(player);
      if (now >= openUntil) {
        throw new AppError("game_state_conflict", `The welcome gift is for a player's first days; it could be opened until ${openUntil}`, {
          details: { open_until: openUntil },
        });
      }
      const reward = { ...WELCOME_GIFT.reward };
      return {
        ...creditOf(reward),
        result: { welcome_gift: { reward, opened_at: now } },
      };
    },
  );
}
