// A grouped batch run one body at a time (src/db/postgres-one-by-one.ts): a body with TxOptions.lastAnsweredWithCommit
// that resolves with its last statements unanswered lets the next body begin behind them, so a batch of one key
// waits for the server about once a body instead of twice. When one of those last statements fails, that body alone
// fails: back to its SAVEPOINT, and the body after it — whose statements ran in an aborted transaction, or on top of
// a failure the body caught — runs again and is committed once.
import { expect } from "bun:test";
import type { Queryable, TxOptions } from "../../src/db/port";
import { countedStore, wireDatabase } from "../support/counting-proxy";
import { testOn } from "../support/skipped";

const onPostgres = testOn("postgres", "test/db/one-by-one.test.ts");
const db = wireDatabase(
  "CREATE TABLE one_by_one_accounts (id text PRIMARY KEY, balance integer NOT NULL CHECK (balance >= 0))",
  "CREATE TABLE one_by_one_entries (id serial PRIMARY KEY, account text NOT NULL, tag text NOT NULL UNIQUE)",
);

/** Bodies run, by tag (a body run again counts twice). */
let runs: Record<string, number> = {};

/** A credit's shape: a move whose answer decides, then its entry, sent and not waited for. */
function credit(t: Queryable, account: string, tag: string): Promise<number> {
  runs[tag] = (runs[tag] ?? 0) + 1;
  return t.get<{ balance: number }>("UPDATE one_by_one_accounts SET balance = balance + 1 WHERE id = ? RETURNING balance", [account]).then((moved) => {
    if (!moved) throw new Error(`no account ${account}`);
    void t.run("INSERT INTO one_by_one_entries (account, tag) VALUES (?, ?)", [account, tag]).catch(() => {});
    return moved.balance;
  });
}

async function scene(account: string) {
  runs = {};
  const s = countedStore(db.url());
  await s.store.run("INSERT INTO one_by_one_accounts (id, balance) VALUES (?, 0)", [account]);
  const tags = async () =>
    (await s.store.all<{ tag: string }>("SELECT tag FROM one_by_one_entries WHERE account = ? ORDER BY tag", [account])).map((r) => r.tag);
  const balance = async () => (await s.store.get<{ balance: number }>("SELECT balance FROM one_by_one_accounts WHERE id = ?", [account]))!.balance;
  return { ...s, tags, balance };
}

const settled = (ps: Array<Promise<unknown>>) =>
  Promise.allSettled(ps).then((rs) => rs.map((r) => (r.status === "fulfilled" ? r.value : (r.reason as Error).message)));

/** Five transactions of one key at once: the first runs alone, the other four as one batch behind it. */
const fiveAtOnce = (
  s: { store: { tx: <T>(fn: (t: Queryable) => Promise<T>, o?: TxOptions) => Promise<T> } },
  account: string,
  tags: string[],
  options: TxOptions,
) => tags.map((tag) => s.store.tx((t) => credit(t, account, tag), options));

onPostgres("a batch's next body begins behind the last statements of the one before: about one wait a body instead of two", async () => {
  const flights = async (options: TxOptions, account: string) => {
    const s = await scene(account);
    try {
      // A batch first: its statements, SAVEPOINTs and RELEASEs are prepared on the connection (the first use of each
      // costs a round trip of its own).
      const tags = (prefix: string) => ["a", "b", "c", "d", "e"].map((x) => `${account}-${prefix}${x}`);
      await Promise.all(fiveAtOnce(s, account, tags("warm-"), options));
      s.proxy.flights = 0;
      const before = s.store.health.counts.roundTrips;
      expect(await Promise.all(fiveAtOnce(s, account, tags(""), options))).toEqual([6, 7, 8, 9, 10]);
      expect(await s.tags()).toHaveLength(10);
      expect(s.store.health.counts.roundTrips - before).toBe(s.proxy.flights - 1); // the engine's own count (the last read aside)
      return s.proxy.flights;
    } finally {
      await s.close();
    }
  };
  // Five transactions of one key (the first alone, four in a batch), then a read: 14 waits for the server when each
  // body's last statements are waited for; with them answered with the COMMIT, 13 before the next body was let go
  // behind them (the runner of 845f629), 10 now — the batch of four waits about once a body.
  expect(await flights({ group: "k" }, "waited")).toBe(14);
  expect(await flights({ group: "k", lastAnsweredWithCommit: true }, "behind")).toBe(10);
});

