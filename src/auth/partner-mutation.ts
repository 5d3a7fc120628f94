import type { IdempotencyStore } from "./idempotency";
import type { PartnerRequest } from "./partner-request";
import type { AppContext } from "../context";
import type { Queryable, TxScope } from "../db/port";

/**
 * What a signed mutation does, in the transaction `t` that also claims its Idempotency-Key; what it sends and does not
 * wait for it leaves with `t.behind` (TxScope).
 */
export type MutationEffect<T> = (t: TxScope) => Promise<T>;

export interface MutationOptions {
  /** Elysia's `set`, on a route that creates: the answer, and its stored replay, is 201. */
  created?: { status?: number | string };
  /**
   * Wake the webhook dispatcher once the effect has committed: true (the default) for an effect that may queue
   * deliveries, false for one that never does, or a function read after the commit (how many the effect queued,
   * or its promise) to wake it only when there are some — a credit's event often has no webhook to go to.
   */
  nudge?: boolean | (() => unknown);
  /**
   * The balance the effect moves (its key, such as salutes' `balanceGroup(user)`): effects on one balance may share
   * a commit. None: the effect runs alone. The storage port's plan for it (TxOptions.group) is chosen here.
   */
  balance?: string;
  /** With `balance`: the effect decides only by conditional statements and unique claims, so it may run beside the others of its batch. */
  conditionalOnly?: boolean;
}

/**
 * The one way a signed partner mutation commits: the effect under the request's Idempotency-Key (and its nonce,
 * on a route that defers it to the effect), then — only once it has committed — the dispatcher's nudge, so the
 * deliveries it queued go out now rather than at the next poll, and the status. A failed effect nudges nothing.
 */
export function partnerMutation(ctx: AppContext, idem: IdempotencyStore) {
  return async function mutation<T extends object>(partner: PartnerRequest, effect: MutationEffect<T>, opts: MutationOptions = {}): Promise<T> {
    const sharing = opts.balance === undefined ? {} : { group: opts.balance, together: opts.conditionalOnly === true };
    const out = await idem.run(partner.idempotency, effect, opts.created ? 201 : 200, partner.pendingNonce, sharing);
    const nudge = opts.nudge ?? true;
    if (typeof nudge === "function" ? await nudge() : nudge) ctx.dispatcher.nudge();
    if (opts.created) opts.created.status = 201;
    return out;
  };
}

export type Mutation = ReturnType<typeof partnerMutation>;

/**
 * A signed mutation whose work begins before its transaction (IdempotencyStore.runAsync): the Idempotency-Key is
 * claimed first and committed as in progress, so a replay is answered from its record and a duplicate still running
 * is refused (`idempotency_in_progress`), neither running `prepare`; then `prepare` runs outside any transaction —
 * work no transaction may hold, such as deletes in bounded batches (docs/storage-port.md "Bulk deletes: in
 * batches") — and the effect commits with the stored response. A failure releases the claim, so a retry with the key
 * runs again. An effect may throw RowHeldElsewhere rather than wait for a row inside its transaction (src/db/row-held.ts):
 * it is run again after a pause outside it, `lastRun` true once it should wait. Nothing is nudged: for an effect that
 * queues no delivery. Not for a route that defers its nonce to the effect (PartnerGuard.nonceInEffect): the guard
 * records it before the handler.
 */
export function partnerPreparedMutation(idem: IdempotencyStore) {
  return async function prepared<P, T extends object>(
    partner: PartnerRequest,
    prepare: () => Promise<P>,
    effect: (t: Queryable, prepared: P, lastRun: boolean) => Promise<T>,
  ): Promise<T> {
    if (partner.pendingNonce) throw new Error("partnerPreparedMutation: the route defers its nonce to the effect, which a prepared mutation does not record");
    return await idem.runAsync(partner.idempotency, prepare, (p, t, lastRun) => effect(t, p, lastRun));
  };
}
