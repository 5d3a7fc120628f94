// Herald's own deadlines on PostgreSQL (src/db/postgres-engine.ts): a statement, a transaction and the wait for a
// pooled connection each end at their deadline with StoreUnavailable; what was running is cancelled on the server
// (no statement runs on after its caller gave up); a transaction's connection is discarded, not reused; deadlocks
// are run again instead of reaching the caller; and after an outage one statement at a time tries the server.
// The frozen-server case, with a real `herald serve`, is test/postgres/frozen-database.test.ts.
import { afterAll, beforeAll, expect } from "bun:test";
import { PostgresStore } from "../../src/db/postgres-engine";
import { SerializationFailure, StoreUnavailable } from "../../src/db/port";
import { freshPostgresDatabase, testEngine } from "../support/engine";
import { testOn } from "../support/skipped";

const pg = testEngine() === "postgres";
const onPostgres = testOn("postgres", "test/db/deadlines.test.ts");
let url = "";
let drop: (() => Promise<void>) | null = null;
let observer: PostgresStore | null = null;

beforeAll(async () => {
  if (!pg) return;
  const db = await freshPostgresDatabase();
  url = db.url;
  drop = db.drop;
  observer = new PostgresStore({ url, poolMax: 1 });
  await observer.run("CREATE TABLE deadline_rows (id integer PRIMARY KEY, v integer NOT NULL)");
  await observer.run("INSERT INTO deadline_rows (id, v) VALUES (1, 0), (2, 0)");
});
afterAll(async () => {
  await observer?.close();
  await drop?.();
});

/** Statements of this test's database still running pg_sleep (a cancelled one is gone within a moment). */
async function sleepersLeft(): Promise<number> {
  for (let i = 0; i < 40; i++) {
    const row = await observer!.get<{ n: number }>(
      "SELECT count(*) AS n FROM pg_stat_activity WHERE datname = current_database() AND query LIKE 'SELECT pg_sleep%' AND state = 'active'",
    );
    if (row!.n === 0) return 0;
    await Bun.sleep(50);
  }
  return 1;
}

async function rejection(work: Promise<unknown>): Promise<{ error: unknown; ms: number }> {
  const t0 = performance.now();
  try {
    await work;
    return { error: null, ms: performance.now() - t0 };
  } catch (error) {
    return { error, ms: performance.now() - t0 };
  }
}

onPostgres("a statement past DATABASE_QUERY_TIMEOUT_MS is StoreUnavailable at its deadline and cancelled on the server", async () => {
  const store = new PostgresStore({ url, poolMax: 2, queryTimeoutMs: 300 });
  try {
    const r = await rejection(store.get("SELECT pg_sleep(5)"));
    expect(r.error).toBeInstanceOf(StoreUnavailable);
    expect(String((r.error as Error).message)).toContain("DATABASE_QUERY_TIMEOUT_MS");
    expect(r.ms).toBeGreaterThanOrEqual(290);
    expect(r.ms).toBeLessThan(1_300);
    expect(await sleepersLeft()).toBe(0);
    // The server answered the cancellation: the pool goes on as before, and no outage began.
    expect(store.health.down).toBe(false);
    expect(await store.get<{ x: number }>("SELECT 1 AS x")).toEqual({ x: 1 });
    expect(store.health.counts.deadlines).toBe(1);
    expect(store.health.counts.discarded).toBe(0);
  } finally {
    await store.close();
  }
});