onPostgres("a last statement that fails after its body resolved fails that body alone; the one begun behind it runs again, once committed", async () => {
  const s = await scene("fails");
  try {
    await s.store.run("INSERT INTO one_by_one_entries (account, tag) VALUES ('elsewhere', 'taken')");
    const options = { group: "fails", lastAnsweredWithCommit: true };
    const answers = await settled(fiveAtOnce(s, "fails", ["a", "b", "taken", "c", "d"], options));
    expect(answers[0]).toBe(1);
    expect(answers[1]).toBe(2);
    expect(String(answers[2])).toContain("one_by_one_entries");
    expect([answers[3], answers[4]]).toEqual([3, 4]);
    expect(await s.tags()).toEqual(["a", "b", "c", "d"]);
    expect(await s.balance()).toBe(4);
    // c began behind the failed body and ran again; d began behind c, which succeeded.
    expect(runs).toEqual({ a: 1, b: 1, taken: 1, c: 2, d: 1 });
    expect(s.store.health.counts.redone).toBe(0);
    // The connection is clean: a plain transaction runs on it.
    expect(await s.store.tx((t) => credit(t, "fails", "e"))).toBe(5);
  } finally {
    await s.close();
  }
});

onPostgres("in a row without savepoints (TxOptions.together): a late failure rolls the batch back; it runs again with them, each committed once", async () => {
  const s = await scene("row");
  try {
    await s.store.run("INSERT INTO one_by_one_entries (account, tag) VALUES ('elsewhere', 'row-taken')");
    const options: TxOptions = { group: "row", lastAnsweredWithCommit: true, together: "beside other keys" };
    const answers = await settled(fiveAtOnce(s, "row", ["ra", "rb", "row-taken", "rc", "rd"], options));
    expect(answers[0]).toBe(1);
    expect(answers[1]).toBe(2);
    expect(String(answers[2])).toContain("one_by_one_entries");
    expect([answers[3], answers[4]]).toEqual([3, 4]);
    expect(await s.tags()).toEqual(["ra", "rb", "rc", "rd"]);
    expect(await s.balance()).toBe(4);
    // In a row, rc began behind the failed body: the batch was rolled back there (rd never began) and ran again with
    // savepoints, where rc began behind it once more and then ran on its own.
    expect(runs).toEqual({ ra: 1, rb: 2, "row-taken": 2, rc: 3, rd: 1 });
    expect(s.store.health.counts.redone).toBe(1);
    expect(await s.store.tx((t) => credit(t, "row", "re"))).toBe(5);
  } finally {
    await s.close();
  }
});

onPostgres("a body that catches its own failed statement (a SAVEPOINT of its own) is rolled back to its SAVEPOINT and fails; the next runs again", async () => {
  const s = await scene("caught");
  try {
    await s.store.run("INSERT INTO one_by_one_entries (account, tag) VALUES ('elsewhere', 'caught-taken')");
    const catching = async (t: Queryable) => {
      runs.catching = (runs.catching ?? 0) + 1;
      const moved = await t.get<{ balance: number }>("UPDATE one_by_one_accounts SET balance = balance + 1 WHERE id = ? RETURNING balance", ["caught"]);
      await t.run("SAVEPOINT mine");
      void t.run("INSERT INTO one_by_one_entries (account, tag) VALUES (?, ?)", ["caught", "caught-taken"]).catch(() => {});
      void t.run("ROLLBACK TO SAVEPOINT mine").catch(() => {});
      return moved!.balance;
    };
    const options = { group: "caught", lastAnsweredWithCommit: true };
    const first = s.store.tx((t) => credit(t, "caught", "x"), options);
    const batch = [s.store.tx(catching, options), s.store.tx((t) => credit(t, "caught", "y"), options), s.store.tx((t) => credit(t, "caught", "z"), options)];
    const answers = await settled([first, ...batch]);
    expect(answers[0]).toBe(1);
    expect(String(answers[1])).toContain("one_by_one_entries");
    expect([answers[2], answers[3]]).toEqual([2, 3]);
    expect(await s.balance()).toBe(3);
    expect(await s.tags()).toEqual(["x", "y", "z"]);
    expect(runs).toEqual({ x: 1, catching: 1, y: 2, z: 1 });
  } finally {
    await s.close();
  }
});
