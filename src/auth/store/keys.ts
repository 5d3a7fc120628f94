import { countOf, type Queryable } from "../../db/port";
import type { RowOf } from "../../db/rows";
import type { partnerKeys } from "../tables";

// partner_keys and partner_keys_version: the only SQL that touches them (docs/design.md §8a). Every change to
// partner_keys bumps partner_keys_version by trigger, on both engines (drizzle/0008, drizzle/postgres/0001).

export type KeyRow = RowOf<typeof partnerKeys>;

export const keyById = (q: Queryable, keyId: string) => q.get<KeyRow>("SELECT * FROM partner_keys WHERE key_id = ?", [keyId]);

export async function keysVersion(q: Queryable): Promise<number | null> {
  return (await q.get<{ version: number }>("SELECT version FROM partner_keys_version WHERE id = 1"))?.version ?? null;
}

export async function touchKey(q: Queryable, keyId: string, atIso: string): Promise<void> {
  await q.run("UPDATE partner_keys SET last_used_at = ? WHERE key_id = ?", [atIso, keyId]);
}

export async function insertKey(
  q: Queryable,
  k: { keyId: string; partner: string; mode: string; scopes: string; allowedIps: string; secretCiphertext: string; at: string },
): Promise<void> {
  await q.run(
    "INSERT INTO partner_keys (key_id, partner, mode, scopes, allowed_ips, status, secret_ciphertext, created_at, updated_at) VALUES (?, ?, ?, ?, ?, 'active', ?, ?, ?)",
    [k.keyId, k.partner, k.mode, k.scopes, k.allowedIps, k.secretCiphertext, k.at, k.at],
  );
}

/** The key lists' filters (a null one matches every key), and their parameters. */
type KeyFilter = { partner: string | null; mode: string | null; status: string | null };
const FILTERS = "(CAST(? AS text) IS NULL OR partner = ?) AND (CAST(? AS text) IS NULL OR mode = ?) AND (CAST(? AS text) IS NULL OR status = ?)";
const filterArgs = (f: KeyFilter) => [f.partner, f.partner, f.mode, f.mode, f.status, f.status];

export const listKeys = (q: Queryable, f: KeyFilter) => q.all<KeyRow>(`SELECT * FROM partner_keys WHERE ${FILTERS} ORDER BY created_at, key_id`, filterArgs(f));

/**
 * A page of keys in the list's order (oldest first, then by id), LIMIT `limit`: after `after` (the previous page's
 * last key: its created_at and key_id) or from `offset`.
 */
export function keysPage(q: Queryable, f: KeyFilter, p: { after: { createdAt: string; keyId: string } | null; limit: number; offset: number }) {
  if (p.after === null)
    return q.all<KeyRow>(`SELECT * FROM partner_keys WHERE ${FILTERS} ORDER BY created_at, key_id LIMIT ? OFFSET ?`, [...filterArgs(f), p.limit, p.offset]);
  return q.all<KeyRow>(
    `SELECT * FROM partner_keys WHERE ${FILTERS} AND (created_at > ? OR (created_at = ? AND key_id > ?)) ORDER BY created_at, key_id LIMIT ?`,
    [...filterArgs(f), p.after.createdAt, p.after.createdAt, p.after.keyId, p.limit],
  );
}

/** Disables an active key; false when it was disabled already (by another request or instance). */
export async function disableKey(q: Queryable, keyId: string, reason: string, atIso: string): Promise<boolean> {
  const r = await q.run("UPDATE partner_keys SET status = 'disabled', disabled_reason = ?, updated_at = ? WHERE key_id = ? AND status = 'active'", [
    reason,
    atIso,
    keyId,
  ]);
  return r.changes === 1;
}

/**
 * A new secret; the old one stays valid until `previousValidUntil` (null: no overlap). Conditional on the secret
 * the caller read, so two rotations racing cannot both keep "the previous" secret: the second finds it changed.
 */
export async function rotateKey(
  q: Queryable,
  k: { keyId: string; expectedCiphertext: string; secretCiphertext: string; previousCiphertext: string | null; previousValidUntil: string | null; at: string },
): Promise<boolean> {
  const r = await q.run(
    `UPDATE partner_keys SET secret_ciphertext = ?, previous_secret_ciphertext = ?, previous_secret_valid_until = ?, updated_at = ?
     WHERE key_id = ? AND secret_ciphertext = ? AND status = 'active'`,
    [k.secretCiphertext, k.previousCiphertext, k.previousValidUntil, k.at, k.keyId, k.expectedCiphertext],
  );
  return r.changes === 1;
}

export const countKeys = (q: Queryable) => countOf(q, "SELECT count(*) AS n FROM partner_keys");

/** Whether any key has ever made a signed call (its first one writes last_used_at at once). */
export async function anyKeyUsed(q: Queryable): Promise<boolean> {
  return (await q.get("SELECT 1 AS one FROM partner_keys WHERE last_used_at IS NOT NULL LIMIT 1")) !== null;
}
