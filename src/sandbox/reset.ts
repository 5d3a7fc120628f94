import type { Owner } from "../auth/actors";
import type { AppContext } from "../context";
import type { Queryable } from "../db/port";
import { clearSandboxDonations } from "../donations/sandbox-service";
import { clearSandboxUsers, sandboxUserIds } from "../partner/sandbox-service";
import { clearSandboxSalutes } from "../salutes/sandbox-service";
import { clearSandboxWebhooks } from "../webhooks/sandbox-service";
import { fixtureSummary, reseedFixtures } from "./fixtures";
import { RESET_DELETED } from "./model";
import { addCounts, deleteSandboxInBatches, type SandboxCounts, takeResetTurn } from "./reset-batches";

/** A signed mutation whose work begins before its transaction, once its Idempotency-Key is claimed (src/auth/partner-mutation.ts). */
export type PreparedRun = <P, T extends object>(prepare: () => Promise<P>, effect: (t: Queryable, prepared: P, lastRun: boolean) => Promise<T>) => Promise<T>;

/**
 * POST /api/partner/sandbox/reset, in two phases: the bulk of the rows in bounded batches, each committed on its own
 * (src/sandbox/reset-batches.ts), then the request's idempotent transaction deletes what remains (bounded) and
 * reseeds, so the fixtures and the end state commit together. `run` claims the Idempotency-Key first: a replay or a
 * duplicate still running deletes nothing. Nonces and idempotency records are kept: they guard the key, not the data.
 *
 * A failure leaves the batches committed so far and the old fixtures; the retry deletes the rest and reseeds (the
 * claim is released on an error, and lapses within a minute after a crash, IdempotencyStore.runAsync).
 */
export async function resetSandbox<T extends object>(
  ctx: AppContext,
  owner: Owner,
  keyId: string,
  run: PreparedRun,
  answer: (reset: ResetAnswer) => T,
): Promise<T> {
  if (owner.mode !== "sandbox") throw new Error("resetSandbox called with a live owner");
  let endTurn: (() => void) | null = null;
  try {
    return await run(
      async () => {
        endTurn = await takeResetTurn(ctx, owner.partner);
        return await deleteSandboxInBatches(ctx.store, owner);
      },
      // Not waiting for the fixture row inside the transaction until its last run (src/db/row-held.ts).
      async (t, batched, lastRun) => answer(await finishReset(t, ctx, owner, keyId, batched, lastRun)),
    );
  } finally {
    (endTurn as (() => void) | null)?.();
  }
}

export type ResetAnswer = Awaited<ReturnType<typeof finishReset>>;

/**
 * The reset's transaction (`t`): deletes what the batches left and reseeds on the partner's fixture row, on which
 * resets take turns (reseedFixtures; `wait` on the last run), and answers the rows the whole reset deleted. Sandbox
 * writes hold the same row shared (holdingSandbox), so none lands in between.
 */
export async function finishReset(t: Queryable, ctx: AppContext, owner: Owner, keyId: string, batched: SandboxCounts, wait = true) {
  const partner = owner.partner;
  const { deleted, rec } = await reseedFixtures(
    t,
    ctx,
    owner,
    keyId,
    async () =>
      addCounts(
        { ...batched },
        await clearSandboxWebhooks(t, partner),
        await clearSandboxSalutes(t, partner, await sandboxUserIds(t, partner)),
        await clearSandboxDonations(t, partner),
        await clearSandboxUsers(t, partner),
      ),
    wait,
  );
  return {
    reset: true as const,
    deleted: Object.fromEntries(Object.entries(RESET_DELETED).map(([name, table]) => [name, deleted[table]])) as Record<keyof typeof RESET_DELETED, number>,
    fixtures: await fixtureSummary(t, rec),
  };
}
