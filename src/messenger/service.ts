// The messenger domain's verbs, as other domains and the routes reach them.
import type { AppContext } from "../context";
import type { MessengerRequest } from "./identity-plugin";
import { balancesOf, playerView } from "./players";

export { handleUpdate, webhookSecretInvalid, webhookSecretMatches, type TelegramUpdate } from "./bot/webhook";
export { gameCatalog, purchaseItem } from "./games/games";
export { openWelcomeGift, welcomeGiftView } from "./games/welcome-gift";
export { playWheel, revealedSeeds, wheelStatus } from "./games/wheel";
export { balancesOf } from "./players";
export { gridStatus, revealCell, startGrid } from "./games/recon-grid";
export { claimPromo } from "./games/promos";
export { enroll, listEnrollments, missionCatalog, missionHistory, reportProgress } from "./games/missions";

export function identityStatus(_ctx: AppContext, m: MessengerRequest) {
  const { identity: id, player } = m;
  return {
    identity: {
      telegram_user_id: id.telegramUserId,
      username: id.username,
      is_premium: id.isPremium,
      language_code: id.languageCode,
      auth_date: id.authDate,
      scheme: id.scheme,
      start_param: id.startParam,
    },
    player: playerView(player),
    linked_user_id: player.linked_user_id === null ? null : String(player.linked_user_id),
    balances: balancesOf(player),
  };
}
export { issueChallenge, verifyClaim } from "./wallets/proof";
export { activityPreview, leaderboardPreview } from "./engagement";
export { opsHealth } from "./ops-health";
export { linkPlayer } from "./wallets/player-link";
