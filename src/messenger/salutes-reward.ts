// Salutes rewards: a promo or mission may also pay salutes to the player's linked partner user, only when the
// operator named the paying partner (MESSENGER_SALUTES_PARTNER), and then only through the salutes service
// (a ledger entry and a salutes.credit event to that partner's webhooks). Called inside the game-ledger action,
// whose request id makes it idempotent: a replay answers the stored result and never pays again.
import type { Database } from "bun:sqlite";
import type { AppContext } from "../context";
import { AppError } from "../http/errors";
import { postEntry } from "../salutes/service";
import type { PlayerRow } from "./players";

export const SALUTES_AMOUNT_PATTERN = "^[0-9]{1,13}(\\.[0-9]{1,6})?$";

export interface SalutesPayout {
  amount: string;
  paid: boolean;
  partner_user_id: string | null;
  salutes_ledger_entry_id: number | null;
  /** Why it was not paid (not linked, no paying partner, the salutes service refused). */
  reason: string | null;
}

export function paySalutes(
  ctx: AppContext,
  db: Database,
  player: PlayerRow,
  amount: string | null,
  idempotencyKey: string,
  reason: string,
): SalutesPayout | null {
  if (amount === null || Number(amount) === 0) return null;
  const partner = ctx.config.messenger.salutesPartner;
  const unpaid = (why: string): SalutesPayout => ({
    amount,
    paid: false,
    partner_user_id: player.linked_user_id === null ? null : String(player.linked_user_id),
    salutes_ledger_entry_id: null,
    reason: why,
  });
  if (!partner) return unpaid("MESSENGER_SALUTES_PARTNER is not set");
  if (player.linked_user_id === null) return unpaid("the player is not linked to a partner user (wallet proof or operator link)");
  try {
    // A savepoint: a refusal by the salutes service rolls back only the payout, and the game reward stands.
    const { answer, deliveries } = db.transaction(() =>
      postEntry(ctx, { partner, mode: "live" }, { keyId: "messenger", idempotencyKey }, "credit", {
        user_id: String(player.linked_user_id),
        amount: Number(amount),
        reason,
        source: "messenger",
      }),
    )();
    if (deliveries) ctx.dispatcher.nudge();
    return { amount, paid: true, partner_user_id: answer.user_id, salutes_ledger_entry_id: answer.ledger_entry_id, reason: null };
  } catch (err) {
    if (err instanceof AppError) return unpaid(`the salutes service refused: ${err.code}: ${err.message}`);
    throw err;
  }
}
