import type { Database } from "bun:sqlite";

// audit_state: one row whose version and time move with every change to the audit data (a run starting or
// completing, a declaration, a threshold, a triage). Readers take Last-Modified from it; the answer cache of
// src/transparency/http-cache.ts keys on its version, so a change made by another process is seen at once.

export interface AuditState {
  version: number;
  changedAt: string;
}

const EPOCH = "1970-01-01T00:00:00.000Z";

/** Call inside the transaction of the change. */
export function bumpState(sqlite: Database, now: string): void {
  sqlite
    .query(
      "INSERT INTO audit_state (id, version, changed_at) VALUES (1, 1, ?1) ON CONFLICT (id) DO UPDATE SET version = audit_state.version + 1, changed_at = ?1",
    )
    .run(now);
}

export function readState(sqlite: Database): AuditState {
  const row = sqlite.query("SELECT version, changed_at FROM audit_state WHERE id = 1").get() as { version: number; changed_at: string } | null;
  return row ? { version: row.version, changedAt: row.changed_at } : { version: 0, changedAt: EPOCH };
}
