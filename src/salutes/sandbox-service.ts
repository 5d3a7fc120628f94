import type { Queryable } from "../db/port";
import { SANDBOX_DELETES as DELETES } from "./store/ledger";

// The salutes domain's part of the sandbox reset (src/sandbox/reset.ts): only the owner of these tables deletes
// from them. Children before parents (foreign keys are on). Every statement names mode = 'sandbox' as a LITERAL,
// never a bound parameter: whatever partner this is handed, it cannot delete a live row.

type Cleared = Record<"salutes_conversions" | "salutes_ledger" | "salutes_balances", number>;

/**
 * Deletes the partner's sandbox practice ledger, balances and conversions (the one place ledger rows are deleted)
 * with the reset's transaction handle `t`; the rows deleted per table.
 */
export async function clearSandboxSalutes(t: Queryable, partner: string): Promise<Cleared> {
  const deleted = {} as Cleared;
  for (const [table, sql] of DELETES) deleted[table] = (await t.run(sql, [partner])).changes;
  return deleted;
}
