import type { Queryable } from "../../db/port";
import type { RowOf } from "../../db/rows";
import type { auditState } from "../tables";

// audit_state: one row (id 1) whose version and time move with every change to the audit data (a run starting,
// failing or completing, a declaration, a threshold, a triage). Readers take Last-Modified from it; the answer
// cache (src/transparency/http-cache.ts, through src/transparency/state.ts) keys on its version.

export interface AuditState {
  version: number;
  changedAt: string;
}

type StateRow = Pick<RowOf<typeof auditState>, "version" | "changed_at">;

const EPOCH = "1970-01-01T00:00:00.000Z";

/**
 * Bumps the version: call inside the transaction of the change. On PostgreSQL the upsert takes the row's lock until
 * that transaction ends, so transactions that bump FIRST are serialised across instances — the audit run's start
 * and completion rely on it (src/transparency/audit-run.ts).
 */
export async function bumpState(t: Queryable, now: string): Promise<void> {
  await t.run(
    "INSERT INTO audit_state (id, version, changed_at) VALUES (1, 1, ?) ON CONFLICT (id) DO UPDATE SET version = audit_state.version + 1, changed_at = excluded.changed_at",
    [now],
  );
}

export async function readState(q: Queryable): Promise<AuditState> {
  const row = await q.get<StateRow>("SELECT version, changed_at FROM audit_state WHERE id = 1");
  return row ? { version: row.version, changedAt: row.changed_at } : { version: 0, changedAt: EPOCH };
}
