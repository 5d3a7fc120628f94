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

/**
 * Bumps the version: call inside the transaction of the change. On PostgreSQL the upsert takes the row's lock until
 * that transaction ends, so transactions that bump FIRST are serialised across instances — the audit run's start
 * and completion rely on it (src/transparency/audit/audit-run.ts).
 */
export async function bumpState(t: Queryable, now: string): Promise<void> {
  await t.run(
    "INSERT INTO audit_state (id, version, changed_at) VALUES (1, 1, ?) ON CONFLICT (id) DO UPDATE SET version = audit_state.version + 1, changed_at = excluded.changed_at",
    [now],
  );
}

/** The state; null before the first answer or change recorded one (startState). */
export async function readState(q: Queryable): Promise<AuditState | null> {
  const row = await q.get<StateRow>("SELECT version, changed_at FROM audit_state WHERE id = 1");
  return row ? { version: row.version, changedAt: row.changed_at } : null;
}

/**
 * Before any audit data exists: records `now` as the time the (empty) audit data began, version 0, so answers carry
 * a real generated_at_utc and Last-Modified rather than 1970. Written once per database; an instance that loses
 * the race reads the winner's time. The first change moves the version to 1 as bumpState always does.
 */
export async function startState(q: Queryable, now: string): Promise<AuditState> {
  await q.run("INSERT INTO audit_state (id, version, changed_at) VALUES (1, 0, ?) ON CONFLICT (id) DO NOTHING", [now]);
  return (await readState(q)) ?? { version: 0, changedAt: now };
}
