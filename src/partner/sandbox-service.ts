import type { Queryable } from "../db/port";
import { SANDBOX_DELETES as DELETES } from "./store/users";

// The partner domain's part of the sandbox reset (src/sandbox/reset.ts): only the owner of these tables deletes
// from them. Children before parents (foreign keys are on). Every statement names mode = 'sandbox' as a LITERAL,
// never a bound parameter: whatever partner this is handed, it cannot delete a live row.

/** Deletes the partner's sandbox users and their wallet links with the reset's transaction handle `t`; the rows deleted per table. */
export async function clearSandboxUsers(t: Queryable, partner: string): Promise<Record<"wallet_links" | "partner_users", number>> {
  const deleted = {} as Record<"wallet_links" | "partner_users", number>;
  for (const [table, sql] of DELETES) deleted[table] = (await t.run(sql, [partner])).changes;
  return deleted;
}
