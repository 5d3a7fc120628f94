// Salutes rewards: a promo or mission may also pay salutes to the player's linked partner user, only when the
// operator named the paying partner (MESSENGER_SALUTES_PARTNER), and then only through the salutes service
// (a ledger entry and a salutes.credit event to that partner's webhooks). Called inside the game-ledger action,
// whose request id makes it idempotent: a replay answers the stored result and never pays again.
//
// Once per partner USER, not per player: several players can be linked to one partner user (two Telegram
// accounts proving the same wallet, or an operator link), and each may claim a promo or complete a mission once,
// but the user's salutes for that reward are paid once — the first claim pays, later ones get their game reward
// and `paid: false` with the reason. The guard is a row of messenger_salutes_rewards keyed (partner, user,
// reward), written in the payout's savepoint: a payout the salutes service refuses leaves no row. The row is
// claimed first (INSERT … ON CONFLICT DO NOTHING), so two players of one user claiming on two instances at once
// pay once: the second insert waits for the first to commit and then inserts nothing.
import type { AppContext } from "../../context";
import { settlingBehind } from "../../db/port";
import type { Static } from "elysia";
import { AppError } from "../../http/errors/errors";
import { amountMinorOrThrow, postEntry } from "../../salutes/service";
import type { ActionScope } from "../ledger";
import type { PlayerRow } from "../players";
import { claimSalutesReward, setSalutesRewardEntry } from "../store/promos";
import { inSavepoint } from "../store/savepoint";
import type { SalutesPayout as SalutesPayoutSchema } from "./promos-model";

/** A payout as answered; `reason` says why it was not paid (not linked, no paying partner, the salutes service refused). */
export type SalutesPayout = Static<typeof SalutesPayoutSchema>;

/**
 * A promo's or mission's `reward.salutes` as the operator sets it: one the salutes ledger can pay (at most
 * SALUTES_DECIMALS places, at most SALUTES_MAX_AMOUNT), else the 400 naming the rule, so a reward that could never
 * be paid is refused when it is made rather than answered `paid: false` on every claim. "0" pays none.
 */
export function checkSalutesReward(ctx: Pick<AppContext, "config">, amount: string | null | undefined): void {
  if (amount !== undefined && amount !== null && Number(amount) !== 0) amountMinorOrThrow(ctx, Number(amount), "body.reward.salutes");
}

/**
 * Pays the salutes of a promo or mission in the action's transaction (`s.t`), through the salutes service's own verb
 * (a ledger entry and its salutes.credit event, reason messenger_<kind>); the dispatcher is nudged after the commit
 * (`s.after`). What is paid once per partner user is the reward `<kind>:<key>` (`promo:<code>`, `mission:<mission_key>`).
 */
export async function paySalutes(
  ctx: AppContext,
  s: ActionScope,
  player: PlayerRow,
  amount: string | null,
  kind: "promo" | "mission",
  key: string,
): Promise<SalutesPayout | null> {
  if (amount === null || Number(amount) === 0) return null;
  const rewardKey = `${kind}:${key}`;
  const idempotencyKey = `messenger:${rewardKey}:${player.telegram_user_id}`;
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
  const userId = player.linked_user_id;
  const { t, now } = s;
  try {
    // A savepoint: a refusal by the salutes service rolls back only the payout (and its guard row), and the game
    // reward stands.
    const paid = await inSavepoint(t, async () => {
      const first = await claimSalutesReward(t, { partner, partnerUserId: userId, rewardKey, telegramUserId: player.telegram_user_id, amount, at: now });
      if (!first) return null;
      const entry = await settlingBehind(t, (scope) =>
        postEntry(scope, ctx, { partner, mode: "live" }, { keyId: "messenger", idempotencyKey }, "credit", {
          user_id: String(userId),
          amount: Number(amount),
          reason: `messenger_${kind}`,
          source: "messenger",
        }),
      );
      await setSalutesRewardEntry(t, { partner, partnerUserId: userId, rewardKey }, entry.answer.ledger_entry_id);
      return entry;
    });
    // The player behind the earlier payout is another person's account: not named here.
    if (paid === null)
      return unpaid(`partner user ${userId} already received the salutes of ${rewardKey} (through another claim); they are paid once per partner user`);
    const { answer, deliveries } = paid;
    if (await deliveries) s.after.nudge = true;
    return { amount, paid: true, partner_user_id: answer.user_id, salutes_ledger_entry_id: answer.ledger_entry_id, reason: null };
  } catch (err) {
    if (err instanceof AppError) return unpaid(`the salutes service refused: ${err.code}: ${err.message}`);
    throw err;
  }
}
