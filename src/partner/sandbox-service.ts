import { type BatchBound, deleteInBatches } from "../db/batched-delete";
import type { Queryable, Store } from "../db/port";
import { SANDBOX_DELETES as DELETES, sandboxDeletesOf, sandboxUserIds, sandboxUserIdsAfter, sandboxWalletsBatch } from "./store/users";

// The partner domain's part of the sandbox reset (src/sandbox/reset.ts): only the owner of these tables deletes
// from them. Children before parents (foreign keys are on). Every statement names mode = 'sandbox' as a LITERAL,
// never a bound parameter: whatever partner this is handed, it cannot delete a live row.

type Cleared = Record<"wallet_links" | "partner_users", number>;

/** The reset's walk over the partner's sandbox users (src/sandbox/reset-batches.ts), and the users left for its transaction. */
export { sandboxUserIds, sandboxUserIdsAfter };

/** The bulk of the partner's sandbox wallet links, in bounded batches before the reset's transaction (`store`, never a handle). */
export async function deleteSandboxWalletsInBatches(store: Store, partner: string, bound: BatchBound): Promise<Pick<Cleared, "wallet_links">> {
  return { wallet_links: (await deleteInBatches(store, { ...sandboxWalletsBatch(partner), ...bound })).deleted };
}

/**
 * Deletes these sandbox users of the partner and what remains of their wallets, with transaction handle `t`, whose
 * other owners have deleted the users' rows first (src/sandbox/reset-batches.ts); the rows deleted per table.
 */
export async function clearSandboxUsersOf(t: Queryable, partner: string, userIds: readonly number[]): Promise<Cleared> {
  const deleted: Cleared = { wallet_links: 0, partner_users: 0 };
  if (userIds.length === 0) return deleted;
  const { params, deletes } = sandboxDeletesOf(t.dialect, partner, userIds);
  for (const [table, sql] of deletes) deleted[table] = (await t.run(sql, params)).changes;
  return deleted;
}

/** Deletes what remains of the partner's sandbox users and their wallet links with the reset's transaction handle `t`; the rows deleted per table. */
export async function clearSandboxUsers(t: Queryable, partner: string): Promise<Cleared> {
  const deleted = {} as Cleared;
  for (const [table, sql] of DELETES) deleted[table] = (await t.run(sql, [partner])).changes;
  return deleted;
}
