// DATABASE_BATCH_SLOTS (src/db/postgres-batches.ts): grouped transactions run in at most that many batches at once
// (never more than DATABASE_POOL_MAX − 1), so under load each batch gathers more transactions and shares one COMMIT.
import { expect } from "bun:test";
import { PostgresStore } from "../../src/db/postgres-engine";
import { wireDatabase } from "../support/counting-proxy";
import { testOn } from "../support/skipped";

const onPostgres = testOn("postgres", "test/db/batch-slots.test.ts");
const db = wireDatabase("CREATE TABLE slot_rows (id serial PRIMARY KEY, tag text NOT NULL)");

/** Ten grouped transactions of ten keys, all at once: how many COMMITs carried them. */
async function commitsFor(options: { poolMax: number; batchSlots?: number }, prefix: string): Promise<number> {
  const store = new PostgresStore({ url: db.url(), ...options });
  try {
    await store.run("SELECT 1"); // the pool is open
    const before = store.health.counts.commits;
    const tags = Array.from({ length: 10 }, (_, i) => `${prefix}-${i}`);
    await Promise.all(tags.map((tag) => store.tx((t) => t.run("INSERT INTO slot_rows (tag) VALUES (?)", [tag]), { group: tag })));
    expect((await store.all<{ tag: string }>("SELECT tag FROM slot_rows WHERE tag LIKE ? ORDER BY tag", [`${prefix}-%`])).map((r) => r.tag)).toEqual(
      tags.sort(),
    );
    return store.health.counts.commits - before;
  } finally {
    await store.close();
  }
}

onPostgres("grouped transactions run in at most DATABASE_BATCH_SLOTS batches at once, and never on every connection", async () => {
  // Two slots: the first two run alone at once; the eight behind them make one batch in each slot.
  expect(await commitsFor({ poolMax: 10, batchSlots: 2 }, "two")).toBe(4);
  // The default, three: three alone, then seven in three batches.
  expect(await commitsFor({ poolMax: 10 }, "default")).toBe(6);
  // Nine slots (all but one of ten connections): nine alone, the tenth behind the first.
  expect(await commitsFor({ poolMax: 10, batchSlots: 20 }, "many")).toBe(10);
  // Never more than DATABASE_POOL_MAX − 1: with two connections, one slot; one alone, then nine in one batch.
  expect(await commitsFor({ poolMax: 2, batchSlots: 3 }, "pool")).toBe(2);
});
