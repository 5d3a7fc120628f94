// TxOptions.lastAnsweredWithCommit (src/db/postgres-batches.ts): a body that resolves once its last statements are
// sent has them answered with the COMMIT, one wait for the server fewer — and their answers still decide: one that
// fails rolls the whole transaction back and is its error; in a batch run together, the batch is run again one body
// at a time. A statement sent after the body resolved is refused, never run outside the transaction; a body that
// catches its own failed statement is told so, never answered as failed after it committed.
import { expect } from "bun:test";
import type { Queryable, TxOptions } from "../../src/db/port";
import { countedStore, wireDatabase } from "../support/counting-proxy";
import { testOn } from "../support/skipped";

const onPostgres = testOn("postgres", "test/db/with-commit.test.ts");
const db = wireDatabase(
  "CREATE TABLE with_commit_accounts (id text PRIMARY KEY, balance integer NOT NULL CHECK (balance >= 0))",
  "CREATE TABLE with_commit_entries (id serial PRIMARY KEY, account text NOT NULL, tag text NOT NULL UNIQUE)",
);

/** A credit's shape: a move whose answer decides, then its entry, sent and not waited for. */
function credit(t: Queryable, account: string, tag: string): Promise<number> {
  return t.get<{ balance: number }>("UPDATE with_commit_accounts SET balance = balance + 1 WHERE id = ? RETURNING balance", [account]).then((moved) => {
    if (!moved) throw new Error(`no account ${account}`);
    void t.run("INSERT INTO with_commit_entries (account, tag) VALUES (?, ?)", [account, tag]).catch(() => {});
    return moved.balance;
  });
}

async function scene(account: string) {
  const s = countedStore(db.url());
  await s.store.run("INSERT INTO with_commit_accounts (id, balance) VALUES (?, 0)", [account]);
  const tags = async () =>
    (await s.store.all<{ tag: string }>("SELECT tag FROM with_commit_entries WHERE account = ? ORDER BY tag", [account])).map((r) => r.tag);
  const balance = async () => (await s.store.get<{ balance: number }>("SELECT balance FROM with_commit_accounts WHERE id = ?", [account]))!.balance;
  return { ...s, tags, balance };
}

const settled = (ps: Array<Promise<unknown>>) =>
  Promise.allSettled(ps).then((rs) => rs.map((r) => (r.status === "fulfilled" ? r.value : (r.reason as Error).message)));

onPostgres("the last statements ride with the COMMIT: a transaction waits for the server once less", async () => {
  const flights = async (options: TxOptions, account: string) => {
    const s = await scene(account);
    try {
      await s.store.tx((t) => credit(t, account, `${account}-warm`), options); // prepares the statements on the connection
      s.proxy.flights = 0;
      expect(await s.store.tx((t) => credit(t, account, `${account}-1`), options)).toBe(2);
      const flown = s.proxy.flights;
      expect(await s.tags()).toEqual([`${account}-1`, `${account}-warm`]);
      return flown;
    } finally {
      await s.close();
    }
  };
  // [BEGIN, UPDATE], [INSERT], [COMMIT] against [BEGIN, UPDATE], [INSERT, COMMIT].
  expect(await flights({}, "waited")).toBe(3);
  expect(await flights({ lastAnsweredWithCommit: true }, "with-commit")).toBe(2);
});

