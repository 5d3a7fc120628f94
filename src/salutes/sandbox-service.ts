import type { BatchBound } from "../db/batched-delete";
import type { Queryable, Store } from "../db/port";
import { clearTables, deleteTablesInBatches } from "../db/sandbox-reset";
import { sandboxBatchesOf, sandboxDeletesOf } from "./store/ledger";

// The salutes domain's part of the sandbox reset (src/sandbox/reset.ts): only the owner of these tables deletes
// from them. Children before parents (foreign keys are on). Every statement names mode = 'sandbox' as a LITERAL,
// never a bound parameter: whatever partner or users this is handed, it cannot delete a live row. The rows go by
// their users' ids (store/ledger.ts says why), which the partner domain lists for the reset.

/**
 * The bulk of these sandbox users' practice conversions and ledger entries, in bounded batches before the reset's
 * transaction. Their balances stay until their users go (clearSandboxSalutes).
 */
export async function deleteSandboxSalutesInBatches(store: Store, partner: string, userIds: readonly number[], bound: BatchBound) {
  if (userIds.length === 0) return {};
  return await deleteTablesInBatches(store, sandboxBatchesOf(store.dialect, partner, userIds), bound);
}

/**
 * Deletes what remains of these sandbox users' practice ledger, balances and conversions (the one place ledger rows
 * are deleted) with the reset's transaction handle `t`; the rows deleted per table.
 */
export async function clearSandboxSalutes(t: Queryable, partner: string, userIds: readonly number[]) {
  if (userIds.length === 0) return {};
  const { params, deletes } = sandboxDeletesOf(t.dialect, partner, userIds);
  return await clearTables(t, deletes, params);
}
