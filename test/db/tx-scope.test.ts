// TxScope (src/db/port.ts): a mutation's effect leaves what it sends and does not wait for with `t.behind()`, and
// that work is the transaction's — its failure rolls everything back, on either engine. `settlingBehind()` is the
// same for a caller inside a transaction of its own making (a savepoint, the sandbox's fixtures).
import { afterEach, beforeEach, expect, test } from "bun:test";
import { settlingBehind, withBehind } from "../../src/db/port";
import { openTestApp, type TestApp } from "../support/app";

let h: TestApp;
beforeEach(async () => {
  h = await openTestApp();
  await h.ctx.store.run("CREATE TABLE tx_scope_probe (id integer PRIMARY KEY)");
});
afterEach(async () => {
  await h?.close();
});

const rows = async () => (await h.ctx.store.all<{ id: number }>("SELECT id FROM tx_scope_probe ORDER BY id")).map((r) => r.id);

test("work left behind commits with the transaction", async () => {
  const out = await h.ctx.store.tx((t) =>
    settlingBehind(t, async (s) => {
      s.behind(s.run("INSERT INTO tx_scope_probe (id) VALUES (1)"));
      await s.run("INSERT INTO tx_scope_probe (id) VALUES (2)");
      return "done";
    }),
  );
  expect(out).toBe("done");
  expect(await rows()).toEqual([1, 2]);
});

test("work left behind that fails is the transaction's failure: nothing of it stays", async () => {
  const tx = h.ctx.store.tx((t) =>
    settlingBehind(t, async (s) => {
      await s.run("INSERT INTO tx_scope_probe (id) VALUES (3)");
      s.behind(s.run("INSERT INTO tx_scope_probe (id) VALUES (3)")); // a duplicate key, not awaited here
      return "answered";
    }),
  );
  await expect(tx).rejects.toThrow();
  expect(await rows()).toEqual([]);
});

test("a body that fails waits for its work left behind before failing (nothing is left unsettled)", async () => {
  let settled = false;
  const tx = h.ctx.store.tx((t) =>
    settlingBehind(t, async (s) => {
      s.behind(s.run("INSERT INTO tx_scope_probe (id) VALUES (4)").finally(() => (settled = true)));
      throw new Error("refused");
    }),
  );
  await expect(tx).rejects.toThrow("refused");
  expect(settled).toBe(true);
  expect(await rows()).toEqual([]);
});

test("withBehind keeps the handle's engine and statements", async () => {
  const seen: Array<Promise<unknown>> = [];
  await h.ctx.store.tx(async (t) => {
    const s = withBehind(t, (w) => void seen.push(w));
    expect(s.dialect).toBe(t.dialect);
    s.behind(s.run("INSERT INTO tx_scope_probe (id) VALUES (5)"));
    await Promise.all(seen);
    expect(await s.get<{ n: number }>("SELECT COUNT(*) AS n FROM tx_scope_probe")).toEqual({ n: 1 });
  });
  expect(seen).toHaveLength(1);
  expect(await rows()).toEqual([5]);
});
