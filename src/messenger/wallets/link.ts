// What a wallet proof means outside the messenger: the partner domain stamps every live link holding the proven
// address verified (its wallets service verbs, inside the proof's transaction), and the player is linked to the
// MESSENGER_SALUTES_PARTNER user holding that wallet, if any.
import type { AppContext } from "../../context";
import type { Queryable } from "../../db/port";
import { liveUserHoldingSolanaWallet, markSolanaWalletProven } from "../../partner/wallets-service";
import { playerById, setLink } from "../store/players";

export async function linkProvenWallet(ctx: AppContext, t: Queryable, telegramUserId: number, address: string, now: string) {
  const partnerLinksVerified = await markSolanaWalletProven(t, address, now);
  const partner = ctx.config.messenger.salutesPartner;
  const owner = partner ? await liveUserHoldingSolanaWallet(t, partner, address) : null;
  if (owner !== null) {
    await setLink(t, telegramUserId, owner, "wallet_proof");
    return { linkedUserId: String(owner), partnerLinksVerified };
  }
  const current = await playerById(t, telegramUserId);
  return { linkedUserId: current?.linked_user_id == null ? null : String(current.linked_user_id), partnerLinksVerified };
}