onPostgres("a transaction past DATABASE_TRANSACTION_TIMEOUT_MS is StoreUnavailable, rolled back, cancelled, its connection discarded", async () => {
  const store = new PostgresStore({ url, poolMax: 2, transactionTimeoutMs: 400 });
  try {
    const r = await rejection(
      store.tx(async (t) => {
        await t.run("UPDATE deadline_rows SET v = v + 1 WHERE id = 1");
        await t.get("SELECT pg_sleep(5)");
      }),
    );
    expect(r.error).toBeInstanceOf(StoreUnavailable);
    expect(String((r.error as Error).message)).toContain("DATABASE_TRANSACTION_TIMEOUT_MS");
    expect(r.ms).toBeLessThan(1_400);
    expect(await sleepersLeft()).toBe(0);
    expect((await observer!.get<{ v: number }>("SELECT v FROM deadline_rows WHERE id = 1"))!.v).toBe(0);
    expect(store.health.counts.discarded).toBe(1);
    // The row lock went with the discarded connection: the next transaction takes it at once.
    await store.tx((t) => t.run("UPDATE deadline_rows SET v = v + 1 WHERE id = 1"));
    expect((await observer!.get<{ v: number }>("SELECT v FROM deadline_rows WHERE id = 1"))!.v).toBe(1);
  } finally {
    await store.close();
  }
});

onPostgres("a transaction waits at most DATABASE_ACQUIRE_TIMEOUT_MS for a pooled connection", async () => {
  const store = new PostgresStore({ url, poolMax: 1, acquireTimeoutMs: 200, transactionTimeoutMs: 3_000 });
  try {
    const holder = store.tx(async (t) => {
      await t.get("SELECT pg_sleep(1)");
    });
    await Bun.sleep(100);
    const r = await rejection(store.tx(async (t) => t.get("SELECT 1")));
    expect(r.error).toBeInstanceOf(StoreUnavailable);
    expect(String((r.error as Error).message)).toContain("DATABASE_ACQUIRE_TIMEOUT_MS");
    expect(r.ms).toBeLessThan(900);
    await holder;
    // Having given up, the waiting transaction never runs later: only the holder's work happened.
    expect(await store.tx(async (t) => (await t.get<{ x: number }>("SELECT 2 AS x"))!.x)).toBe(2);
  } finally {
    await store.close();
  }
});

onPostgres("a deadlock is run again inside the port: both transactions commit, the retry is counted", async () => {
  const store = new PostgresStore({ url, poolMax: 4 });
  try {
    await observer!.run("UPDATE deadline_rows SET v = 0");
    // Two transactions lock the two rows in opposite orders, each waiting for the other: PostgreSQL ends one with
    // 40P01, which the port runs again once the other has committed.
    const both = await Promise.allSettled(
      [
        [1, 2],
        [2, 1],
      ].map(([first, second]) =>
        store.tx(async (t) => {
          await t.run("UPDATE deadline_rows SET v = v + 1 WHERE id = ?", [first!]);
          await t.get("SELECT pg_sleep(0.2)");
          await t.run("UPDATE deadline_rows SET v = v + 1 WHERE id = ?", [second!]);
        }),
      ),
    );
    expect(both.map((b) => b.status)).toEqual(["fulfilled", "fulfilled"]);
    expect((await observer!.all<{ v: number }>("SELECT v FROM deadline_rows ORDER BY id")).map((r) => r.v)).toEqual([2, 2]);
    expect(store.health.counts.retries).toBeGreaterThanOrEqual(1);
  } finally {
    await store.close();
  }
});

onPostgres("a transaction that keeps losing its race reaches the caller as SerializationFailure after a bounded number of runs", async () => {
  const store = new PostgresStore({ url, poolMax: 2 });
  try {
    let runs = 0;
    const r = await rejection(
      store.tx(async (t) => {
        runs++;
        // A serialization failure raised by the server itself, every time.
        await t.run("DO $$ BEGIN RAISE EXCEPTION USING ERRCODE = '40001', MESSAGE = 'could not serialize access'; END $$");
      }),
    );
    expect(r.error).toBeInstanceOf(SerializationFailure);
    expect(runs).toBe(4);
    expect(store.health.counts.retries).toBe(3);
  } finally {
    await store.close();
  }
});

