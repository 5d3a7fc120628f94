import { type BatchBound, deleteInBatches } from "../db/batched-delete";
import type { Queryable, Store } from "../db/port";
import { type SandboxSalutesTable, sandboxBatchesOf, sandboxDeletesOf } from "./store/ledger";

// The salutes domain's part of the sandbox reset (src/sandbox/reset.ts): only the owner of these tables deletes
// from them. Children before parents (foreign keys are on). Every statement names mode = 'sandbox' as a LITERAL,
// never a bound parameter: whatever partner or users this is handed, it cannot delete a live row. The rows go by
// their users' ids (store/ledger.ts says why), which the partner domain lists for the reset.

type Cleared = Record<SandboxSalutesTable, number>;

/**
 * The bulk of these sandbox users' practice conversions and ledger entries, in bounded batches before the reset's
 * transaction (`store` itself, never a transaction's handle: the batches commit one by one). Their balances stay
 * until their users go (clearSandboxSalutes). The rows deleted per table.
 */
export async function deleteSandboxSalutesInBatches(store: Store, partner: string, userIds: readonly number[], bound: BatchBound): Promise<Partial<Cleared>> {
  if (userIds.length === 0) return {};
  const [conversions, ledger] = sandboxBatchesOf(store.dialect, partner, userIds);
  const c = await deleteInBatches(store, { ...conversions!, ...bound });
  const l = await deleteInBatches(store, { ...ledger!, ...bound });
  return { salutes_conversions: c.deleted, salutes_ledger: l.deleted };
}

/**
 * Deletes what remains of these sandbox users' practice ledger, balances and conversions (the one place ledger rows
 * are deleted) with the reset's transaction handle `t`; the rows deleted per table.
 */
export async function clearSandboxSalutes(t: Queryable, partner: string, userIds: readonly number[]): Promise<Cleared> {
  const deleted: Cleared = { salutes_conversions: 0, salutes_ledger: 0, salutes_balances: 0 };
  if (userIds.length === 0) return deleted;
  const { params, deletes } = sandboxDeletesOf(t.dialect, partner, userIds);
  for (const [table, sql] of deletes) deleted[table] = (await t.run(sql, params)).changes;
  return deleted;
}
