// Grouped transactions whose bodies run together (TxOptions.together, src/db/postgres-batches.ts): one batch, no
// SAVEPOINTs, every body's statements sent at once — and when one body fails, the whole batch rolled back and run
// again one body at a time, so what the others wrote is committed exactly once and the failed one wrote nothing.
import { expect, test } from "bun:test";
import { Apart, type Member, mayRunTogether, nextBatch } from "../../src/db/postgres-batch-parts";
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

// TxOptions.together "beside other keys": bodies that decide in TypeScript on their own key's rows run together only
// beside other keys. A second transaction of a key in the batch waits for the slot's next batch (nextBatch).

/** Debits of several accounts, one connection behind the counting proxy (one batch slot). */
async function accounts(prefix: string, names: string[], balance: number) {
  const { proxy, store, close } = countedStore(db.url());
  for (const name of names) await store.run("INSERT INTO together_accounts (id, balance) VALUES (?, ?)", [`${prefix}${name}`, balance]);
  const run = (name: string, tag: string, amount = 1) =>
    store.tx((t) => debit(t, `${prefix}${name}`, amount, `${prefix}${tag}`), { group: `${prefix}${name}`, together: "beside other keys" });
  const entries = async () =>
    (await store.all<{ tag: string }>("SELECT tag FROM together_entries WHERE account LIKE ? ORDER BY id", [`${prefix}%`])).map((r) =>
      r.tag.slice(prefix.length),
    );
  return { proxy, store, run, entries, close };
}

onPostgres("beside other keys: a batch of different keys runs together; a key's second transaction waits for the next batch, in order", async () => {
  const s = await accounts("bok-", ["a0", "a1", "a2", "a3"], 100);
  try {
    await Promise.all(["a0", "a1", "a2", "a3"].map((a) => s.run(a, `warm-${a}`))); // prepares the statements
    s.proxy.flights = 0;
    s.store.health.counts.together = 0;
    s.store.health.counts.redone = 0;
    // a0 alone; the four behind it (a1 twice) make a batch of a1, a2, a3 run together, then a1's second alone.
    const answers = await Promise.all([s.run("a0", "alone"), s.run("a1", "x1"), s.run("a2", "x2"), s.run("a1", "y1"), s.run("a3", "x3")]);
    expect(answers).toEqual([98, 98, 98, 97, 98]);
    // Alone: [BEGIN, UPDATE], [INSERT], [COMMIT] = 3, three times (a0; the batch of three together; a1's second).
    expect(s.proxy.flights).toBe(9);
    expect(s.store.health.counts.together).toBe(1);
    expect(s.store.health.counts.redone).toBe(0);
    const order = await s.entries();
    expect(order.indexOf("x1")).toBeLessThan(order.indexOf("y1"));
  } finally {
    await s.close();
  }
});

onPostgres("beside other keys: transactions of one key alone run one body at a time in one batch, in a row without savepoints", async () => {
  const s = await accounts("solo-", ["k"], 100);
  const counts = s.store.health.counts;
  try {
    await Promise.all(["w1", "w2", "w3", "w4", "w5"].map((tag) => s.run("k", tag))); // prepares the statements
    s.proxy.flights = 0;
    counts.together = 0;
    counts.statements = 0;
    const answers = await Promise.all(["a", "b", "c", "d", "e"].map((tag) => s.run("k", tag)));
    expect(answers).toEqual([94, 93, 92, 91, 90]);
    // Alone 3; then the batch of four, one body at a time: the UPDATE, then the INSERT, each; COMMIT: 9.
    expect(s.proxy.flights).toBe(12);
    // Alone: BEGIN, UPDATE, INSERT, COMMIT; the batch: BEGIN, 4 × (UPDATE, INSERT), COMMIT — no SAVEPOINT, no RELEASE
    // (with them, 4 × 4 + 2: 22 in all).
    expect(counts.statements).toBe(14);
    expect(counts.together).toBe(0);
    expect(counts.redone).toBe(0);
    expect(await s.entries()).toEqual(["w1", "w2", "w3", "w4", "w5", "a", "b", "c", "d", "e"]);
  } finally {
    await s.close();
  }
});

