import type { Member, Outcome } from "./postgres-batch-parts";

// The PostgreSQL runner's one-body-at-a-time path (src/db/postgres-batches.ts): a lone transaction, or the members
// of a grouped batch each in a SAVEPOINT of its own. docs/postgres.md "Speed".

/** Runs a member's body; `resolved` is called as the body resolves, before its statements' answers are awaited. */
type RunBody = (m: Member, resolved?: () => void) => Promise<Outcome>;

/**
 * The batch's bodies one after another, their outcomes in order. Alone, a body with lastAnsweredWithCommit has its
 * COMMIT sent as it resolves (`sendCommit`). Grouped, each runs in a SAVEPOINT named by its place (herald_tx0, …)
 * and a body that resolves with its last statements still unanswered (lastAnsweredWithCommit: a game action, a
 * partner mutation) lets the next one begin at once, behind them: its SAVEPOINT stays open to the COMMIT, and the
 * next body's first statements share a round trip with its last — one wait for the server fewer a body, which is
 * what a batch of one key (one player, one user) waits on. Should one of those last statements then fail, every
 * statement after it failed too, the next body's included (PostgreSQL aborted the transaction there; or, for a body
 * that caught its own failure, ran on top of it): back to the failed body's SAVEPOINT, which undoes the next body as
 * well, and the next body runs again — its statements are never kept from a run that followed a failure.
 *
 * Without `savepoints` (bodies that may run together, TxOptions.together, in a batch of one key: one player's plays)
 * nothing can be undone alone: the run stops at the first body that failed, its outcomes so far returned (the last
 * one failed), and the runner rolls the whole batch back and runs it again with them. Two statements fewer a body,
 * and no subtransaction: one player's plays +12–15 %, PostgreSQL's CPU a play −11–15 % (bench/README.md "One player's
 * plays without savepoints").
 */
export async function oneByOne(
  live: readonly Member[],
  grouped: boolean,
  runBody: RunBody,
  control: (text: string) => void,
  sendCommit: () => void,
  savepoints = true,
): Promise<Outcome[]> {
  if (!grouped) return [await runBody(live[0]!, live[0]!.withCommit ? sendCommit : undefined)];
  const outcomes: Outcome[] = [];
  // The body before this one when it was let go ahead: its outcome is read once this one has been sent.
  let ahead: Promise<Outcome> | null = null;
  for (let i = 0; i < live.length; ) {
    const m = live[i]!;
    if (savepoints) control(`SAVEPOINT herald_tx${i}`);
    const letGo = m.withCommit && i < live.length - 1;
    let returned = (): void => {};
    const bodyReturned = new Promise<"returned">((resolve) => (returned = () => resolve("returned")));
    const run = runBody(m, letGo ? returned : undefined);
    run.catch(() => {}); // awaited below; a deadline's rejection must not go unhandled meanwhile
    const early = letGo && (await Promise.race([bodyReturned, run.then(() => "settled" as const)])) === "returned";
    if (ahead) {
      const before = await ahead;
      ahead = null;
      outcomes.push(before);
      if (!before.ok) {
        await run;
        if (!savepoints) return outcomes; // the batch is rolled back whole and runs again (see below)
        control(`ROLLBACK TO SAVEPOINT herald_tx${i - 1}`);
        control(`RELEASE SAVEPOINT herald_tx${i - 1}`);
        continue; // this body again
      }
    }
    if (early) {
      ahead = run;
      i++;
      continue;
    }
    const o = await run;
    outcomes.push(o);
    if (!savepoints) {
      if (!o.ok) return outcomes;
    } else {
      if (!o.ok) control(`ROLLBACK TO SAVEPOINT herald_tx${i}`);
      control(`RELEASE SAVEPOINT herald_tx${i}`);
    }
    i++;
  }
  return outcomes;
}
