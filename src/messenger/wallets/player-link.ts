// Operator linking: an operator ties a player to a user of MESSENGER_SALUTES_PARTNER (or unties it), audited.
// The wallet proof links automatically; this is for players who cannot sign (support cases, migrations).
import type { AdminRequest } from "../../auth/admin-plugin";
import { writeAudit } from "../../auth/audit";
import type { AppContext } from "../../context";
import { AppError, NotFoundError } from "../../http/errors";
import { getUserOrThrowSync } from "../../partner/service";
import { getPlayer, playerView } from "../players";

export function linkPlayer(ctx: AppContext, admin: AdminRequest, telegramUserId: number, input: { user_id: string | null; reason: string }) {
  const partner = ctx.config.messenger.salutesPartner;
  if (!partner) throw new AppError("conflict", "MESSENGER_SALUTES_PARTNER is not set: there is no partner whose users players could be linked to");
  const db = ctx.db.sqlite;
  return db
    .transaction(() => {
      const player = getPlayer(db, telegramUserId);
      if (!player) throw new NotFoundError("messenger player", telegramUserId);
      // A user of another partner (or none) is a 404, the partner domain's usual answer.
      const userId = input.user_id === null ? null : getUserOrThrowSync(db, { partner, mode: "live" }, input.user_id).id;
      const now = ctx.clock.now().toISOString();
      db.query("UPDATE messenger_players SET linked_user_id = ?2, linked_by = ?3 WHERE telegram_user_id = ?1").run(
        telegramUserId,
        userId,
        userId === null ? null : "operator",
      );
      writeAudit(db, {
        at: now,
        actor: admin.actor,
        action: "messenger.player.link",
        target: String(telegramUserId),
        details: {
          partner,
          before: player.linked_user_id === null ? null : String(player.linked_user_id),
          after: userId === null ? null : String(userId),
          reason: input.reason,
        },
        requestId: admin.requestId,
      });
      return { player: playerView(getPlayer(db, telegramUserId)!) };
    })
    .immediate();
}
