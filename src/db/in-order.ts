import type { Queryable } from "./port";

// Statements of one transaction that do not depend on each other's results are issued together and awaited
// together: Bun's PostgreSQL client pipelines statements issued at once on a transaction's connection,
// so they cost one round trip instead of one each, and the server still runs them in the order they were issued.
// SQLite runs each at its call, in call order — the same order as before. Part of the storage port: every domain
// may use it (docs/storage-port.md).

type Results<T extends readonly unknown[]> = { -readonly [K in keyof T]: Awaited<T[K]> };

/**
 * Awaits everything issued (promises or plain values, `undefined` for a statement not issued) and answers their
 * results in order. When some failed it throws the error of the FIRST in call order — the one a sequence of awaits
 * met before — not the first in time (on PostgreSQL a failure makes the statements behind it fail too, and a later
 * check's error must not hide an earlier statement's). It returns only when all have settled: nothing of the
 * transaction is left in flight when its body ends.
 */
export async function inOrder<T extends readonly unknown[]>(...issued: T): Promise<Results<T>> {
  const settled = await Promise.allSettled(issued);
  for (const s of settled) if (s.status === "rejected") throw s.reason;
  return settled.map((s) => (s as PromiseFulfilledResult<unknown>).value) as Results<T>;
}

/**
 * A transaction body's last statements under TxOptions.lastAnsweredWithCommit: on PostgreSQL they are sent already
 * and left to the COMMIT, whose answer waits for theirs (a failure is the transaction's); SQLite runs a statement at
 * its call and needs it awaited here.
 */
export async function lastStatements(t: Queryable, last: Promise<unknown>): Promise<void> {
  if (t.dialect === "postgres") last.catch(() => {});
  else await last;
}
