import { type BatchBound, type BatchedDelete, deleteInBatches } from "./batched-delete";
import type { Param, Queryable, Store } from "./port";

// The shape of each domain's part of the sandbox reset (src/sandbox/reset-batches.ts, then src/sandbox/reset.ts):
// the bulk of its rows in bounded batches, then what remains in the reset's transaction. This file names no table:
// the SQL stays in the owning domain's store files, each statement naming mode = 'sandbox' as a literal.

/** Deletes each of `batches` in turn through `store` (the store itself, never a transaction's handle: the batches commit one by one); the rows deleted per table. */
export async function deleteTablesInBatches<T extends string>(store: Store, batches: ReadonlyArray<BatchedDelete & { table: T }>, bound: BatchBound) {
  const deleted = {} as Record<T, number>;
  for (const b of batches) deleted[b.table] = (await deleteInBatches(store, { ...b, ...bound })).deleted;
  return deleted;
}

/** Runs `deletes` in order, children before parents, each with `params`, through the reset's transaction handle `t`; the rows deleted per table. */
export async function clearTables<T extends string>(t: Queryable, deletes: ReadonlyArray<readonly [T, string]>, params: readonly Param[]) {
  const deleted = {} as Record<T, number>;
  for (const [table, sql] of deletes) deleted[table] = (await t.run(sql, params)).changes;
  return deleted;
}
