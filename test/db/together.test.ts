// Grouped transactions whose bodies run together (TxOptions.together, src/db/postgres-batches.ts): one batch, no
// SAVEPOINTs, every body's statements sent at once — and when one body fails, the whole batch rolled back and run
// again one body at a time, so what the others wrote is committed exactly once and the failed one wrote nothing.
import { expect } from "bun:test";
import type { Queryable } from "../../src/db/port";
import { countedStore, wireDatabase } from "../support/counting-proxy";
import { testOn } from "../support/skipped";

const onPostgres = testOn("postgres", "test/db/together.test.ts");
const db = wireDatabase(
  "CREATE TABLE together_accounts (id text PRIMARY KEY, balance integer NOT NULL CHECK (balance >= 0))",
  "CREATE TABLE together_entries (id serial PRIMARY KEY, account text NOT NULL, delta integer NOT NULL, tag text NOT NULL, UNIQUE (account, tag))",
);

/** A debit as a credit's body is written: a conditional move, then its entry (two round trips, the second after the first's answer). */
async function debit(t: Queryable, account: string, amount: number, tag: string): Promise<number> {
  const moved = await t.get<{ balance: number }>("UPDATE together_accounts SET balance = balance - ? WHERE id = ? AND balance - ? >= 0 RETURNING balance", [
    amount,
    account,
    amount,
  ]);
  if (!moved) throw new Error(`insufficient: ${tag}`);
  await t.run("INSERT INTO together_entries (account, delta, tag) VALUES (?, ?, ?)", [account, -amount, tag]);
  return moved.balance;
}

/** A store with one connection (so transactions queue into batches) behind a proxy that holds each answer 20 ms. */
async function scene(account: string, balance: number) {
  const { proxy, store, close } = countedStore(db.url());
  await store.run("INSERT INTO together_accounts (id, balance) VALUES (?, ?)", [account, balance]);
  const entries = async () =>
    (await store.all<{ tag: string }>("SELECT tag FROM together_entries WHERE account = ? ORDER BY tag", [account])).map((r) => r.tag);
  const balanceNow = async () => (await store.get<{ balance: number }>("SELECT balance FROM together_accounts WHERE id = ?", [account]))!.balance;
  return { proxy, store, entries, balanceNow, close };
}

const settled = (ps: Array<Promise<unknown>>) =>
  Promise.allSettled(ps).then((rs) => rs.map((r) => (r.status === "fulfilled" ? r.value : (r.reason as Error).message)));

onPostgres("bodies run together share their round trips: a batch of four waits about as often as one body, not four", async () => {
  const flights = async (together: boolean, account: string) => {
    const s = await scene(account, 1_000);
    const run = (tag: string) => s.store.tx((t) => debit(t, account, 1, `${account}-${tag}`), { group: account, together });
    try {
      await Promise.all(["w1", "w2", "w3", "w4", "w5"].map(run)); // prepares the statements on the connection
      s.proxy.flights = 0;
      // One alone, then four that arrive while it runs: one batch of four.
      const balances = await Promise.all(["a", "b", "c", "d", "e"].map(run));
      const flown = s.proxy.flights;
      expect(balances).toEqual([994, 993, 992, 991, 990]);
      expect(await s.balanceNow()).toBe(990);
      expect(s.store.health.counts.redone).toBe(0);
      return flown;
    } finally {
      await s.close();
    }
  };
  const oneByOne = await flights(false, "one-by-one");
  const together = await flights(true, "together");
  // Alone: [BEGIN, UPDATE], [INSERT], [COMMIT] = 3. One body at a time, the batch of four: SAVEPOINT, UPDATE, then
  // INSERT, each body after the last, then COMMIT: 9 more (12). Together: [BEGIN, 4 UPDATEs], [4 INSERTs], [COMMIT]:
  // 3 more (6).
  expect(oneByOne).toBe(12);
  expect(together).toBe(6);
});

onPostgres("one body fails: the batch is rolled back and run one body at a time; the others commit once, the failed one writes nothing", async () => {
  const s = await scene("refused", 5);
  const run = (amount: number, tag: string) => s.store.tx((t) => debit(t, "refused", amount, tag), { group: "refused", together: true });
  try {
    await run(1, "first"); // 4 left
    s.store.health.counts.redone = 0;
    // The first runs alone; the next four arrive while it does and run together: the last cannot be paid.
    const answers = await settled([run(1, "alone"), run(1, "b1"), run(1, "b2"), run(1, "b3"), run(5, "b4")]);
    expect(answers).toEqual([3, 2, 1, 0, "insufficient: b4"]);
    expect(s.store.health.counts.redone).toBe(1);
    expect(await s.entries()).toEqual(["alone", "b1", "b2", "b3", "first"]);
    expect(await s.balanceNow()).toBe(0);
  } finally {
    await s.close();
  }
});

onPostgres("a failed statement aborts the transaction for every body: redone one at a time, only its own body fails", async () => {
  const s = await scene("aborted", 100);
  const run = (tag: string) => s.store.tx((t) => debit(t, "aborted", 1, tag), { group: "aborted", together: true });
  try {
    await run("taken");
    s.store.health.counts.redone = 0;
    // "taken" again breaks the UNIQUE tag: PostgreSQL aborts the whole transaction, so every body's INSERT fails.
    const answers = await settled([run("alone"), run("c1"), run("taken"), run("c2")]);
    expect(answers[0]).toBe(98);
    expect(answers[2]).toMatch(/unique/i);
    expect([answers[1], answers[3]].sort()).toEqual([96, 97]);
    expect(s.store.health.counts.redone).toBe(1);
    expect(await s.entries()).toEqual(["alone", "c1", "c2", "taken"]);
    expect(await s.balanceNow()).toBe(96);
  } finally {
    await s.close();
  }
});

onPostgres("after a redo the slot's next batches run one body at a time for a while, then together again", async () => {
  const s = await scene("calm", 1_000);
  const run = (tag: string, amount = 1) => s.store.tx((t) => debit(t, "calm", amount, tag), { group: "calm", together: true });
  const batch = (round: number) => settled([run(`r${round}-alone`), run(`r${round}-x`), run(`r${round}-y`)]);
  try {
    await settled([run("w-alone"), run("w-x"), run("w-y", 5_000)]); // one redo
    expect(s.store.health.counts.redone).toBe(1);
    s.proxy.flights = 0;
    await batch(1);
    const calm = s.proxy.flights; // alone 3, then the two bodies one at a time: 5 more
    for (let round = 2; round <= 8; round++) await batch(round);
    s.proxy.flights = 0;
    await batch(9);
    const againTogether = s.proxy.flights;
    expect(calm).toBe(8);
    expect(againTogether).toBe(6); // alone 3, then the two together: 3 more
    expect(s.store.health.counts.redone).toBe(1);
    expect((await s.entries()).length).toBe(2 + 27);
  } finally {
    await s.close();
  }
});
