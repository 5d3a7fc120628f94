import type { AdminRequest } from "../../auth/admin-plugin";
import { recordAudit } from "../../auth/audit";
import type { Queryable } from "../../db/port";

/** The admin_audit row of an operator's change to a status record, written in the change's own transaction. */
export const auditChange = (t: Queryable, admin: AdminRequest, at: string, action: string, id: number, details: Record<string, unknown>) =>
  recordAudit(t, { at, actor: admin.actor, action, target: String(id), details, requestId: admin.requestId });
