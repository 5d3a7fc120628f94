import { type BatchBound, type BatchedDeleteResult, deleteInBatches, SCATTERED_BATCH_ROWS } from "../../db/batched-delete";
import type { Queryable, Store } from "../../db/port";

// partner_nonces: single-use nonces per key. The primary key makes "use" atomic on both engines: of two
// concurrent requests with one nonce (on one instance or two), exactly one inserts it.

/** Records the nonce until `expiresIso`; false when it is in use (an expired row with the same nonce is reused). */
export async function useNonce(q: Queryable, keyId: string, nonce: string, expiresIso: string, nowIso: string): Promise<boolean> {
  const r = await q.run(
    `INSERT INTO partner_nonces (key_id, nonce, expires_at) VALUES (?, ?, ?)
     ON CONFLICT (key_id, nonce) DO UPDATE SET expires_at = excluded.expires_at WHERE partner_nonces.expires_at <= ?`,
    [keyId, nonce, expiresIso, nowIso],
  );
  return r.changes === 1;
}

/**
 * Expired nonces, in bounded batches down partner_nonces_expires_idx (src/db/batched-delete.ts), of 500: the primary
 * key is a random nonce, so every row deleted changes another page of it (SCATTERED_BATCH_ROWS).
 */
export function pruneNonces(store: Store, nowIso: string, bound: BatchBound = {}): Promise<BatchedDeleteResult> {
  return deleteInBatches(store, { table: "partner_nonces", where: "expires_at <= ?", params: [nowIso], batchRows: SCATTERED_BATCH_ROWS, ...bound });
}
