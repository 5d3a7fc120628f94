import type { Database } from "bun:sqlite";
import type { Owner } from "../auth/actors";
import { AppError } from "../http/errors";

/**
 * The three uniqueness rules of users and wallets, checked inside the writing transaction so the answer is a
 * clear 409 rather than a constraint error. The unique indexes stay the last word: if another writer (a
 * second instance over libSQL) slips in between, `rethrowUniqueViolation` maps the index back to the same code.
 */
export function assertExternalIdFree(db: Database, owner: Owner, externalId: string): void {
  const hit = db.query("SELECT id FROM partner_users WHERE partner = ? AND mode = ? AND external_id = ?").get(owner.partner, owner.mode, externalId);
  if (hit) throw externalIdTaken(externalId);
}

export function assertUsernameFree(db: Database, owner: Owner, username: string, exceptUserId: number | null): void {
  const hit = db
    .query("SELECT id FROM partner_users WHERE partner = ? AND mode = ? AND username = ? AND id IS NOT ?")
    .get(owner.partner, owner.mode, username, exceptUserId);
  if (hit) throw usernameTaken(username);
}

/** The address may belong to `userId` already (a re-link); belonging to any other user of this owner is a 409. */
export function assertWalletFree(db: Database, owner: Owner, blockchain: string, address: string, userId: number | null): void {
  const hit = db
    .query("SELECT user_id FROM wallet_links WHERE partner = ? AND mode = ? AND blockchain = ? AND wallet_address = ?")
    .get(owner.partner, owner.mode, blockchain, address) as { user_id: number } | null;
  if (hit && hit.user_id !== userId) throw walletAlreadyLinked(blockchain, address);
}

const externalIdTaken = (id: string) =>
  new AppError(
    "external_id_taken",
    `You already have a user with external_id ${JSON.stringify(id)}; find it with GET /api/partner/user-lookup?q=${encodeURIComponent(id)}`,
  );
const usernameTaken = (name: string) => new AppError("username_taken", `Username ${JSON.stringify(name)} is already used by another of your users`);
// The message does not name the other user: the partner can look it up, and the error stays small.
const walletAlreadyLinked = (chain: string, address: string) =>
  new AppError(
    "wallet_already_linked",
    `The ${chain} wallet ${address} is already linked to another of your users; find it with GET /api/partner/user-lookup?wallet=${address}`,
  );

export function rethrowUniqueViolation(
  err: unknown,
  values: { external_id?: string; username?: string | null; blockchain?: string; wallet_address?: string },
): never {
  const message = err instanceof Error ? err.message : "";
  if (/UNIQUE constraint failed: partner_users\.partner, partner_users\.mode, partner_users\.external_id/.test(message))
    throw externalIdTaken(values.external_id ?? "");
  if (/UNIQUE constraint failed: partner_users\.partner, partner_users\.mode, partner_users\.username/.test(message))
    throw usernameTaken(values.username ?? "");
  if (/UNIQUE constraint failed: wallet_links\.partner/.test(message)) throw walletAlreadyLinked(values.blockchain ?? "", values.wallet_address ?? "");
  throw err;
}
