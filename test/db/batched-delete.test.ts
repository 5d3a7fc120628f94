import { afterEach, beforeEach, describe, expect, test } from "bun:test";
import { deleteInBatches } from "../../src/db/batched-delete";
import { openTestApp, type TestApp } from "../support/app";
import { CountingStore } from "../support/counting-store";

// src/db/batched-delete.ts on both engines (HERALD_TEST_ENGINE=postgres for PostgreSQL), over tables of the test's
// own: a delete over more rows than one batch is several short statements that leave the kept rows; the time bound
// leaves rows for the next call, which finishes; children go with their parents, batch by batch; the event loop runs
// between batches. The prunes of each domain are tested in test/db/prunes-in-batches.test.ts.

let h: TestApp;
let store: CountingStore;

const DDL = [
  "CREATE TABLE bd_parents (id integer PRIMARY KEY, at text NOT NULL, state text NOT NULL)",
  "CREATE INDEX bd_parents_at_idx ON bd_parents (at)",
  "CREATE TABLE bd_children (id integer PRIMARY KEY, parent_id integer NOT NULL REFERENCES bd_parents (id), n integer NOT NULL)",
  "CREATE INDEX bd_children_parent_idx ON bd_children (parent_id)",
  "CREATE TABLE bd_notes (id integer PRIMARY KEY, parent_id integer, note text NOT NULL)",
  "CREATE INDEX bd_notes_parent_idx ON bd_notes (parent_id)",
  "CREATE TABLE bd_rows (id integer PRIMARY KEY, at text NOT NULL)",
  "CREATE INDEX bd_rows_at_idx ON bd_rows (at)",
  "CREATE TABLE bd_pairs (a text NOT NULL, b text NOT NULL, at text NOT NULL, PRIMARY KEY (a, b))",
  "CREATE INDEX bd_pairs_at_idx ON bd_pairs (at)",
];

beforeEach(async () => {
  h = await openTestApp();
  for (const statement of DDL) await h.ctx.store.run(statement);
  store = new CountingStore(h.ctx.store);
});
afterEach(async () => {
  await h?.close();
});

const OLD = "2025-01-01T00:00:00.000Z";
const NEW = "2025-06-01T00:00:00.000Z";
const CUTOFF = "2025-03-01T00:00:00.000Z";

/** Parents 1…old (before the cutoff) and old+1…old+kept (after), each with two children and a note. */
async function seedParents(old: number, kept: number): Promise<void> {
  await h.ctx.store.tx(async (t) => {
    for (let id = 1; id <= old + kept; id++) {
      await t.run("INSERT INTO bd_parents (id, at, state) VALUES (?, ?, 'done')", [id, id <= old ? OLD : NEW]);
      await t.run("INSERT INTO bd_children (id, parent_id, n) VALUES (?, ?, 1), (?, ?, 2)", [2 * id, id, 2 * id + 1, id]);
      await t.run("INSERT INTO bd_notes (id, parent_id, note) VALUES (?, ?, 'n')", [id, id]);
    }
  });
}

async function seedRows(old: number, kept: number): Promise<void> {
  await h.ctx.store.tx(async (t) => {
    for (let id = 1; id <= old + kept; id++) await t.run("INSERT INTO bd_rows (id, at) VALUES (?, ?)", [id, id <= old ? OLD : NEW]);
  });
}

async function seedPairs(old: number, kept: number): Promise<void> {
  await h.ctx.store.tx(async (t) => {
    for (let i = 0; i < old + kept; i++) await t.run("INSERT INTO bd_pairs (a, b, at) VALUES (?, ?, ?)", [`a${i % 7}`, `b${i}`, i < old ? OLD : NEW]);
  });
}

const count = async (sql: string) => (await h.ctx.store.get<{ n: number }>(sql))!.n;

