// What a wallet proof means outside the messenger. The partner domain has no verb yet for "an address was
// proven, stamp every link holding it"; until it does, this file is the one place the messenger writes
// wallet_links (two statements, inside the proof's transaction). Moving them behind a partner service verb is
// a follow-up noted in docs/messenger.md.
import type { Database } from "bun:sqlite";
import type { AppContext } from "../context";

export function linkProvenWallet(ctx: AppContext, db: Database, telegramUserId: number, address: string, now: string) {
  // Every partner's live link holding this Solana address is now verified (verified_at_utc = the proof's time).
  const partnerLinksVerified = db
    .query("UPDATE wallet_links SET verified = 1, verified_at = ?1, updated_at = ?1 WHERE blockchain = 'solana' AND wallet_address = ?2 AND mode = 'live'")
    .run(now, address).changes;
  let linkedUserId: string | null = null;
  const partner = ctx.config.messenger.salutesPartner;
  if (partner) {
    const owner = db
      .query<{ user_id: number }, [string, string]>(
        "SELECT user_id FROM wallet_links WHERE partner = ? AND mode = 'live' AND blockchain = 'solana' AND wallet_address = ?",
      )
      .get(partner, address);
    if (owner) {
      db.query("UPDATE messenger_players SET linked_user_id = ?2, linked_by = 'wallet_proof' WHERE telegram_user_id = ?1").run(telegramUserId, owner.user_id);
      linkedUserId = String(owner.user_id);
    }
  }
  if (linkedUserId === null) {
    const current = db
      .query<{ linked_user_id: number | null }, [number]>("SELECT linked_user_id FROM messenger_players WHERE telegram_user_id = ?")
      .get(telegramUserId);
    linkedUserId = current?.linked_user_id == null ? null : String(current.linked_user_id);
  }
  return { linkedUserId, partnerLinksVerified };
}
