import { changed, countOf, insertedId, type Queryable } from "../../db/port";
import type { RowOf } from "../../db/rows";
import type { adminTokens } from "../tables";

// admin_tokens: operator tokens, kept only as SHA-256 hashes.

type TokenRow = RowOf<typeof adminTokens>;
export type TokenView = Pick<TokenRow, "id" | "name" | "created_at" | "last_used_at" | "revoked_at">;

const VIEW = "SELECT id, name, created_at, last_used_at, revoked_at FROM admin_tokens";

export const activeTokenByHash = (q: Queryable, hash: string) =>
  q.get<Pick<TokenRow, "id" | "name" | "last_used_at">>("SELECT id, name, last_used_at FROM admin_tokens WHERE token_hash = ? AND revoked_at IS NULL", [hash]);

export async function tokenHashExists(q: Queryable, hash: string): Promise<boolean> {
  return (await q.get("SELECT 1 AS one FROM admin_tokens WHERE token_hash = ?", [hash])) !== null;
}

export async function touchToken(q: Queryable, id: number, atIso: string): Promise<void> {
  await q.run("UPDATE admin_tokens SET last_used_at = ? WHERE id = ?", [atIso, id]);
}

export async function insertToken(q: Queryable, name: string, hash: string, atIso: string): Promise<number> {
  return insertedId(q, "INSERT INTO admin_tokens (name, token_hash, created_at) VALUES (?, ?, ?) RETURNING id", [name, hash, atIso]);
}

export const listTokens = (q: Queryable) => q.all<TokenView>(`${VIEW} ORDER BY id`);

export const tokenById = (q: Queryable, id: number) => q.get<TokenView>(`${VIEW} WHERE id = ?`, [id]);

/** Revokes a live token; false when it was revoked already. */
export async function revokeToken(q: Queryable, id: number, atIso: string): Promise<boolean> {
  return changed(q, "UPDATE admin_tokens SET revoked_at = ? WHERE id = ? AND revoked_at IS NULL", [atIso, id]);
}

export const countTokens = (q: Queryable) => countOf(q, "SELECT count(*) AS n FROM admin_tokens");

/** Tokens that still open /admin (not revoked). */
export const countActiveTokens = (q: Queryable) => countOf(q, "SELECT count(*) AS n FROM admin_tokens WHERE revoked_at IS NULL");

/** Whether any token has ever been used: a bearer call or a console sign-in (both verify it, which writes last_used_at). */
export async function anyTokenUsed(q: Queryable): Promise<boolean> {
  return (await q.get("SELECT 1 AS one FROM admin_tokens WHERE last_used_at IS NOT NULL LIMIT 1")) !== null;
}