// A table alone goes by the row's address (rowid / ctid) whatever its key: an integer key, or two text columns.
describe.each([
  ["an integer key", "bd_rows", (n: number, k: number) => seedRows(n, k)],
  ["a key of two text columns", "bd_pairs", (n: number, k: number) => seedPairs(n, k)],
] as const)("a table alone, with %s", (_, table, seed) => {
  test("more rows than one batch: all deleted over several statements, one row-set each; the rows to keep stay", async () => {
    await seed(25, 5);
    const r = await deleteInBatches(store, { table, where: "at < ?", params: [CUTOFF], batchRows: 10 });
    expect(r).toEqual({ deleted: 25, statements: 3, done: true, children: {} });
    // Three DELETEs of at most 10 rows each (10, 10, 5), outside any transaction, each with its LIMIT.
    expect(store.runs.map((s) => [s.sql.startsWith(`DELETE FROM ${table} WHERE`), s.params.at(-1), s.inTx])).toEqual([
      [true, 10, false],
      [true, 10, false],
      [true, 10, false],
    ]);
    expect(await count(`SELECT count(*) AS n FROM ${table} WHERE at < '${CUTOFF}'`)).toBe(0);
    expect(await count(`SELECT count(*) AS n FROM ${table}`)).toBe(5);
  });

  test("a multiple of the batch: the last, empty batch ends it", async () => {
    await seed(20, 1);
    const r = await deleteInBatches(store, { table, where: "at < ?", params: [CUTOFF], batchRows: 10 });
    expect(r).toMatchObject({ deleted: 20, statements: 3, done: true });
  });

  test("the time bound leaves rows for the next call, which finishes them", async () => {
    await seed(25, 5);
    // maxMs 0: one batch, then the bound has passed.
    const first = await deleteInBatches(store, { table, where: "at < ?", params: [CUTOFF], batchRows: 10, maxMs: 0 });
    expect(first).toMatchObject({ deleted: 10, statements: 1, done: false });
    expect(await count(`SELECT count(*) AS n FROM ${table}`)).toBe(20);
    const next = await deleteInBatches(store, { table, where: "at < ?", params: [CUTOFF], batchRows: 10 });
    expect(next).toMatchObject({ deleted: 15, statements: 2, done: true });
    expect(await count(`SELECT count(*) AS n FROM ${table}`)).toBe(5);
  });

  test("nothing to delete: one statement, done", async () => {
    await seed(0, 3);
    expect(await deleteInBatches(store, { table, where: "at < ?", params: [CUTOFF] })).toMatchObject({ deleted: 0, statements: 1, done: true });
  });
});

describe("children with their parents", () => {
  const spec = {
    table: "bd_parents",
    key: "id",
    where: "at < ? AND state = 'done'",
    params: [CUTOFF],
    children: [
      { table: "bd_children", column: "parent_id" },
      { table: "bd_notes", column: "parent_id", action: "detach" as const },
    ],
  };

  test("each batch is one transaction: parents chosen first (LIMIT), their children deleted (or detached) before them", async () => {
    await seedParents(9, 3);
    const r = await deleteInBatches(store, { ...spec, batchRows: 4 });
    expect(r).toMatchObject({ deleted: 9, done: true, children: { bd_children: 18, bd_notes: 9 } });
    expect(store.transactions).toBe(3); // 4, 4, 1
    expect(store.runs.every((s) => s.inTx)).toBe(true);
    // Per batch: the children's statements, then the parents'.
    expect(store.runs.map((s) => s.sql.split(" ").slice(0, 3).join(" "))).toEqual(
      Array(3).fill(["DELETE FROM bd_children", "UPDATE bd_notes SET", "DELETE FROM bd_parents"]).flat(),
    );
    expect(r.statements).toBe(store.sent.length);
    expect(await h.ctx.store.all("SELECT id FROM bd_parents ORDER BY id")).toEqual([{ id: 10 }, { id: 11 }, { id: 12 }]);
    expect(await count("SELECT count(*) AS n FROM bd_children")).toBe(6);
    expect(await count("SELECT count(*) AS n FROM bd_children WHERE parent_id <= 9")).toBe(0);
    // Detached notes stay, without their parent; the kept parents' notes keep theirs.
    expect(await count("SELECT count(*) AS n FROM bd_notes WHERE parent_id IS NULL")).toBe(9);
    expect(await count("SELECT count(*) AS n FROM bd_notes WHERE parent_id > 9")).toBe(3);
  });

  test("the time bound stops between two batches' transactions; the next call goes on", async () => {
    await seedParents(9, 3);
    expect(await deleteInBatches(store, { ...spec, batchRows: 4, maxMs: 0 })).toMatchObject({ deleted: 4, done: false });
    // No parent of the first batch is left with children, nor a child without its parent (the foreign key holds).
    expect(await count("SELECT count(*) AS n FROM bd_children c LEFT JOIN bd_parents p ON p.id = c.parent_id WHERE p.id IS NULL")).toBe(0);
    expect(await count("SELECT count(*) AS n FROM bd_parents")).toBe(8);
    expect(await deleteInBatches(store, { ...spec, batchRows: 4 })).toMatchObject({ deleted: 5, done: true });
    expect(await count("SELECT count(*) AS n FROM bd_parents")).toBe(3);
  });

  test("children without the table's key are refused", async () => {
    await expect(deleteInBatches(store, { ...spec, key: undefined })).rejects.toThrow(/children need the table's key/);
  });
});

test("the event loop runs between batches (on SQLite every statement runs on this thread)", async () => {
  await seedPairs(50, 0);
  let turns = 0;
  let pruning = true;
  const other = (async () => {
    while (pruning) {
      await new Promise<void>((resolve) => setImmediate(resolve));
      turns++;
    }
  })();
  const r = await deleteInBatches(store, { table: "bd_pairs", where: "at < ?", params: [CUTOFF], batchRows: 5 });
  pruning = false;
  await other;
  expect(r).toMatchObject({ deleted: 50, statements: 11, done: true });
  // Ten full batches, each followed by a turn of the loop that other work (here: a request's) takes.
  expect(turns).toBeGreaterThanOrEqual(10);
});
