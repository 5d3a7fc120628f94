import type { Owner } from "../auth/actors";
import type { AppContext } from "../context";
import type { Queryable } from "../db/port";
import { AppError, found } from "../http/errors/errors";
import { emitEvent } from "../webhooks/service";
import { type UserRow, userOf } from "./store/users";

export type { UserRow };

/** Parses a user id from a path or body ("42" or 42). A malformed id is answered like an unknown one: 404. */
export function parseUserId(raw: string | number): number | null {
  const s = String(raw).trim();
  if (!/^[1-9]\d{0,15}$/.test(s)) return null;
  return Number(s);
}

/**
 * One of this owner's users, or 404. Another partner's user — or a sandbox user seen from live — is reported
 * exactly like a missing one, on purpose: ids must not reveal other tenants. `q`: the caller's transaction, or
 * the store for a read.
 */
export async function getUserOrThrow(q: Queryable, owner: Owner, rawId: string | number): Promise<UserRow> {
  const id = parseUserId(rawId);
  return found(id === null ? null : await userOf(q, owner, id), "user", rawId);
}

/** Suspended users may be read but not credited, converted or given claims. */
export function requireActiveUser(user: UserRow): void {
  if (user.status !== "active") throw new AppError("conflict", `User ${user.id} is ${user.status}; reactivate them (PATCH status=active) first`);
}

/** `users.updated`, emitted inside the transaction that changed the user or a wallet. */
export async function emitUserUpdated(
  t: Queryable,
  ctx: Pick<AppContext, "clock" | "rng">,
  owner: Owner,
  user: Pick<UserRow, "id" | "external_id">,
  changes: string[],
) {
  await emitEvent(t, ctx, owner, "users.updated", { user_id: String(user.id), external_id: user.external_id, changes });
}