onPostgres("beside other keys: a refusal in one key's batch run in a row rolls it back; it runs again with savepoints, the others commit once", async () => {
  const s = await accounts("row-", ["k"], 10);
  const counts = s.store.health.counts;
  try {
    await Promise.all(["w1", "w2", "w3", "w4", "w5"].map((tag) => s.run("k", tag))); // 5 left
    counts.redone = 0;
    // The first alone; the next four in one batch, in a row: the third cannot be paid.
    const answers = await settled([s.run("k", "alone"), s.run("k", "b1"), s.run("k", "b2"), s.run("k", "b3", 100), s.run("k", "b4")]);
    expect(answers).toEqual([4, 3, 2, "insufficient: row-b3", 1]);
    expect(counts.redone).toBe(1);
    expect(await s.entries()).toEqual(["w1", "w2", "w3", "w4", "w5", "alone", "b1", "b2", "b4"]);
    // The slot calms down: its next batch of the key runs with savepoints (SAVEPOINT, UPDATE, INSERT, RELEASE each).
    counts.statements = 0;
    expect(await settled([s.run("k", "c0", 0), s.run("k", "c1", 0), s.run("k", "c2", 0)])).toEqual([1, 1, 1]);
    expect(counts.statements).toBe(4 + 2 + 2 * 4);
    expect(counts.redone).toBe(1);
  } finally {
    await s.close();
  }
});

onPostgres("beside other keys: one body of a batch run together fails; the batch is redone one body at a time, the others commit once", async () => {
  const s = await accounts("bad-", ["a0", "a1", "a2", "a3"], 3);
  try {
    await Promise.all(["a0", "a1", "a2", "a3"].map((a) => s.run(a, `warm-${a}`)));
    s.store.health.counts.together = 0;
    s.store.health.counts.redone = 0;
    const answers = await settled([s.run("a0", "alone"), s.run("a1", "x1"), s.run("a2", "x2", 5), s.run("a3", "x3")]);
    expect(answers).toEqual([1, 1, "insufficient: bad-x2", 1]);
    expect(s.store.health.counts.together).toBe(1);
    expect(s.store.health.counts.redone).toBe(1);
    expect((await s.entries()).sort()).toEqual(["alone", "warm-a0", "warm-a1", "warm-a2", "warm-a3", "x1", "x3"]);
  } finally {
    await s.close();
  }
});

onPostgres("beside other keys: a key whose transaction failed runs apart until one of its own succeeds; the others keep running together", async () => {
  const s = await accounts("apart-", ["a0", "a1", "a2", "a3", "poor"], 3);
  const counts = s.store.health.counts;
  try {
    await Promise.all(["a0", "a1", "a2", "a3", "poor"].map((a) => s.run(a, `warm-${a}`))); // 2 left each
    counts.together = 0;
    counts.redone = 0;
    // a0 alone; behind it a1, a2, a3 and a debit "poor" cannot pay: run together, rolled back, redone one at a time.
    expect(await settled([s.run("a0", "r1"), s.run("a1", "r1"), s.run("a2", "r1"), s.run("poor", "r1", 5), s.run("a3", "r1")])).toEqual([
      1,
      1,
      1,
      "insufficient: apart-r1",
      1,
    ]);
    expect([counts.together, counts.redone]).toEqual([1, 1]);
    // Its key is kept apart: a1 and a2 run together without it (no redo), then its refusal in a batch of its own.
    expect(await settled([s.run("a0", "r2", 0), s.run("a1", "r2", 0), s.run("poor", "r2", 5), s.run("a2", "r2", 0)])).toEqual([
      1,
      1,
      "insufficient: apart-r2",
      1,
    ]);
    expect([counts.together, counts.redone]).toEqual([2, 1]);
    // A debit it can pay, first in line: alone, and its key is no longer apart...
    expect(await settled([s.run("a0", "r3", 0), s.run("poor", "r3", 1), s.run("a1", "r3", 0)])).toEqual([1, 1, 1]);
    expect([counts.together, counts.redone]).toEqual([2, 1]);
    // ...so it runs together with the others again.
    expect(await settled([s.run("a0", "r4", 0), s.run("poor", "r4", 0), s.run("a1", "r4", 0), s.run("a2", "r4", 0)])).toEqual([1, 1, 1, 1]);
    expect([counts.together, counts.redone]).toEqual([3, 1]);
  } finally {
    await s.close();
  }
});

