// Operator linking: an operator ties a player to a user of MESSENGER_SALUTES_PARTNER (or unties it), audited.
// The wallet proof links automatically; this is for players who cannot sign (support cases, migrations).
import type { AdminRequest } from "../../auth/admin-plugin";
import type { AppContext } from "../../context";
import { auditOperator } from "../../auth/audit";
import { AppError, found } from "../../http/errors/errors";
import { getUserOrThrow } from "../../partner/service";
import { getPlayer, playerView } from "../players";
import { lockPlayer, setLink } from "../store/players";

export async function linkPlayer(ctx: AppContext, admin: AdminRequest, telegramUserId: number, input: { user_id: string | null; reason: string }) {
  const partner = ctx.config.messenger.salutesPartner;
  if (!partner) throw new AppError("conflict", "MESSENGER_SALUTES_PARTNER is not set: there is no partner whose users players could be linked to");
  const now = ctx.clock.now().toISOString();
  return ctx.store.tx(async (t) => {
    // The player's row lock: the audit's "before" is the link this change replaces, whatever runs beside it.
    const player = found(await lockPlayer(t, telegramUserId), "messenger player", telegramUserId);
    // A user of another partner (or none) is a 404, the partner domain's usual answer.
    const userId = input.user_id === null ? null : (await getUserOrThrow(t, { partner, mode: "live" }, input.user_id)).id;
    await setLink(t, telegramUserId, userId, userId === null ? null : "operator");
    await auditOperator(t, admin, now, "messenger.player.link", String(telegramUserId), {
      partner,
      before: player.linked_user_id === null ? null : String(player.linked_user_id),
      after: userId === null ? null : String(userId),
      reason: input.reason,
    });
    return { player: playerView((await getPlayer(t, telegramUserId))!) };
  });
}
