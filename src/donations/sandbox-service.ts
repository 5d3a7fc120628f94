import type { BatchBound } from "../db/batched-delete";
import type { Queryable, Store } from "../db/port";
import { clearTables, deleteTablesInBatches } from "../db/sandbox-reset";
import { SANDBOX_DELETES, sandboxBatch } from "./store";

// The donations domain's part of the sandbox reset (src/sandbox/reset.ts): only the owner of these tables deletes
// from them. Children before parents (foreign keys are on). Every statement names mode = 'sandbox' as a LITERAL,
// never a bound parameter: whatever partner this is handed, it cannot delete a live row.

/** The bulk of the partner's sandbox donation claims, in bounded batches before the reset's transaction. */
export const deleteSandboxDonationsInBatches = (store: Store, partner: string, bound: BatchBound) =>
  deleteTablesInBatches(store, [sandboxBatch(partner)], bound);

/** What remains of the partner's sandbox donation claims, with the reset's transaction handle `t`. */
export const clearSandboxDonations = (t: Queryable, partner: string) => clearTables(t, SANDBOX_DELETES, [partner]);
