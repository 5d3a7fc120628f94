import { type BatchBound, type BatchedDeleteResult, deleteInBatches, SCATTERED_BATCH_ROWS } from "../../db/batched-delete";
import type { Queryable, Store } from "../../db/port";
import type { RowOf } from "../../db/rows";
import type { idempotencyRecords } from "../tables";

// idempotency_records (docs/design.md §4): the only SQL that touches it; the claim-first rule is IdempotencyStore's.

export type IdempotencyRow = Pick<
  RowOf<typeof idempotencyRecords>,
  "fingerprint" | "state" | "response_status" | "response_body" | "locked_until" | "expires_at"
>;

export interface ClaimRow {
  keyId: string;
  key: string;
  fingerprint: string;
  nowIso: string;
  lockedUntil: string | null;
  expiresAt: string;
}

/** Inserts the claim as in progress; false when a row for the key exists (answer from it, or take it over). */
export async function insertClaim(q: Queryable, c: ClaimRow): Promise<boolean> {
  const r = await q.run(
    `INSERT INTO idempotency_records (key_id, idempotency_key, fingerprint, state, created_at, locked_until, expires_at)
     VALUES (?, ?, ?, 'in_progress', ?, ?, ?) ON CONFLICT (key_id, idempotency_key) DO NOTHING`,
    [c.keyId, c.key, c.fingerprint, c.nowIso, c.lockedUntil, c.expiresAt],
  );
  return r.changes === 1;
}

export const recordOf = (q: Queryable, keyId: string, key: string) =>
  q.get<IdempotencyRow>(
    "SELECT fingerprint, state, response_status, response_body, locked_until, expires_at FROM idempotency_records WHERE key_id = ? AND idempotency_key = ?",
    [keyId, key],
  );

/**
 * Takes over a row that no longer binds the key: expired, or an in-progress claim whose lock lapsed (its process
 * died). Conditional, so two takers cannot both win.
 */
export async function takeOverClaim(q: Queryable, c: ClaimRow): Promise<boolean> {
  const r = await q.run(
    `UPDATE idempotency_records SET fingerprint = ?, state = 'in_progress', response_status = NULL, response_body = NULL, created_at = ?, locked_until = ?, expires_at = ?
     WHERE key_id = ? AND idempotency_key = ? AND (expires_at <= ? OR (state = 'in_progress' AND locked_until <= ?))`,
    [c.fingerprint, c.nowIso, c.lockedUntil, c.expiresAt, c.keyId, c.key, c.nowIso, c.nowIso],
  );
  return r.changes === 1;
}

/**
 * The stored answer: the key now replays it. Its time and expiry stay the claim's (set in the same transaction),
 * so the expiry index is not written twice for every request.
 */
export async function completeClaim(q: Queryable, c: { keyId: string; key: string; status: number; body: string }): Promise<void> {
  await q.run(
    "UPDATE idempotency_records SET state = 'completed', response_status = ?, response_body = ?, locked_until = NULL WHERE key_id = ? AND idempotency_key = ?",
    [c.status, c.body, c.keyId, c.key],
  );
}

/** Drops an in-progress claim whose effect failed, so a retry with the key can run. */
export async function releaseClaim(q: Queryable, keyId: string, key: string): Promise<void> {
  await q.run("DELETE FROM idempotency_records WHERE key_id = ? AND idempotency_key = ? AND state = 'in_progress'", [keyId, key]);
}

/**
 * Expired records whose claim is over, in bounded batches down idempotency_expires_idx (src/db/batched-delete.ts), of
 * 500: the primary key is the client's Idempotency-Key, so every row deleted changes another page of it
 * (SCATTERED_BATCH_ROWS). An expired claim still in progress is passed over until its lock runs out.
 */
export function pruneIdempotency(store: Store, nowIso: string, bound: BatchBound = {}): Promise<BatchedDeleteResult> {
  return deleteInBatches(store, {
    table: "idempotency_records",
    where: "expires_at <= ? AND (state = 'completed' OR locked_until <= ?)",
    params: [nowIso, nowIso],
    batchRows: SCATTERED_BATCH_ROWS,
    ...bound,
  });
}
