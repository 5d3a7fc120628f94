import type { Database } from "bun:sqlite";

// The partner domain's part of the sandbox reset (src/sandbox/reset.ts): only the owner of these tables deletes
// from them. Children before parents (foreign keys are on). Every statement names mode = 'sandbox' as a LITERAL,
// never a bound parameter: whatever partner this is handed, it cannot delete a live row.

const DELETES: ReadonlyArray<readonly [table: "wallet_links" | "partner_users", sql: string]> = [
  ["wallet_links", "DELETE FROM wallet_links WHERE partner = ?1 AND mode = 'sandbox'"],
  ["partner_users", "DELETE FROM partner_users WHERE partner = ?1 AND mode = 'sandbox'"],
];

/** Deletes the partner's sandbox users and their wallet links; the rows deleted per table. Runs inside the caller's transaction. */
export function clearSandboxUsers(db: Database, partner: string): Record<"wallet_links" | "partner_users", number> {
  const deleted = {} as Record<"wallet_links" | "partner_users", number>;
  for (const [table, sql] of DELETES) deleted[table] = db.query(sql).run(partner).changes;
  return deleted;
}
