import type { Database } from "bun:sqlite";
import type { Owner } from "../auth/actors";
import type { AppContext } from "../context";
import { ValidationError } from "../http/errors";
import { assertExternalIdFree, assertUsernameFree, assertWalletFree, rethrowUniqueViolation } from "./user-conflicts";
import { FieldCheck } from "./user-fields";
import { emitUserUpdated, getUserOrThrow, type UserRow } from "./users";
import { upsertWallet, walletsOf, type WalletView } from "./wallets-service";

/** Template tokens stay literal (the spec's USER_ID, WALLET_ADDRESS): one map serves every user in a list. */
export const USER_LINKS = {
  users: "/api/partner/users",
  self: "/api/partner/users/USER_ID",
  wallets: "/api/partner/users/USER_ID/wallets",
  lookup: "/api/partner/user-lookup",
  wallet_verification: "/api/partner/wallet-verification/WALLET_ADDRESS",
};
export const USER_DOCS_LINKS = { users: "/api/docs#/partner", errors: "/api/partner/errors.json" };

export type UserWithPrimary = UserRow & { primary_wallet: string | null };

export function userView(u: UserWithPrimary, wallets?: WalletView[]) {
  return {
    id: u.id,
    external_id: u.external_id,
    username: u.username,
    display_name: u.display_name,
    email: u.email,
    status: u.status,
    is_verified: u.is_verified === 1,
    wallet_address: u.primary_wallet,
    ...(wallets ? { wallets } : {}),
    created_at: u.created_at,
    updated_at: u.updated_at,
  };
}

export const SELECT_USER_WITH_PRIMARY = `SELECT u.*, (SELECT w.wallet_address FROM wallet_links w WHERE w.user_id = u.id AND w.is_primary = 1) AS primary_wallet FROM partner_users u`;

function loadView(db: Database, id: number, includeWallets: boolean) {
  const row = db.query(`${SELECT_USER_WITH_PRIMARY} WHERE u.id = ?`).get(id) as UserWithPrimary;
  return userView(row, includeWallets ? walletsOf(db, id) : undefined);
}

/** GET /users/{id}: one of this owner's users, or 404 (malformed and foreign ids alike). */
export function getUserView(ctx: AppContext, owner: Owner, rawId: string, includeWallets: boolean) {
  const user = getUserOrThrow(ctx, owner, rawId);
  return loadView(ctx.db.sqlite, user.id, includeWallets);
}

export interface CreateUserInput {
  external_id: string;
  username?: string;
  display_name?: string;
  email?: string;
  wallet_address?: string;
  blockchain?: string;
}

/**
 * POST /users. Call inside the request's idempotency transaction: the user, their first (primary) wallet and
 * the users.updated event (changes ["created"]) commit together.
 */
export function createUser(ctx: AppContext, owner: Owner, input: CreateUserInput) {
  const check = new FieldCheck();
  const externalId = check.externalId(input.external_id);
  const username = input.username === undefined ? null : check.username(input.username);
  const displayName = input.display_name === undefined ? null : check.displayName(input.display_name);
  const email = input.email === undefined ? null : check.email(input.email);
  const chain = input.wallet_address === undefined && input.blockchain === undefined ? undefined : check.blockchain(input.blockchain);
  if (input.blockchain !== undefined && input.wallet_address === undefined) check.problems.push({ field: "blockchain", problem: "needs wallet_address" });
  const address = input.wallet_address === undefined ? undefined : check.walletAddress(input.wallet_address, chain);
  check.orThrow("user");

  const db = ctx.db.sqlite;
  const now = ctx.clock.now().toISOString();
  assertExternalIdFree(db, owner, externalId!);
  if (username) assertUsernameFree(db, owner, username, null);
  if (address) assertWalletFree(db, owner, chain!, address, null);
  let user: UserRow;
  try {
    user = db
      .query(
        `INSERT INTO partner_users (partner, mode, external_id, username, display_name, email, status, is_verified, created_at, updated_at)
         VALUES (?, ?, ?, ?, ?, ?, 'active', 0, ?, ?) RETURNING *`,
      )
      .get(owner.partner, owner.mode, externalId!, username ?? null, displayName ?? null, email ?? null, now, now) as UserRow;
  } catch (err) {
    rethrowUniqueViolation(err, { external_id: externalId, username });
  }
  if (address) upsertWallet(db, owner, user.id, { blockchain: chain!, wallet_address: address, is_primary: true }, now);
  emitUserUpdated(ctx, db, owner, user, ["created"]);
  return { external_id: user.external_id, user: loadView(db, user.id, true) };
}

export interface PatchUserInput {
  username?: string | null;
  display_name?: string | null;
  email?: string | null;
  status?: "active" | "suspended";
  is_verified?: boolean;
}

const PATCHABLE = ["username", "display_name", "email", "status", "is_verified"] as const;

function normalisePatch(input: PatchUserInput): Partial<Record<(typeof PATCHABLE)[number], string | number | null>> {
  if (!PATCHABLE.some((f) => input[f] !== undefined)) {
    throw new ValidationError(`Send at least one field to change: ${PATCHABLE.join(", ")}`, [
      { field: "body", problem: `must set at least one of ${PATCHABLE.join(", ")}` },
    ]);
  }
  const check = new FieldCheck();
  const out: Partial<Record<(typeof PATCHABLE)[number], string | number | null>> = {};
  if (input.username !== undefined) out.username = input.username === null ? null : check.username(input.username);
  if (input.display_name !== undefined) out.display_name = input.display_name === null ? null : check.displayName(input.display_name);
  if (input.email !== undefined) out.email = input.email === null ? null : check.email(input.email);
  if (input.status !== undefined) out.status = input.status;
  if (input.is_verified !== undefined) out.is_verified = input.is_verified ? 1 : 0;
  check.orThrow("user update");
  return out;
}

/**
 * PATCH /users/{id}: only the fields sent change; users.updated names the fields whose value actually changed
 * (a PATCH that changes nothing writes nothing and emits nothing). Call inside the idempotency transaction.
 */
export function updateUser(ctx: AppContext, owner: Owner, rawId: string, input: PatchUserInput) {
  const user = getUserOrThrow(ctx, owner, rawId);
  const next = normalisePatch(input);
  const changed = (Object.keys(next) as Array<keyof typeof next>).filter((f) => next[f] !== user[f]);
  const db = ctx.db.sqlite;
  if (changed.length) {
    if (changed.includes("username") && next.username) assertUsernameFree(db, owner, next.username as string, user.id);
    const now = ctx.clock.now().toISOString();
    // Column names come from the fixed PATCHABLE list, never from the request.
    const sets = changed.map((f) => `${f} = ?`).join(", ");
    try {
      db.query(`UPDATE partner_users SET ${sets}, updated_at = ? WHERE id = ?`).run(...changed.map((f) => next[f] ?? null), now, user.id);
    } catch (err) {
      rethrowUniqueViolation(err, { username: next.username as string });
    }
    emitUserUpdated(ctx, db, owner, user, changed);
  }
  return { user: loadView(db, user.id, true) };
}
