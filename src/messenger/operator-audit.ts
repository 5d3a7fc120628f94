import type { AdminRequest } from "../auth/admin-plugin";
import { recordAudit } from "../auth/audit";
import type { Queryable } from "../db/port";

/** An operator's change to the messenger, audited in the change's own transaction (a failed insert rolls it back). */
export const auditOperator = (t: Queryable, admin: AdminRequest, at: string, action: string, target: string, details: Record<string, unknown>) =>
  recordAudit(t, { at, actor: admin.actor, action, target, details, requestId: admin.requestId });
