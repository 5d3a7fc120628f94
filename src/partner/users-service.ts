import type { Static } from "elysia";
import type { Owner } from "../auth/actors";
import type { AppContext } from "../context";
import type { Queryable } from "../db/port";
import { ValidationError } from "../http/errors/errors";
import { assertExternalIdFree, assertUsernameFree, assertWalletFree, rethrowUniqueViolation } from "./user-conflicts";
import { FieldCheck } from "./user-fields";
import { User, type UsersModel } from "./users-model";
import { schemaView } from "../http/schema-view";
import { insertUser, PATCHABLE, type Patchable, updateUserFields, type UserWithPrimary, userWithPrimary } from "./store/users";
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

export function userView(u: UserWithPrimary, wallets?: WalletView[]) {
  // The spec types these as strings: a field never set (or cleared with null) answers "", as a wallet's label does.
  return schemaView(User, u, {
    username: u.username ?? "",
    display_name: u.display_name ?? "",
    email: u.email ?? "",
    is_verified: u.is_verified === 1,
    wallet_address: u.primary_wallet ?? "",
    wallets,
  });
}

async function loadView(q: Queryable, id: number, includeWallets: boolean) {
  const row = (await userWithPrimary(q, id))!;
  return userView(row, includeWallets ? await walletsOf(q, id) : undefined);
}

/** GET /users/{id}: one of this owner's users, or 404 (malformed and foreign ids alike). */
export async function getUserView(ctx: AppContext, owner: Owner, rawId: string, includeWallets: boolean) {
  const user = await getUserOrThrow(ctx.store, owner, rawId);
  return loadView(ctx.store, user.id, includeWallets);
}

export type CreateUserInput = Static<typeof UsersModel.createBody>;

/**
 * POST /users. Call inside the request's idempotency transaction `t`: the user, their first (primary) wallet and
 * the users.updated event (changes ["created"]) commit together.
 */
export async function createUser(t: Queryable, ctx: Pick<AppContext, "clock" | "rng">, owner: Owner, input: CreateUserInput) {
  const check = new FieldCheck();
  const externalId = check.externalId(input.external_id);
  const username = input.username === undefined ? null : check.username(input.username);
  const displayName = input.display_name === undefined ? null : check.displayName(input.display_name);
  const email = input.email === undefined ? null : check.email(input.email);
  const chain = input.wallet_address === undefined && input.blockchain === undefined ? undefined : check.blockchain(input.blockchain);
  if (input.blockchain !== undefined && input.wallet_address === undefined) check.problems.push({ field: "blockchain", problem: "needs wallet_address" });
  const address = input.wallet_address === undefined ? undefined : check.walletAddress(input.wallet_address, chain);
  check.orThrow("user");

  const now = ctx.clock.now().toISOString();
  await assertExternalIdFree(t, owner, externalId!);
  if (username) await assertUsernameFree(t, owner, username, null);
  if (address) await assertWalletFree(t, owner, chain!, address, null);
  let user: UserRow;
  try {
    user = await insertUser(t, owner, {
      external_id: externalId!,
      username: username ?? null,
      display_name: displayName ?? null,
      email: email ?? null,
      status: input.status ?? "active",
      is_verified: input.is_verified === true ? 1 : 0,
      at: now,
    });
  } catch (err) {
    rethrowUniqueViolation(err, { external_id: externalId, username });
  }
  if (address) await upsertWallet(t, owner, user.id, { blockchain: chain!, wallet_address: address, is_primary: true }, now);
  await emitUserUpdated(t, ctx, owner, user, ["created"]);
  return { external_id: user.external_id, user: await loadView(t, user.id, true) };
}

export type PatchUserInput = Static<typeof UsersModel.patchBody>;

function normalisePatch(input: PatchUserInput): Partial<Record<Patchable, string | number | null>> {
  if (!PATCHABLE.some((f) => input[f] !== undefined)) {
    throw new ValidationError(`Send at least one field to change: ${PATCHABLE.join(", ")}`, [
      { field: "body", problem: `must set at least one of ${PATCHABLE.join(", ")}` },
    ]);
  }
  const check = new FieldCheck();
  const out: Partial<Record<Patchable, string | number | null>> = {};
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
export async function updateUser(t: Queryable, ctx: Pick<AppContext, "clock" | "rng">, owner: Owner, rawId: string, input: PatchUserInput) {
  const user = await getUserOrThrow(t, owner, rawId);
  const next = normalisePatch(input);
  const changed = (Object.keys(next) as Patchable[]).filter((f) => next[f] !== user[f]);
  if (changed.length) {
    if (changed.includes("username") && next.username) await assertUsernameFree(t, owner, next.username as string, user.id);
    try {
      await updateUserFields(t, user.id, changed, next, ctx.clock.now().toISOString());
    } catch (err) {
      rethrowUniqueViolation(err, { username: next.username as string });
    }
    await emitUserUpdated(t, ctx, owner, user, changed);
  }
  return { user: await loadView(t, user.id, true) };
}