onPostgres("a slow statement on a live server ends at its deadline without starting an outage", async () => {
  const store = new PostgresStore({ url, poolMax: 2, queryTimeoutMs: 300 });
  try {
    expect((await rejection(store.get("SELECT pg_sleep(5)"))).error).toBeInstanceOf(StoreUnavailable);
    // The server answered the cancellation: it is there, so nothing is refused at once and no outage is logged.
    await Bun.sleep(1_200);
    expect(store.health.down).toBe(false);
    expect(await Promise.all([store.get<{ x: number }>("SELECT 1 AS x"), store.get<{ x: number }>("SELECT 2 AS x")])).toEqual([{ x: 1 }, { x: 2 }]);
    expect(store.health.counts.shed).toBe(0);
  } finally {
    await store.close();
  }
});

onPostgres("a server that accepts connections but never answers: every interaction is refused at once while a probe tries it", async () => {
  // A listener that takes the connection and says nothing, as a frozen host or a black-holed route looks.
  const silent = Bun.listen({ hostname: "127.0.0.1", port: 0, socket: { data() {} } });
  const store = new PostgresStore({ url: `postgres://herald@127.0.0.1:${silent.port}/none`, poolMax: 2, connectTimeoutMs: 1_000, queryTimeoutMs: 3_000 });
  try {
    const first = await rejection(store.get("SELECT 1"));
    expect(first.error).toBeInstanceOf(StoreUnavailable);
    expect(first.ms).toBeLessThan(2_500);
    expect(store.health.down).toBe(true);
    // From now on nothing waits: statements and transactions alike are refused while the probe runs.
    for (const work of [store.get("SELECT 1"), store.tx(async (t) => t.get("SELECT 1")), store.ping({ timeoutMs: 700 })]) {
      const shed = await rejection(work);
      expect(shed.error).toBeInstanceOf(StoreUnavailable);
      expect(String((shed.error as Error).message)).toContain("tries it in the background");
      expect(shed.ms).toBeLessThan(50);
    }
    expect(store.health.counts.shed).toBe(3);
    expect(store.health.counts.outages).toBe(1);
  } finally {
    await store.close().catch(() => {});
    silent.stop(true);
  }
});

onPostgres("the probe opens the gate as soon as the server answers again", async () => {
  // A proxy to the test database that holds every connection (accepts, forwards nothing) while `blocked`.
  const target = new URL(url);
  let blocked = true;
  const proxy = Bun.listen<{ upstream: Promise<import("bun").Socket<unknown>> | null; pending: Uint8Array[] }>({
    hostname: "127.0.0.1",
    port: 0,
    socket: {
      open(client) {
        client.data = { upstream: null, pending: [] };
        if (blocked) return;
        client.data.upstream = Bun.connect({
          hostname: target.hostname,
          port: Number(target.port),
          socket: {
            data: (_s, chunk) => void client.write(chunk),
            close: () => void client.end(),
            error: () => void client.end(),
          },
        });
      },
      data(client, chunk) {
        if (client.data.upstream) void client.data.upstream.then((u) => u.write(chunk));
      },
      close(client) {
        void client.data.upstream?.then((u) => u.end());
      },
    },
  });
  const viaProxy = url.replace(`${target.hostname}:${target.port}`, `127.0.0.1:${proxy.port}`);
  const store = new PostgresStore({ url: viaProxy, poolMax: 2, connectTimeoutMs: 1_000, queryTimeoutMs: 2_000 });
  try {
    expect((await rejection(store.get("SELECT 1"))).error).toBeInstanceOf(StoreUnavailable);
    expect((await rejection(store.get("SELECT 1"))).error).toBeInstanceOf(StoreUnavailable);
    blocked = false;
    const opened = performance.now();
    let answered: number | null = null;
    for (let i = 0; i < 60 && answered === null; i++) {
      const r = await rejection(store.get<{ x: number }>("SELECT 1 AS x"));
      if (r.error === null) answered = performance.now() - opened;
      else await Bun.sleep(50);
    }
    // The probe's try in flight waits out its 1 s connection deadline, then the next one gets through.
    expect(answered).not.toBeNull();
    expect(answered!).toBeLessThan(2_500);
    expect(store.health.counts.shed).toBeGreaterThan(0);
  } finally {
    await store.close().catch(() => {});
    proxy.stop(true);
  }
});