onPostgres("a last statement that fails rolls the transaction back and is its error, alone or in a batch run together", async () => {
  const s = await scene("fails");
  try {
    await s.store.run("INSERT INTO with_commit_entries (account, tag) VALUES ('elsewhere', 'taken')");
    // Alone: the move is undone with the failed entry.
    const alone = await settled([s.store.tx((t) => credit(t, "fails", "taken"), { lastAnsweredWithCommit: true })]);
    expect(String(alone[0])).toContain("with_commit_entries");
    expect(await s.balance()).toBe(0);
    // Together: a batch of three, one of them failing at its last statement; the other two are committed once.
    const options = { group: "fails", together: true, lastAnsweredWithCommit: true };
    const first = s.store.tx((t) => credit(t, "fails", "a"), options);
    const batch = ["b", "taken", "c"].map((tag) => s.store.tx((t) => credit(t, "fails", tag), options));
    const answers = await settled([first, ...batch]);
    expect(answers[0]).toBe(1);
    expect(answers.filter((a) => typeof a === "number").sort()).toEqual([1, 2, 3]);
    expect(String(answers[2])).toContain("with_commit_entries");
    expect(await s.tags()).toEqual(["a", "b", "c"]);
    expect(await s.balance()).toBe(3);
    expect(s.store.health.counts.redone).toBe(1);
    // The connection is clean after both: a plain transaction runs on it.
    expect(await s.store.tx((t) => credit(t, "fails", "d"))).toBe(4);
  } finally {
    await s.close();
  }
});

onPostgres("a statement sent after its body resolved is refused, and what the body did is committed", async () => {
  const s = await scene("late");
  try {
    let late: Promise<string> | null = null;
    const value = await s.store.tx(
      async (t) => {
        await t.run("UPDATE with_commit_accounts SET balance = 5 WHERE id = 'late'");
        // A bug the option forbids: work still to be sent when the body has resolved.
        late = Bun.sleep(0)
          .then(() => t.run("INSERT INTO with_commit_entries (account, tag) VALUES ('late', 'late')"))
          .then(
            () => "ran",
            (err: Error) => err.message,
          );
        return "done";
      },
      { lastAnsweredWithCommit: true },
    );
    expect(value).toBe("done");
    expect(await late!).toContain("after its transaction's COMMIT");
    expect(await s.balance()).toBe(5);
    expect(await s.tags()).toEqual([]);
  } finally {
    await s.close();
  }
});

onPostgres("a body that catches its failed statement (a SAVEPOINT of its own) gets an error saying it committed; its batch is not run again", async () => {
  const s = await scene("caught");
  try {
    await s.store.run("INSERT INTO with_commit_entries (account, tag) VALUES ('elsewhere', 'caught-taken')");
    // The move commits; the entry's failure is caught inside the body's own SAVEPOINT, so the COMMIT commits.
    const catching = (tag: string) => async (t: Queryable) => {
      const moved = await t.get<{ balance: number }>("UPDATE with_commit_accounts SET balance = balance + 1 WHERE id = ? RETURNING balance", ["caught"]);
      await t.run("SAVEPOINT mine");
      void t.run("INSERT INTO with_commit_entries (account, tag) VALUES (?, ?)", ["caught", tag]).catch(() => {});
      void t.run("ROLLBACK TO SAVEPOINT mine").catch(() => {});
      return moved!.balance;
    };
    const alone = await settled([s.store.tx(catching("caught-taken"), { lastAnsweredWithCommit: true })]);
    expect(String(alone[0])).toContain("committed although one of its statements failed");
    expect(await s.balance()).toBe(1);
    // In a batch run together: refused as well, and not run again on top of what committed.
    const options = { group: "caught", together: true, lastAnsweredWithCommit: true };
    const first = s.store.tx((t) => credit(t, "caught", "x"), options);
    const batch = [s.store.tx((t) => credit(t, "caught", "y"), options), s.store.tx(catching("caught-taken"), options)];
    const answers = await settled([first, ...batch]);
    expect(answers[0]).toBe(2);
    // The batch committed: the body that succeeded gets its answer; the one that caught its failure, the error.
    expect(answers[1]).toBe(3);
    expect(String(answers[2])).toContain("committed although one of its statements failed");
    expect(s.store.health.counts.redone).toBe(0);
    expect(await s.balance()).toBe(4);
    expect(await s.tags()).toEqual(["x", "y"]);
    // The store goes on, on the connection the batch ended cleanly.
    expect(await s.store.tx((t) => credit(t, "caught", "z"))).toBe(5);
  } finally {
    await s.close();
  }
});
