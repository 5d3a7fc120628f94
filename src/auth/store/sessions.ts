import { type BatchBound, type BatchedDeleteResult, deleteInBatches } from "../../db/batched-delete";
import { changed, type Queryable, type Store } from "../../db/port";
import type { RowOf } from "../../db/rows";
import type { adminSessions } from "../tables";

// admin_sessions (with the name and state of the token each was opened with).

export type SessionRow = RowOf<typeof adminSessions> & { token_name: string; token_revoked_at: string | null };

const SELECT = `SELECT s.session_hash, s.csrf_hash, s.admin_token_id, t.name AS token_name, t.revoked_at AS token_revoked_at,
  s.created_at, s.expires_at, s.last_seen_at, s.revoked_at, s.client_ip, s.user_agent
  FROM admin_sessions s JOIN admin_tokens t ON t.id = s.admin_token_id`;

export const sessionByHash = (q: Queryable, hash: string) => q.get<SessionRow>(`${SELECT} WHERE s.session_hash = ?`, [hash]);

/** By public handle: the first characters of the hash (a prefix match, served by the primary key). */
export const sessionByHandle = (q: Queryable, handle: string) =>
  q.get<SessionRow>(`${SELECT} WHERE s.session_hash >= ? AND s.session_hash < ? ORDER BY s.session_hash LIMIT 1`, [handle, `${handle}g`]);

/**
 * A page of sessions, newest first (then by hash), LIMIT `limit`: after `after` (the previous page's last row: its
 * created_at and public handle) or from `offset`. The handle is the hash's first 16 hex digits, so `handle || 'g'`
 * sorts after every hash that starts with it and before every later one: the cursor never holds the whole hash.
 */
export function sessionsPage(q: Queryable, p: { after: { createdAt: string; handle: string } | null; limit: number; offset: number }) {
  const order = "ORDER BY s.created_at DESC, s.session_hash";
  if (p.after === null) return q.all<SessionRow>(`${SELECT} ${order} LIMIT ? OFFSET ?`, [p.limit, p.offset]);
  const { createdAt, handle } = p.after;
  return q.all<SessionRow>(`${SELECT} WHERE s.created_at < ? OR (s.created_at = ? AND s.session_hash > ?) ${order} LIMIT ?`, [
    createdAt,
    createdAt,
    `${handle}g`,
    p.limit,
  ]);
}

export async function insertSession(
  q: Queryable,
  s: { hash: string; csrfHash: string; tokenId: number; at: string; expiresAt: string; ip: string | null; userAgent: string | null },
): Promise<void> {
  await q.run(
    `INSERT INTO admin_sessions (session_hash, csrf_hash, admin_token_id, created_at, expires_at, last_seen_at, client_ip, user_agent)
     VALUES (?, ?, ?, ?, ?, ?, ?, ?)`,
    [s.hash, s.csrfHash, s.tokenId, s.at, s.expiresAt, s.at, s.ip, s.userAgent],
  );
}

export async function touchSession(q: Queryable, hash: string, atIso: string): Promise<void> {
  await q.run("UPDATE admin_sessions SET last_seen_at = ? WHERE session_hash = ?", [atIso, hash]);
}

export async function revokeSession(q: Queryable, hash: string, atIso: string): Promise<boolean> {
  return changed(q, "UPDATE admin_sessions SET revoked_at = ? WHERE session_hash = ? AND revoked_at IS NULL", [atIso, hash]);
}

/** Ends the live sessions opened with a token (it was revoked); how many. */
export async function revokeSessionsOfToken(q: Queryable, tokenId: number, atIso: string): Promise<number> {
  return (await q.run("UPDATE admin_sessions SET revoked_at = ? WHERE admin_token_id = ? AND revoked_at IS NULL AND expires_at > ?", [atIso, tokenId, atIso]))
    .changes;
}

/**
 * Expired sessions and those revoked before `revokedBeforeIso`, in bounded batches (src/db/batched-delete.ts). Each
 * side of the OR has its index (admin_sessions_expires_idx, admin_sessions_revoked_idx): no batch scans the table.
 */
export function pruneSessions(store: Store, nowIso: string, revokedBeforeIso: string, bound: BatchBound = {}): Promise<BatchedDeleteResult> {
  return deleteInBatches(store, { table: "admin_sessions", where: "expires_at <= ? OR revoked_at <= ?", params: [nowIso, revokedBeforeIso], ...bound });
}
