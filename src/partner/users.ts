import type { Database } from "bun:sqlite";
import type { Owner } from "../auth/actors";
import type { AppContext } from "../context";
import { AppError, NotFoundError } from "../http/errors";
import { emitEventSync } from "../webhooks/service";

export interface UserRow {
  id: number;
  partner: string;
  mode: "sandbox" | "live";
  external_id: string;
  username: string | null;
  display_name: string | null;
  email: string | null;
  status: "active" | "suspended";
  is_verified: number;
  created_at: string;
  updated_at: string;
}

/**
 * Parses a user id from a path or body ("42" or 42). A malformed id is answered like an unknown one: 404.
 */
export function parseUserId(raw: string | number): number | null {
  const s = String(raw).trim();
  if (!/^[1-9]\d{0,15}$/.test(s)) return null;
  return Number(s);
}

/**
 * One of this owner's users, or 404. Another partner's user — or a sandbox user seen from live — is reported
 * exactly like a missing one, on purpose: ids must not reveal other tenants.
 */
export function getUserOrThrow(ctx: AppContext, owner: Owner, rawId: string | number): UserRow {
  const id = parseUserId(rawId);
  const row =
    id === null
      ? null
      : (ctx.db.sqlite.query("SELECT * FROM partner_users WHERE id = ? AND partner = ? AND mode = ?").get(id, owner.partner, owner.mode) as UserRow | null);
  if (!row) throw new NotFoundError("user", rawId);
  return row;
}

/** Suspended users may be read but not credited, converted or given claims. */
export function requireActiveUser(user: UserRow): void {
  if (user.status !== "active") throw new AppError("conflict", `User ${user.id} is ${user.status}; reactivate them (PATCH status=active) first`);
}

/** `users.updated`, emitted inside the transaction that changed the user or a wallet. */
export function emitUserUpdated(ctx: AppContext, sqlite: Database, owner: Owner, user: Pick<UserRow, "id" | "external_id">, changes: string[]): void {
  emitEventSync({ sqlite, clock: ctx.clock, rng: ctx.rng }, owner, "users.updated", { user_id: String(user.id), external_id: user.external_id, changes });
}
