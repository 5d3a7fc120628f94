import { afterEach, describe, expect, test } from "bun:test";
import { BufferedWriter, type BufferedWriterOptions } from "../../src/db/buffered-writer";
import { UniqueViolation } from "../../src/db/port";
import { openTestApp, type TestApp } from "../support/app";

// src/db/buffered-writer.ts, what the request log and the RPC log write through. Its rules with a write of the test's
// own (order, flush, failure, triggers, timers), then over the storage port on both engines (HERALD_TEST_ENGINE=postgres
// for PostgreSQL): a batch is one transaction, a failed one is rolled back whole and its rows written by the next.

/** A writer whose writes are recorded (and, while `hold` is set, wait for it), and whose failures are counted. */
function fakeWriter(options: Partial<BufferedWriterOptions<number>> = {}) {
  const batches: number[][] = [];
  const failures: Array<{ err: unknown; rows: number }> = [];
  const state: { hold: Promise<void> | null; fail: Error | null } = { hold: null, fail: null };
  const writer = new BufferedWriter<number>({
    maxBuffered: 100,
    batchRows: 10,
    write: async (rows) => {
      if (state.hold) await state.hold;
      if (state.fail) throw state.fail;
      batches.push([...rows]);
    },
    failed: (err, rows) => failures.push({ err, rows }),
    ...options,
  });
  return { writer, batches, failures, state };
}

/** A promise and the function that resolves it. */
function gate(): { promise: Promise<void>; open: () => void } {
  let open = () => {};
  const promise = new Promise<void>((resolve) => {
    open = resolve;
  });
  return { promise, open };
}

/** The timers set while `fn` runs (the real ones, also returned to the caller), to check they are unref'd. */
function timersSetBy(fn: () => void): Array<{ hasRef(): boolean }> {
  const made: Array<{ hasRef(): boolean }> = [];
  const realTimeout = globalThis.setTimeout;
  const realInterval = globalThis.setInterval;
  const keep = <T>(timer: T) => {
    made.push(timer as { hasRef(): boolean });
    return timer;
  };
  globalThis.setTimeout = ((...args: Parameters<typeof setTimeout>) => keep(realTimeout(...args))) as typeof setTimeout;
  globalThis.setInterval = ((...args: Parameters<typeof setInterval>) => keep(realInterval(...args))) as typeof setInterval;
  try {
    fn();
  } finally {
    globalThis.setTimeout = realTimeout;
    globalThis.setInterval = realInterval;
  }
  return made;
}

describe("the writer's rules", () => {
  test("record() only buffers; flush() writes the rows in the order they were recorded, in one write", async () => {
    const { writer, batches } = fakeWriter();
    for (const n of [1, 2, 3]) writer.record(n);
    await Bun.sleep(0);
    expect(batches).toEqual([]);
    expect(writer.pending).toBe(3);
    expect(await writer.flush()).toBe(3);
    expect(batches).toEqual([[1, 2, 3]]);
    expect(writer.pending).toBe(0);
    expect(writer.batches).toBe(1);
    expect(await writer.flush()).toBe(0); // nothing buffered: no write
    expect(batches).toHaveLength(1);
  });

  test("writes run one after another: `await flush()` sees every row recorded before it, also those a write in progress missed", async () => {
    const { writer, batches, state } = fakeWriter();
    const held = gate();
    state.hold = held.promise;
    writer.record(1);
    const first = writer.flush();
    await Bun.sleep(0); // the first write has begun, with row 1, and waits
    writer.record(2);
    const second = writer.flush();
    writer.record(3);
    // A flush arriving while a write is queued (not begun) joins it.
    expect(writer.flush()).toBe(second);
    held.open();
    expect(await second).toBe(2);
    expect(await first).toBe(1);
    expect(batches).toEqual([[1], [2, 3]]);
  });

  test("a failed write keeps its rows, ahead of newer ones, for the next flush; flush() resolves 0 and never rejects", async () => {
    const { writer, batches, failures, state } = fakeWriter();
    writer.record(1);
    writer.record(2);
    state.fail = new Error("database is locked");
    expect(await writer.flush()).toBe(0);
    expect(failures).toEqual([{ err: state.fail, rows: 2 }]);
    expect(writer.pending).toBe(2);
    expect(writer.batches).toBe(0);
    writer.record(3);
    state.fail = null;
    expect(await writer.flush()).toBe(3);
    expect(batches).toEqual([[1, 2, 3]]);
  });

  test("past maxBuffered rows are dropped and counted; rows put back after a failure stay within it", async () => {
    const { writer, state } = fakeWriter({ maxBuffered: 5, batchRows: 100 });
    for (let n = 1; n <= 7; n++) writer.record(n);
    expect(writer.pending).toBe(5);
    expect(writer.dropped).toBe(2);
    const held = gate();
    state.hold = held.promise;
    state.fail = new Error("gone");
    const failing = writer.flush();
    await Bun.sleep(0);
    for (let n = 8; n <= 11; n++) writer.record(n); // arrive while the write is in flight
    held.open();
    await failing;
    expect(writer.pending).toBe(5); // the five put back first, the newer ones cut
  });

  test("the batchRows-th row starts a write by itself", async () => {
    const { writer, batches } = fakeWriter({ batchRows: 4 });
    for (let n = 1; n <= 3; n++) writer.record(n);
    await Bun.sleep(1);
    expect(batches).toEqual([]);
    writer.record(4);
    for (let i = 0; i < 50 && batches.length === 0; i++) await Bun.sleep(1);
    expect(batches).toEqual([[1, 2, 3, 4]]);
  });

  test("start(): a write every interval, on an unref'd timer (it never keeps the process alive); stop() writes what is left", async () => {
    const { writer, batches } = fakeWriter();
    let started = false;
    const timers = timersSetBy(() => {
      started = writer.start(5);
    });
    expect(started).toBe(true);
    expect(writer.start(5)).toBe(false); // one interval only
    expect(timers).toHaveLength(1);
    expect(timers[0]!.hasRef()).toBe(false);
    expect(writer.running).toBe(true);
    writer.record(1);
    for (let i = 0; i < 100 && batches.length === 0; i++) await Bun.sleep(2);
    expect(batches).toEqual([[1]]);
    writer.record(2);
    expect(await writer.stop()).toBe(1);
    expect(writer.running).toBe(false);
    expect(batches).toEqual([[1], [2]]);
  });

  test("flushAfterMs: the first row of a batch sets an unref'd timer, a flush clears it, and none is set after stop()", async () => {
    const { writer, batches } = fakeWriter({ flushAfterMs: 5 });
    const timers = timersSetBy(() => {
      writer.record(1);
      writer.record(2); // the timer is set already
    });
    expect(timers).toHaveLength(1);
    expect(timers[0]!.hasRef()).toBe(false);
    for (let i = 0; i < 100 && batches.length === 0; i++) await Bun.sleep(2);
    expect(batches).toEqual([[1, 2]]);
    // A flush before the timer fires writes at once and clears it: no second, empty write.
    writer.record(3);
    expect(await writer.flush()).toBe(1);
    await Bun.sleep(15);
    expect(batches).toEqual([[1, 2], [3]]);
    await writer.stop();
    expect(timersSetBy(() => writer.record(4))).toHaveLength(0);
    expect(writer.pending).toBe(1);
  });
});

