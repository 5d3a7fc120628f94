import { type BatchBound, type BatchedDeleteResult, deleteInBatches } from "../../db/batched-delete";
import { changed, type Queryable, type Store } from "../../db/port";
import type { RowOf } from "../../db/rows";
import type { messengerWalletChallenges } from "../tables";

// Wallet proofs (messenger_wallet_challenges, messenger_wallets): the only SQL that touches them. A challenge is
// consumed by a conditional UPDATE (consumed_at IS NULL), so of two claims of one nonce on two instances one wins.

export type ChallengeRow = RowOf<typeof messengerWalletChallenges>;

export async function insertChallenge(t: Queryable, c: Omit<ChallengeRow, "consumed_at">): Promise<void> {
  await t.run("INSERT INTO messenger_wallet_challenges (nonce, telegram_user_id, address, message, issued_at, expires_at) VALUES (?, ?, ?, ?, ?, ?)", [
    c.nonce,
    c.telegram_user_id,
    c.address,
    c.message,
    c.issued_at,
    c.expires_at,
  ]);
}

export const challengeOf = (q: Queryable, nonce: string, telegramUserId: number) =>
  q.get<ChallengeRow>("SELECT * FROM messenger_wallet_challenges WHERE nonce = ? AND telegram_user_id = ?", [nonce, telegramUserId]);

/** Consumes the nonce: false when another request consumed it first. */
export async function consumeChallenge(t: Queryable, nonce: string, at: string): Promise<boolean> {
  return changed(t, "UPDATE messenger_wallet_challenges SET consumed_at = ? WHERE nonce = ? AND consumed_at IS NULL", [at, nonce]);
}

/** Records the proven wallet; true when it is new to this player (proving it again only refreshes verified_at). */
export async function recordWallet(t: Queryable, telegramUserId: number, address: string, at: string): Promise<boolean> {
  const known = (await t.get("SELECT address FROM messenger_wallets WHERE telegram_user_id = ? AND address = ?", [telegramUserId, address])) !== null;
  await t.run(
    `INSERT INTO messenger_wallets (telegram_user_id, address, verified_at) VALUES (?, ?, ?)
     ON CONFLICT (telegram_user_id, address) DO UPDATE SET verified_at = excluded.verified_at`,
    [telegramUserId, address, at],
  );
  return !known;
}

/** Retention, in bounded batches down messenger_wallet_challenges_expires_idx (src/db/batched-delete.ts). */
export function pruneChallenges(store: Store, expiredBefore: string, bound: BatchBound = {}): Promise<BatchedDeleteResult> {
  return deleteInBatches(store, { table: "messenger_wallet_challenges", where: "expires_at < ?", params: [expiredBefore], ...bound });
}