/** A waiting transaction as the runner keeps it, for the batch rules alone (no database). */
const waiting = (group: string, together: boolean | "beside other keys" = "beside other keys"): Member => ({
  fn: async () => group,
  resolve() {},
  reject() {},
  deadline: Number.POSITIVE_INFINITY,
  ms: 5_000,
  attempt: 1,
  group,
  together,
  withCommit: true,
});
const groups = (ms: Member[]) => ms.map((m) => m.group);

test("the batch rules: the first of each key when bodies run only beside other keys; the rest wait in order", () => {
  const queue = [waiting("p1"), waiting("p2"), waiting("p1"), waiting("p3"), waiting("p2")];
  const first = nextBatch(queue);
  expect(groups(first)).toEqual(["p1", "p2", "p3"]);
  expect(groups(queue)).toEqual(["p1", "p2"]);
  expect(mayRunTogether(first)).toBe(true);
  expect(groups(nextBatch(queue))).toEqual(["p1", "p2"]);
  expect(queue).toEqual([]);
  // One key only: all of them, one body at a time.
  const one = [waiting("p1"), waiting("p1"), waiting("p1")];
  const batch = nextBatch(one);
  expect(groups(batch)).toEqual(["p1", "p1", "p1"]);
  expect(mayRunTogether(batch)).toBe(false);
  // A body that may not run together keeps the batch as it came (the first 32), one body at a time.
  const mixed = [waiting("p1"), waiting("p2", false), waiting("p1")];
  expect(groups(nextBatch(mixed))).toEqual(["p1", "p2", "p1"]);
  // Bodies that may run together beside their own key too (credits) share a batch with it; a repeat of a key that
  // runs only beside others keeps the batch from running together.
  expect(mayRunTogether([waiting("s1", true), waiting("s1", true)])).toBe(true);
  expect(mayRunTogether([waiting("p1"), waiting("p1"), waiting("p2")])).toBe(false);
  expect(mayRunTogether([waiting("p1"), waiting("p2", true), waiting("p2", true)])).toBe(true);
});

test("the batch rules: a key kept apart stays out of batches run together, and gets a batch of its own when first in line", () => {
  const apart = new Apart();
  const failed = waiting("p1");
  apart.note([failed], [{ ok: false, error: new Error("refused") }]);
  const queue = [waiting("p2"), waiting("p1"), waiting("p3"), waiting("p1")];
  const together = nextBatch(queue, apart);
  expect(groups(together)).toEqual(["p2", "p3"]);
  expect(mayRunTogether(together, apart)).toBe(true);
  const own = nextBatch(queue, apart);
  expect(groups(own)).toEqual(["p1", "p1"]);
  expect(mayRunTogether(own, apart)).toBe(false);
  expect(mayRunTogether([waiting("p1"), waiting("p2")], apart)).toBe(false);
  // One of its own succeeded: no longer apart.
  apart.note([failed], [{ ok: true, value: 1 }]);
  expect(apart.has("p1")).toBe(false);
  expect(mayRunTogether([waiting("p1"), waiting("p2")], apart)).toBe(true);
});

test("the batch rules: at most 32 keys in a batch", () => {
  const queue = Array.from({ length: 40 }, (_, i) => waiting(`k${String(i).padStart(2, "0")}`));
  expect(nextBatch(queue).length).toBe(32);
  expect(groups(queue)).toEqual(Array.from({ length: 8 }, (_, i) => `k${32 + i}`));
});
