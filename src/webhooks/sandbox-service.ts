import type { Database } from "bun:sqlite";

// The webhooks domain's part of the sandbox reset (src/sandbox/reset.ts): only the owner of these tables deletes
// from them. Children before parents (foreign keys are on). Every statement names mode = 'sandbox' as a LITERAL,
// never a bound parameter: whatever partner this is handed, it cannot delete a live row.

const DELETES: ReadonlyArray<readonly [table: "webhook_attempts" | "webhook_deliveries" | "events" | "webhooks", sql: string]> = [
  ["webhook_attempts", "DELETE FROM webhook_attempts WHERE delivery_id IN (SELECT id FROM webhook_deliveries WHERE partner = ?1 AND mode = 'sandbox')"],
  ["webhook_deliveries", "DELETE FROM webhook_deliveries WHERE partner = ?1 AND mode = 'sandbox'"],
  ["events", "DELETE FROM events WHERE partner = ?1 AND mode = 'sandbox'"],
  ["webhooks", "DELETE FROM webhooks WHERE partner = ?1 AND mode = 'sandbox'"],
];

/** Deletes the partner's sandbox webhooks, their events, deliveries and delivery attempts; the rows deleted per table. Runs inside the caller's transaction. */
export function clearSandboxWebhooks(db: Database, partner: string): Record<"webhook_attempts" | "webhook_deliveries" | "events" | "webhooks", number> {
  const deleted = {} as Record<"webhook_attempts" | "webhook_deliveries" | "events" | "webhooks", number>;
  for (const [table, sql] of DELETES) deleted[table] = db.query(sql).run(partner).changes;
  return deleted;
}
