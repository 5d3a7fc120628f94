import { type BatchBound, deleteInBatches } from "../db/batched-delete";
import type { Queryable, Store } from "../db/port";
import { clearTables } from "../db/sandbox-reset";
import { SANDBOX_DELETES, type SandboxTable, sandboxBatches, sandboxLocks } from "./deliveries-store";

// The webhooks domain's part of the sandbox reset (src/sandbox/reset.ts): only the owner of these tables deletes
// from them, children before parents (foreign keys are on); the statements name mode = 'sandbox' as a literal
// (deliveries-store.ts), so whatever partner this is handed, it cannot delete a live row.

/**
 * The bulk of the partner's sandbox deliveries, their attempts and its events, in bounded batches before the reset's
 * transaction (docs/storage-port.md "Bulk deletes: in batches"): `store` is the store itself, never a transaction's
 * handle. The rows deleted per table; webhooks are left to clearSandboxWebhooks.
 */
export async function deleteSandboxWebhooksInBatches(store: Store, partner: string, bound: BatchBound): Promise<Partial<Record<SandboxTable, number>>> {
  const [deliveries, events] = sandboxBatches(partner);
  const d = await deleteInBatches(store, { ...deliveries!, ...bound });
  const e = await deleteInBatches(store, { ...events!, ...bound });
  return { webhook_attempts: d.children.webhook_attempts ?? 0, webhook_deliveries: d.deleted, events: e.deleted };
}

/**
 * Deletes what remains of the partner's sandbox webhooks, their events, deliveries and delivery attempts, with the
 * reset's transaction handle `t`: after the batches, only its webhooks and what was written meanwhile. The rows
 * deleted per table.
 */
export async function clearSandboxWebhooks(t: Queryable, partner: string): Promise<Record<SandboxTable, number>> {
  // What the dispatcher could add under the deletes is locked first (deliveries-store.ts, on PostgreSQL).
  for (const sql of sandboxLocks(t.dialect)) await t.all(sql, [partner]);
  return clearTables(t, SANDBOX_DELETES, [partner]);
}
