import type { Owner } from "../auth/actors";
import { type AppContext, slot, stateOf } from "../context";
import { type BatchBound, DEFAULT_BATCH_ROWS } from "../db/batched-delete";
import type { Queryable, Store } from "../db/port";
import { retryWhileHeld } from "../db/row-held";
import { deleteSandboxDonationsInBatches } from "../donations/sandbox-service";
import { clearSandboxUsersOf, deleteSandboxWalletsInBatches, sandboxUserIdsAfter } from "../partner/sandbox-service";
import { clearSandboxSalutes, deleteSandboxSalutesInBatches } from "../salutes/sandbox-service";
import { deleteSandboxWebhooksInBatches } from "../webhooks/sandbox-service";
import { RESET_DELETED } from "./model";
import { lockFixtureRowOrHeld } from "./store";

// The first phase of POST /api/partner/sandbox/reset (src/sandbox/reset.ts): the bulk of the partner's sandbox, in
// bounded batches BEFORE the request's transaction (docs/storage-port.md "Bulk deletes: in batches"). A
// sandbox grows without limit, and one transaction deleting all of it held SQLite's one thread, /healthz included,
// for as long as it ran. Each owner deletes its own rows (the layering); this file only orders them.

/** Every table the reset deletes from (the answer's `deleted` names each, src/sandbox/model.ts). */
export type SandboxTable = (typeof RESET_DELETED)[keyof typeof RESET_DELETED];
export type SandboxCounts = Record<SandboxTable, number>;

export const noRowsDeleted = (): SandboxCounts => Object.fromEntries(Object.values(RESET_DELETED).map((table) => [table, 0])) as SandboxCounts;

/** Adds the counts of `more` to `into` (a phase's, a batch's), and answers `into`. */
export function addCounts(into: SandboxCounts, ...more: ReadonlyArray<Partial<SandboxCounts>>): SandboxCounts {
  for (const m of more) for (const [table, n] of Object.entries(m) as Array<[SandboxTable, number]>) into[table] += n;
  return into;
}

/**
 * Users per step of the walk: their conversions and ledger entries go in batches (down the user_id indexes, the list
 * as one parameter), then the users themselves in one short transaction with their balances and whatever rows of
 * theirs were written meanwhile. 500 users are 500 index lookups a batch and 500 balance and user rows a transaction.
 */
export const USERS_PER_STEP = 500;

/**
 * Deletes the bulk of the owner's sandbox in bounded batches through `store` (the store itself, never a transaction's
 * handle), and answers the rows deleted per table. Children before parents: deliveries with their attempts, events,
 * donation claims and wallets, then the users in id order, each step's entries before the step's users. Left for the
 * reset's transaction: the webhooks (at most 100 active), the fixture users and their balances — a sandbox write that
 * names no user goes to the recorded fx-alice, who must exist until the new fixtures are recorded — and whatever was
 * written meanwhile. No time bound: the request goes on until its sandbox is deleted (some 500 batches for a million
 * rows, each a few milliseconds), as what is left would otherwise fall to the one transaction.
 */
export async function deleteSandboxInBatches(store: Store, owner: Owner, bound: BatchBound = {}): Promise<SandboxCounts> {
  if (owner.mode !== "sandbox") throw new Error("deleteSandboxInBatches called with a live owner");
  const partner = owner.partner;
  const b: BatchBound = { maxMs: Number.POSITIVE_INFINITY, ...bound };
  const counts = addCounts(
    noRowsDeleted(),
    await deleteSandboxWebhooksInBatches(store, partner, b),
    await deleteSandboxDonationsInBatches(store, partner, b),
    await deleteSandboxWalletsInBatches(store, partner, b),
  );
  const step = Math.min(USERS_PER_STEP, b.batchRows ?? DEFAULT_BATCH_ROWS);
  // A walk in id order, each step after the last id seen: a user committed meanwhile behind it (ids commit out of
  // order on PostgreSQL) is left to the reset's transaction, as is every user written after the walk.
  for (let after = 0; ; ) {
    const ids = await sandboxUserIdsAfter(store, partner, after, step);
    if (ids.length === 0) break;
    addCounts(counts, await deleteSandboxSalutesInBatches(store, partner, ids, b));
    // The fixture row waited for outside the step's transaction, as the reset's own does (src/db/row-held.ts).
    addCounts(counts, await retryWhileHeld((lastRun) => store.tx((t) => deleteUsersOfStep(t, partner, ids, lastRun))));
    if (ids.length < step) break;
    after = ids[ids.length - 1]!;
    await new Promise<void>((resolve) => setImmediate(resolve));
  }
  return counts;
}

/**
 * One step's users but the fixture users, with their remaining salutes rows and wallets, in transaction `t`. The
 * partner's fixture row is held exclusively first (src/sandbox/store.ts; held elsewhere, the step is run again after a
 * pause outside it unless `wait`, src/db/row-held.ts): on PostgreSQL a sandbox write holds it shared from before it
 * finds a user until it commits, so none is between finding one of these users and writing a row that names it, and
 * the fixture users to keep are the ones recorded now (a reset on another instance may have seeded new ones since the
 * walk began).
 */
async function deleteUsersOfStep(t: Queryable, partner: string, ids: readonly number[], wait: boolean): Promise<Partial<SandboxCounts>> {
  const fixtures = await lockFixtureRowOrHeld(t, partner, wait);
  const keep = new Set(fixtures ? (JSON.parse(fixtures.user_ids) as number[]) : []);
  const doomed = ids.filter((id) => !keep.has(id));
  if (doomed.length === 0) return {};
  return { ...(await clearSandboxSalutes(t, partner, doomed)), ...(await clearSandboxUsersOf(t, partner, doomed)) };
}

/** Per partner, the end of the last reset queued on this instance. */
const TURNS = slot("sandbox reset turns", () => new Map<string, Promise<void>>());

/**
 * Waits for the resets of the partner queued before this one on this instance, and answers the function that ends
 * this one's turn (call it once the reset's answer is settled, whatever it is). Resets of one partner thus run whole,
 * batches and transaction, one after the other, as they did when a reset was one transaction: each deletes what the
 * one before it seeded, and its answer counts exactly that. The wait is outside any transaction, however many are
 * queued. Across instances the fixture row orders their transactions, each waiting for it outside its transaction too
 * (lockFixtureRowOrHeld), and their batches may run side by side (docs/sandbox.md "Reset").
 */
export async function takeResetTurn(ctx: AppContext, partner: string): Promise<() => void> {
  const turns = stateOf(ctx, TURNS);
  const before = turns.get(partner) ?? Promise.resolve();
  const { promise: ended, resolve: end } = Promise.withResolvers<void>();
  const tail = before.then(() => ended);
  turns.set(partner, tail);
  void tail.then(() => {
    if (turns.get(partner) === tail) turns.delete(partner);
  });
  await before;
  return end;
}
