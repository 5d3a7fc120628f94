import type { BatchBound } from "../db/batched-delete";
import type { Queryable, Store } from "../db/port";
import { clearTables, deleteTablesInBatches } from "../db/sandbox-reset";
import { SANDBOX_DELETES, sandboxDeletesOf, sandboxUserIds, sandboxUserIdsAfter, sandboxWalletsBatch } from "./store/users";

// The partner domain's part of the sandbox reset (src/sandbox/reset.ts): only the owner of these tables deletes
// from them. Children before parents (foreign keys are on). Every statement names mode = 'sandbox' as a LITERAL,
// never a bound parameter: whatever partner this is handed, it cannot delete a live row.

/** The reset's walk over the partner's sandbox users (src/sandbox/reset-batches.ts), and the users left for its transaction. */
export { sandboxUserIds, sandboxUserIdsAfter };

/** The bulk of the partner's sandbox wallet links, in bounded batches before the reset's transaction. */
export const deleteSandboxWalletsInBatches = (store: Store, partner: string, bound: BatchBound) =>
  deleteTablesInBatches(store, [sandboxWalletsBatch(partner)], bound);

/**
 * Deletes these sandbox users of the partner and what remains of their wallets, with transaction handle `t`, whose
 * other owners have deleted the users' rows first (src/sandbox/reset-batches.ts); the rows deleted per table.
 */
export async function clearSandboxUsersOf(t: Queryable, partner: string, userIds: readonly number[]) {
  if (userIds.length === 0) return {};
  const { params, deletes } = sandboxDeletesOf(t.dialect, partner, userIds);
  return await clearTables(t, deletes, params);
}

/** What remains of the partner's sandbox users and their wallet links, with the reset's transaction handle `t`. */
export const clearSandboxUsers = (t: Queryable, partner: string) => clearTables(t, SANDBOX_DELETES, [partner]);