describe("over the storage port", () => {
  let h: TestApp | undefined;
  afterEach(async () => {
    await h?.close();
    h = undefined;
  });

  /** A writer into a table of the test's own, one transaction a batch; `failures` collects what it was told. */
  async function portWriter() {
    h = await openTestApp();
    await h.ctx.store.run("CREATE TABLE bw_rows (n integer PRIMARY KEY)");
    const store = h.ctx.store;
    const failures: unknown[] = [];
    const writer = new BufferedWriter<number>({
      maxBuffered: 1000,
      batchRows: 1000,
      write: async (rows) => {
        await store.tx(async (t) => {
          await Promise.all(rows.map((n) => t.run("INSERT INTO bw_rows (n) VALUES (?)", [n])));
        });
      },
      failed: (err) => failures.push(err),
    });
    const stored = async () => (await store.all<{ n: number }>("SELECT n FROM bw_rows ORDER BY n")).map((r) => r.n);
    return { writer, store, failures, stored };
  }

  test("`await flush()` sees every earlier row in the database, also those recorded while a write was committing", async () => {
    const { writer, stored } = await portWriter();
    for (let n = 1; n <= 50; n++) writer.record(n);
    const first = writer.flush();
    // The write begins a few microtasks later (it takes the buffer), then waits for its commit.
    for (let i = 0; i < 100 && writer.pending > 0; i++) await Promise.resolve();
    expect(writer.pending).toBe(0);
    for (let n = 51; n <= 60; n++) writer.record(n);
    expect(await writer.flush()).toBe(10);
    expect(await first).toBe(50);
    expect(await stored()).toEqual(Array.from({ length: 60 }, (_, i) => i + 1));
  });

  test("a batch that fails is rolled back whole and kept: the next flush writes every row of it", async () => {
    const { writer, store, failures, stored } = await portWriter();
    await store.run("INSERT INTO bw_rows (n) VALUES (3)");
    for (let n = 1; n <= 5; n++) writer.record(n);
    expect(await writer.flush()).toBe(0);
    expect(failures).toHaveLength(1);
    expect(failures[0]).toBeInstanceOf(UniqueViolation);
    expect(await stored()).toEqual([3]); // rows 1, 2, 4 and 5 of the failed batch were rolled back with it
    expect(writer.pending).toBe(5);
    await store.run("DELETE FROM bw_rows WHERE n = 3");
    expect(await writer.flush()).toBe(5);
    expect(await stored()).toEqual([1, 2, 3, 4, 5]);
  });

  test("stop() writes what is buffered before the store closes", async () => {
    const { writer, stored } = await portWriter();
    writer.start(60_000);
    writer.record(7);
    expect(await writer.stop()).toBe(1);
    expect(await stored()).toEqual([7]);
  });
});
