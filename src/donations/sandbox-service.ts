import { type BatchBound, deleteInBatches } from "../db/batched-delete";
import type { Queryable, Store } from "../db/port";
import { SANDBOX_DELETES as DELETES, sandboxBatch } from "./store";

// The donations domain's part of the sandbox reset (src/sandbox/reset.ts): only the owner of these tables deletes
// from them. Children before parents (foreign keys are on). Every statement names mode = 'sandbox' as a LITERAL,
// never a bound parameter: whatever partner this is handed, it cannot delete a live row.

/** The bulk of the partner's sandbox donation claims, in bounded batches before the reset's transaction (`store`, never a handle). */
export async function deleteSandboxDonationsInBatches(store: Store, partner: string, bound: BatchBound): Promise<Record<"donation_claims", number>> {
  return { donation_claims: (await deleteInBatches(store, { ...sandboxBatch(partner), ...bound })).deleted };
}

/** Deletes what remains of the partner's sandbox donation claims with the reset's transaction handle `t`; the rows deleted per table. */
export async function clearSandboxDonations(t: Queryable, partner: string): Promise<Record<"donation_claims", number>> {
  const deleted = {} as Record<"donation_claims", number>;
  for (const [table, sql] of DELETES) deleted[table] = (await t.run(sql, [partner])).changes;
  return deleted;
}
