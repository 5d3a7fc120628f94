import type { Owner } from "../auth/actors";
import type { AppContext } from "../context";
import type { Queryable } from "../db/port";
import { clearSandboxDonations } from "../donations/sandbox-service";
import { clearSandboxUsers, sandboxUserIds } from "../partner/sandbox-service";
import { clearSandboxSalutes } from "../salutes/sandbox-service";
import { clearSandboxWebhooks } from "../webhooks/sandbox-service";
import { fixtureSummary, reseedFixtures } from "./fixtures";
import { addCounts, deleteSandboxInBatches, type SandboxCounts, takeResetTurn } from "./reset-batches";

/** A signed mutation whose work begins before its transaction, once its Idempotency-Key is claimed (src/auth/partner-mutation.ts). */
export type PreparedRun = <P, T extends object>(prepare: () => Promise<P>, effect: (t: Queryable, prepared: P, lastRun: boolean) => Promise<T>) => Promise<T>;

/**
 * POST /api/partner/sandbox/reset: deletes the partner's whole sandbox practice state and seeds the fixtures again
 * from the calling key's id, in two phases. First the bulk of the rows in bounded batches, each committed on its own
 * with the event loop free between them (src/sandbox/reset-batches.ts; one transaction over a sandbox of months held
 * every request of the service); then the request's idempotent transaction deletes what remains — the webhooks, the
 * fixture users, what was written meanwhile: bounded — and reseeds, so the fixtures and the end state still commit
 * together. `run` claims the Idempotency-Key first (committed as in progress): a replay is answered from its record
 * and a duplicate still running is refused, neither deleting anything. The batches run in the partner's turn on this
 * instance (takeResetTurn), which ends once the answer is settled. Nonces and idempotency records are kept: they guard
 * the key, not the practice data.
 *
 * What a failure leaves: the batches committed so far stay committed (the ledger entries of some users gone, their
 * balances not yet), the fixture record and users are the old ones, and the next reset — the client's retry —
 * deletes the rest and reseeds. The claim is released on an error, so the retry may reuse the key; after a crash it
 * lapses within a minute (IdempotencyStore.runAsync).
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
 * The reset's transaction, with the request's (idempotency) transaction handle `t`: takes the partner's fixture row,
 * deletes what the batches left, reseeds, and answers the rows deleted by the whole reset (`batched`, the batches'
 * counts, plus this transaction's). Two resets of one partner at once (on PostgreSQL: several instances) take turns
 * on the fixture row, which the reset updates in place and never deletes: the second waits until the first commits,
 * then deletes what the first seeded — outside its transaction unless `wait` (the request's last run): finding the
 * row held, its transaction ends and runs again after a pause (src/db/row-held.ts). Sandbox writes hold the same row
 * shared (holdingSandbox), so none lands in between. Each owner clears its own rows, children before parents:
 * webhooks, salutes and donations reference users.
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
    deleted: {
      users: deleted.partner_users,
      wallets: deleted.wallet_links,
      ledger_entries: deleted.salutes_ledger,
      balances: deleted.salutes_balances,
      conversions: deleted.salutes_conversions,
      donation_claims: deleted.donation_claims,
      webhooks: deleted.webhooks,
      deliveries: deleted.webhook_deliveries,
      delivery_attempts: deleted.webhook_attempts,
      events: deleted.events,
    },
    fixtures: await fixtureSummary(t, rec),
  };
}