onPostgres(
  "back-to-back grouped batches keep their connection, and give it back: the pool is whole after a burst, a batch closed at its deadline takes its connection along",
  async () => {
    const store = new PostgresStore({ url, poolMax: 3 });
    try {
      await observer!.run("UPDATE deadline_rows SET v = 0");
      // 120 transactions on two keys at once: two slots, each runs batches of up to 16 one after another.
      const pids = await Promise.all(
        Array.from({ length: 120 }, (_, i) =>
          store.tx(
            async (t) => {
              await t.run("UPDATE deadline_rows SET v = v + 1 WHERE id = ?", [1 + (i % 2)]);
              return (await t.get<{ pid: number }>("SELECT pg_backend_pid() AS pid"))!.pid;
            },
            { group: `row:${1 + (i % 2)}` },
          ),
        ),
      );
      expect((await observer!.all<{ v: number }>("SELECT v FROM deadline_rows ORDER BY id")).map((r) => r.v)).toEqual([60, 60]);
      // Each key's batches ran on its slot's one connection, kept from batch to batch.
      expect(new Set(pids.filter((_, i) => i % 2 === 0)).size).toBe(1);
      expect(new Set(pids.filter((_, i) => i % 2 === 1)).size).toBe(1);
      expect(store.health.pool!.busy).toBe(0);
      // A batch closed at its deadline takes its connection with it: the batch waiting behind it gets another.
      let slowPid = 0;
      const slow = rejection(
        store.tx(
          async (t) => {
            slowPid = (await t.get<{ pid: number }>("SELECT pg_backend_pid() AS pid"))!.pid;
            await t.get("SELECT pg_sleep(5)");
          },
          { group: "row:1", timeoutMs: 300 },
        ),
      );
      await Bun.sleep(50);
      const next = store.tx(async (t) => (await t.get<{ pid: number }>("SELECT pg_backend_pid() AS pid"))!.pid, { group: "row:1" });
      expect(((await slow).error as Error).message).toContain("DATABASE_TRANSACTION_TIMEOUT_MS");
      expect(slowPid).toBeGreaterThan(0);
      expect(await next).not.toBe(slowPid);
      expect(store.health.pool!.busy).toBe(0);
    } finally {
      const t0 = performance.now();
      await store.close();
      // Nothing held back the close: no connection was left reserved.
      expect(performance.now() - t0).toBeLessThan(2_000);
    }
  },
);

onPostgres("a lost session ends an outage by itself once the server answers again, with no statement or job tick to notice it", async () => {
  const store = new PostgresStore({ url, poolMax: 2, queryTimeoutMs: 2_000, applicationName: "herald outage-end" });
  try {
    const running = rejection(store.get("SELECT pg_sleep(5)"));
    let terminated = 0;
    for (let i = 0; i < 40 && terminated === 0; i++) {
      const rows = await observer!.all(
        "SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE application_name = 'herald outage-end' AND query LIKE 'SELECT pg_sleep%' AND state = 'active'",
      );
      terminated = rows.length;
      if (!terminated) await Bun.sleep(25);
    }
    expect(terminated).toBe(1);
    expect((await running).error).toBeInstanceOf(StoreUnavailable);
    expect(store.health.down).toBe(true);
    // Nothing else is asked of the store: a quiet instance whose jobs are held back by the outage itself.
    const t0 = performance.now();
    while (store.health.down && performance.now() - t0 < 5_000) await Bun.sleep(50);
    expect(store.health.down).toBe(false);
    expect(performance.now() - t0).toBeLessThan(3_000);
    expect(store.health.counts.outages).toBe(1);
  } finally {
    await store.close();
  }
});
