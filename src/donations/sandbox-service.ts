import type { Database } from "bun:sqlite";

// The donations domain's part of the sandbox reset (src/sandbox/reset.ts): only the owner of these tables deletes
// from them. Children before parents (foreign keys are on). Every statement names mode = 'sandbox' as a LITERAL,
// never a bound parameter: whatever partner this is handed, it cannot delete a live row.

const DELETES: ReadonlyArray<readonly [table: "donation_claims", sql: string]> = [
  ["donation_claims", "DELETE FROM donation_claims WHERE partner = ?1 AND mode = 'sandbox'"],
];

/** Deletes the partner's sandbox donation claims; the rows deleted per table. Runs inside the caller's transaction. */
export function clearSandboxDonations(db: Database, partner: string): Record<"donation_claims", number> {
  const deleted = {} as Record<"donation_claims", number>;
  for (const [table, sql] of DELETES) deleted[table] = db.query(sql).run(partner).changes;
  return deleted;
}
