import type { Database } from "bun:sqlite";

// The salutes domain's part of the sandbox reset (src/sandbox/reset.ts): only the owner of these tables deletes
// from them. Children before parents (foreign keys are on). Every statement names mode = 'sandbox' as a LITERAL,
// never a bound parameter: whatever partner this is handed, it cannot delete a live row.

const DELETES: ReadonlyArray<readonly [table: "salutes_conversions" | "salutes_ledger" | "salutes_balances", sql: string]> = [
  ["salutes_conversions", "DELETE FROM salutes_conversions WHERE partner = ?1 AND mode = 'sandbox'"],
  ["salutes_ledger", "DELETE FROM salutes_ledger WHERE partner = ?1 AND mode = 'sandbox'"],
  ["salutes_balances", "DELETE FROM salutes_balances WHERE partner = ?1 AND mode = 'sandbox'"],
];

/** Deletes the partner's sandbox practice ledger, balances and conversions (the one place ledger rows are deleted); the rows deleted per table. Runs inside the caller's transaction. */
export function clearSandboxSalutes(db: Database, partner: string): Record<"salutes_conversions" | "salutes_ledger" | "salutes_balances", number> {
  const deleted = {} as Record<"salutes_conversions" | "salutes_ledger" | "salutes_balances", number>;
  for (const [table, sql] of DELETES) deleted[table] = db.query(sql).run(partner).changes;
  return deleted;
}
