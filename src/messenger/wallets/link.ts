// What a wallet proof means outside the messenger: the partner domain stamps every live link holding the proven
// address verified (its wallets service verbs, inside the proof's transaction), and the player is linked to the
// MESSENGER_SALUTES_PARTNER user holding that wallet, if any.
import type { Database } from "bun:sqlite";
import type { AppContext } from "../../context";
import { liveUserHoldingSolanaWalletSync, markSolanaWalletProvenSync } from "../../partner/wallets-service";

export function linkProvenWallet(ctx: AppContext, db: Database, telegramUserId: number, address: string, now: string) {
  const partnerLinksVerified = markSolanaWalletProvenSync(db, address, now);
  let linkedUserId: string | null = null;
  const partner = ctx.config.messenger.salutesPartner;
  const owner = partner ? liveUserHoldingSolanaWalletSync(db, partner, address) : null;
  if (owner !== null) {
    db.query("UPDATE messenger_players SET linked_user_id = ?2, linked_by = 'wallet_proof' WHERE telegram_user_id = ?1").run(telegramUserId, owner);
    linkedUserId = String(owner);
  } else {
    const current = db
      .query<{ linked_user_id: number | null }, [number]>("SELECT linked_user_id FROM messenger_players WHERE telegram_user_id = ?")
      .get(telegramUserId);
    linkedUserId = current?.linked_user_id == null ? null : String(current.linked_user_id);
  }
  return { linkedUserId, partnerLinksVerified };
}
