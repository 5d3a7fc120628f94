import type { Owner } from "../../auth/actors";
import { placeholders, type Queryable } from "../../db/port";
import type { RowOf } from "../../db/rows";
import type { walletLinks } from "../tables";

// wallet_links: the only SQL that touches it. "Exactly one primary per user with wallets" is kept by the callers'
// transactions and the partial unique index wallet_links_one_primary_idx.

export type WalletRow = Omit<RowOf<typeof walletLinks>, "mode"> & { mode: "sandbox" | "live" };

const OF_USER = "SELECT * FROM wallet_links WHERE user_id = ? ORDER BY is_primary DESC, id ASC";

export const walletsOfUser = (q: Queryable, userId: number) => q.all<WalletRow>(OF_USER, [userId]);

/** Many users' wallets in one query (a list page). */
export function walletsOfUsers(q: Queryable, userIds: number[]) {
  return q.all<WalletRow>(`SELECT * FROM wallet_links WHERE user_id IN (${placeholders(userIds.length)}) ORDER BY is_primary DESC, id ASC`, userIds);
}

const BY_ADDRESS = "SELECT * FROM wallet_links WHERE partner = ? AND mode = ? AND blockchain = ? AND wallet_address = ?";

export const walletByAddress = (q: Queryable, owner: Owner, blockchain: string, address: string) =>
  q.get<WalletRow>(BY_ADDRESS, [owner.partner, owner.mode, blockchain, address]);

export async function primaryWalletId(q: Queryable, userId: number): Promise<number | null> {
  return (await q.get<{ id: number }>("SELECT id FROM wallet_links WHERE user_id = ? AND is_primary = 1", [userId]))?.id ?? null;
}

export async function demoteWallet(q: Queryable, id: number, at: string): Promise<void> {
  await q.run("UPDATE wallet_links SET is_primary = 0, updated_at = ? WHERE id = ?", [at, id]);
}

/** The columns a link's owner sets (the rest are the row's identity, its owner and its timestamps), in the statements' order. */
const WALLET_FIELDS = ["label", "is_primary", "verified", "verified_at", "is_hidden", "session_connected_at"] as const;
export type WalletFields = Pick<WalletRow, (typeof WALLET_FIELDS)[number]>;
const fieldValues = (w: WalletFields) => WALLET_FIELDS.map((f) => w[f]);

export async function insertWallet(
  q: Queryable,
  owner: Owner,
  w: WalletFields & Pick<WalletRow, "user_id" | "blockchain" | "wallet_address"> & { at: string },
): Promise<void> {
  await q.run(
    `INSERT INTO wallet_links (user_id, partner, mode, blockchain, wallet_address, label, is_primary, verified, verified_at, is_hidden, session_connected_at, created_at, updated_at)
     VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
    [w.user_id, owner.partner, owner.mode, w.blockchain, w.wallet_address, ...fieldValues(w), w.at, w.at],
  );
}

export async function updateWallet(q: Queryable, id: number, w: WalletFields & { at: string }) {
  await q.run(
    "UPDATE wallet_links SET label = ?, is_primary = ?, verified = ?, verified_at = ?, is_hidden = ?, session_connected_at = ?, updated_at = ? WHERE id = ?",
    [...fieldValues(w), w.at, id],
  );
}

/** A link of this owner with its user's external id (GET /wallet-verification). */
export const walletWithUser = (q: Queryable, owner: Owner, blockchain: string, address: string) =>
  q.get<WalletRow & { external_id: string }>(
    `SELECT w.*, u.external_id FROM wallet_links w JOIN partner_users u ON u.id = w.user_id
     WHERE w.partner = ? AND w.mode = ? AND w.blockchain = ? AND w.wallet_address = ?`,
    [owner.partner, owner.mode, blockchain, address],
  );

/**
 * A wallet's owner proved control of it (a signed Sign-In-With-Solana message, src/messenger/wallets/proof.ts):
 * every partner's live link holding this Solana address is stamped verified at `at` and connected in a live
 * session at `at` (the proof came from the mini-app's wallet connection), in the proof's transaction `t`; how
 * many links.
 */
export async function markSolanaWalletProven(t: Queryable, address: string, at: string): Promise<number> {
  return (
    await t.run(
      "UPDATE wallet_links SET verified = 1, verified_at = ?, session_connected_at = ?, updated_at = ? WHERE blockchain = 'solana' AND wallet_address = ? AND mode = 'live'",
      [at, at, at, address],
    )
  ).changes;
}

/** The live user of `partner` whose wallet links hold this Solana address, if any. */
export async function liveUserHoldingSolanaWallet(q: Queryable, partner: string, address: string): Promise<number | null> {
  const row = await q.get<{ user_id: number }>(
    "SELECT user_id FROM wallet_links WHERE partner = ? AND mode = 'live' AND blockchain = 'solana' AND wallet_address = ?",
    [partner, address],
  );
  return row?.user_id ?? null;
}
