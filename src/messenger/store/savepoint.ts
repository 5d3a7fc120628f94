import type { Queryable } from "../../db/port";

// A nested step of a transaction that may fail alone: a salutes payout the salutes service refuses, a promo claimed
// from a bot /start that is refused. SAVEPOINT / ROLLBACK TO / RELEASE are the same on SQLite and PostgreSQL (and
// on PostgreSQL a savepoint is also what lets the transaction go on after a failed statement). The name may repeat:
// both engines refer to the innermost savepoint of that name.

/** Runs `fn` in a savepoint of `t`: its writes are undone if it throws (the error is rethrown), kept otherwise. */
export async function inSavepoint<T>(t: Queryable, fn: () => Promise<T>): Promise<T> {
  await t.run("SAVEPOINT messenger_step");
  try {
    const out = await fn();
    await t.run("RELEASE SAVEPOINT messenger_step");
    return out;
  } catch (err) {
    await t.run("ROLLBACK TO SAVEPOINT messenger_step");
    await t.run("RELEASE SAVEPOINT messenger_step");
    throw err;
  }
}
