import type { Owner } from "../auth/actors";
import type { Queryable } from "../db/port";
import { AppError } from "../http/errors/errors";
import { externalIdHolder, usernameHolder, violatedRule } from "./store/users";
import { walletByAddress } from "./store/wallets";

/**
 * The three uniqueness rules of users and wallets, checked inside the writing transaction so the answer is a
 * clear 409 rather than a constraint error. The unique indexes stay the last word: if another writer (a second
 * instance on PostgreSQL) slips in between, `rethrowUniqueViolation` maps the index back to the same code.
 */
export async function assertExternalIdFree(t: Queryable, owner: Owner, externalId: string): Promise<void> {
  if ((await externalIdHolder(t, owner, externalId)) !== null) throw externalIdTaken(externalId);
}

export async function assertUsernameFree(t: Queryable, owner: Owner, username: string, exceptUserId: number | null): Promise<void> {
  if ((await usernameHolder(t, owner, username, exceptUserId)) !== null) throw usernameTaken(username);
}

/**
 * The address may belong to `userId` already (a re-link: its link is returned); belonging to any other user of this
 * owner is a 409. The caller uses the link returned rather than reading it again: on PostgreSQL each statement sees
 * what committed before it, so a second read could find another user's link that the first did not (which once
 * created a user without the wallet asked for, answered 201).
 */
export async function assertWalletFree(t: Queryable, owner: Owner, blockchain: string, address: string, userId: number | null) {
  const hit = await walletByAddress(t, owner, blockchain, address);
  if (hit && hit.user_id !== userId) throw walletAlreadyLinked(blockchain, address);
  return hit ?? null;
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
  const rule = violatedRule(err);
  if (rule === "external_id") throw externalIdTaken(values.external_id ?? "");
  if (rule === "username") throw usernameTaken(values.username ?? "");
  if (rule === "wallet") throw walletAlreadyLinked(values.blockchain ?? "", values.wallet_address ?? "");
  throw err;
}
