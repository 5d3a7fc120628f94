import type { Database } from "bun:sqlite";
import { actorLabel, type Actor } from "./actors";

export interface AuditEntry {
  at: string;
  actor: Actor;
  action: string;
  target?: string | null;
  details?: Record<string, unknown>;
  requestId?: string | null;
}

/** Call inside the mutation's own transaction: a failed audit insert rolls the mutation back (fail-closed). */
export function writeAudit(sqlite: Database, e: AuditEntry): void {
  sqlite
    .query("INSERT INTO admin_audit (at, actor, action, target, details, request_id) VALUES (?, ?, ?, ?, ?, ?)")
    .run(e.at, actorLabel(e.actor), e.action, e.target ?? null, e.details ? JSON.stringify(e.details) : null, e.requestId ?? null);
}
