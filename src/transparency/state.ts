import type { AdminRequest } from "../auth/admin-plugin";
import { auditOperator } from "../auth/audit";
import { type AppContext, slot, stateOf } from "../context";
import { epochMs } from "../clock";
import type { Queryable } from "../db/port";
import { type AuditState, readState, startState } from "./store/state";

// The audit data's version and time (audit_state, src/transparency/store/state.ts) as every transparency answer
// reads it: from memory, re-read from the database at most every STATE_POLL_MS. A change made through this
// process's verbs drops the remembered state at once (auditStateChanged), so its own next request sees it; a
// change made by ANOTHER instance on the same database is seen within STATE_POLL_MS, as src/auth/keys.ts does
// with partner_keys_version. Cached answers are keyed by the version (http-cache.ts AnswerCache), so they are
// never served for other data once the version moved.

export type { AuditState };

/** How often an instance re-reads audit_state to notice another instance's change. */
export const STATE_POLL_MS = 1000;

interface StateCache {
  state: AuditState | null;
  /** ctx.clock ms of the last read. */
  checkedAtMs: number;
  /** Moved by every local change: a read that began before it must not store what it read. */
  generation: number;
}

const STATE = slot("transparency audit state", (): StateCache => ({ state: null, checkedAtMs: -Infinity, generation: 0 }));

export async function auditState(ctx: AppContext): Promise<AuditState> {
  const c = stateOf(ctx, STATE);
  const nowMs = epochMs(ctx.clock);
  if (c.state && Math.abs(nowMs - c.checkedAtMs) < STATE_POLL_MS) return c.state;
  const generation = c.generation;
  const state = (await readState(ctx.store)) ?? (await startState(ctx.store, new Date(nowMs).toISOString()));
  if (generation === c.generation) {
    c.state = state;
    c.checkedAtMs = nowMs;
  }
  return state;
}

/** After a change committed through this process: the next answer reads audit_state again. */
export function auditStateChanged(ctx: AppContext): void {
  const c = stateOf(ctx, STATE);
  c.state = null;
  c.checkedAtMs = -Infinity;
  c.generation++;
}

type Audit = (action: string, target: string, details: Record<string, unknown>) => Promise<void>;

/**
 * An operator's change to the audit data in one transaction: `work` writes it (and bumps audit_state) on `t`, and
 * `audit` writes its admin_audit row beside it; once it has committed, this process reads audit_state again.
 */
export async function operatorChange<T>(ctx: AppContext, admin: AdminRequest, at: string, work: (t: Queryable, audit: Audit) => Promise<T>): Promise<T> {
  const out = await ctx.store.tx((t) => work(t, (action, target, details) => auditOperator(t, admin, at, action, target, details)));
  auditStateChanged(ctx);
  return out;
}

/** The time of the last change of the audit data: every answer's generated_at_utc and Last-Modified. */
export const dataTime = async (ctx: AppContext): Promise<string> => (await auditState(ctx)).changedAt;
