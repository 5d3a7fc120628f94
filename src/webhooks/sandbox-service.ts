import type { Queryable } from "../db/port";
import { SANDBOX_DELETES, type SandboxTable, sandboxLocks } from "./deliveries-store";

// The webhooks domain's part of the sandbox reset (src/sandbox/reset.ts): only the owner of these tables deletes
// from them, children before parents (foreign keys are on); the statements name mode = 'sandbox' as a literal
// (deliveries-store.ts), so whatever partner this is handed, it cannot delete a live row.

/** Deletes the partner's sandbox webhooks, their events, deliveries and delivery attempts, with the reset's transaction handle `t`; the rows deleted per table. */
export async function clearSandboxWebhooks(t: Queryable, partner: string): Promise<Record<SandboxTable, number>> {
  const deleted = {} as Record<SandboxTable, number>;
  // What the dispatcher could add under the deletes is locked first (deliveries-store.ts, on PostgreSQL).
  for (const sql of sandboxLocks(t.dialect)) await t.all(sql, [partner]);
  for (const [table, sql] of SANDBOX_DELETES) deleted[table] = (await t.run(sql, [partner])).changes;
  return deleted;
}
