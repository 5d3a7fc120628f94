import type { Queryable } from "../db/port";
import { actorLabel, type Actor } from "./actors";

export interface AuditEntry {
  at: string;
  actor: Actor;
  action: string;
  target?: string | null;
  details?: Record<string, unknown>;
  requestId?: string | null;
}

const INSERT_AUDIT = "INSERT INTO admin_audit (at, actor, action, target, details, request_id) VALUES (?, ?, ?, ?, ?, ?)";

/** Over the storage port, inside the mutation's own transaction: a failed audit insert rolls the mutation back (fail-closed). */
export async function recordAudit(q: Queryable, e: AuditEntry): Promise<void> {
  await q.run(INSERT_AUDIT, [e.at, actorLabel(e.actor), e.action, e.target ?? null, e.details ? JSON.stringify(e.details) : null, e.requestId ?? null]);
}

/**
 * An operator's change, audited in the change's own transaction where it has one (a failed insert rolls the change
 * back), by the actor and request id the admin guard proved (its AdminRequest, src/auth/admin-plugin.ts; named by
 * shape here, as that file imports this one) or a command's actor, without a request id.
 */
export const auditOperator = (
  t: Queryable,
  admin: { actor: Actor; requestId?: string | null },
  at: string,
  action: string,
  target: string,
  details: Record<string, unknown>,
) => recordAudit(t, { at, actor: admin.actor, action, target, details, requestId: admin.requestId });
