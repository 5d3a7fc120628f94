// POST /api/messenger/admin/games/recon-grid/manual-grant: an operator gives a player missiles, through the game
// ledger like any other balance change (applyAction: balances and the ledger row) and with the
// admin_audit row in the SAME transaction (the effect callback runs inside it), so a grant is never applied without
// its audit row nor audited without being applied.
//
// Idempotency: request_id is the operator's key for this grant, across all players. The ledger's own replay check
// is per player (telegram_user_id, request_id), so the ledger row is stored under `admin/<request_id>` — a prefix
// no player request id can take ("/" is outside their alphabet) — and the same request_id used for ANOTHER player
// is found through the audit rows, inside the transaction and after a lock every grant takes (the grants' row of
// messenger_versions), so two grants racing on two instances run one after the other and cannot both pass.
import type { Static } from "elysia";
import type { AdminRequest } from "../../auth/admin-plugin";
import type { AppContext } from "../../context";
import { auditOperator } from "../../auth/audit";
import { AppError } from "../../http/errors/errors";
import { applyAction } from "../ledger";
import { auditTargetsWithRequestId } from "../store/read-models";
import { lockVersionRow } from "../store/versions";
import { MANUAL_GRANT_ACTION } from "./overview";
import { playerOrThrow } from "./players-admin";
import type { AnalyticsModel } from "./analytics-model";

export const GRANT_AUDIT_ACTION = "messenger.recon_grid.manual_grant";

export async function manualGrant(ctx: AppContext, admin: AdminRequest, input: Static<typeof AnalyticsModel.grantBody>) {
  // An unknown player is a 404, not a new player: a grant to an id nobody has used is most likely a typo.
  await playerOrThrow(ctx, input.telegram_user_id);
  const reason = input.reason.trim();
  if (reason === "") {
    throw new AppError("invalid_payload", "Invalid request body: body.reason must say why the missiles are granted", {
      details: [{ field: "body.reason", problem: "must not be blank" }],
    });
  }
  return applyAction(
    ctx,
    {
      telegramUserId: input.telegram_user_id,
      requestId: `admin/${input.request_id}`,
      action: MANUAL_GRANT_ACTION,
      inputs: { missiles: input.missiles, reason },
      gameKey: "recon_grid",
      sharing: "alone",
    },
    async (player, { t, now }) => {
      // After the player's lock (applyAction's first), the grants' lock: one order, so no two grants wait in a circle.
      await lockVersionRow(t, "manual_grants", now);
      const others = await auditTargetsWithRequestId(t, GRANT_AUDIT_ACTION, input.request_id, String(input.telegram_user_id));
      if (others.length > 0) {
        throw new AppError("request_id_reused", `request_id ${JSON.stringify(input.request_id)} was already used for a grant to another player`);
      }
      const grant = { telegram_user_id: input.telegram_user_id, missiles: input.missiles, reason, request_id: input.request_id, granted_at: now };
      await auditOperator(t, admin, now, GRANT_AUDIT_ACTION, String(input.telegram_user_id), { ...grant, missile_balance_before: player.missile_balance });
      return { deltas: { freeSpins: 0, missiles: input.missiles, points: 0 }, result: { grant } };
    },
  );
}
