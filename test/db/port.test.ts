import { Database } from "bun:sqlite";
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { type Store, StoreUnavailable, UniqueViolation, UnstorableText } from "../../src/db/port";
import { PostgresStore } from "../../src/db/postgres-engine";
import { toDollarPlaceholders } from "../../src/db/postgres-wire";
import { BodyAwaitedOutsideStore, SqliteStore } from "../../src/db/sqlite-engine";
import { postgresPresent, startCluster, type TestCluster } from "../support/postgres";

// The storage port's contract, the same cases on both engines: SQLite over a real WAL file (a writer and a
// one connection), PostgreSQL on a throwaway cluster from Debian's package (test/support/postgres.ts).
// SQL is written once, with ? placeholders, in the portable subset.

const pg = postgresPresent("test/db/port.test.ts");
let cluster: TestCluster | undefined;
let dir = "";

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), "herald-port-"));
  if (pg) cluster = await startCluster();
}, 120_000);
afterAll(() => {
  cluster?.stop();
  rmSync(dir, { recursive: true, force: true });
});

let n = 0;
function sqliteStore(): Store {
  const path = join(dir, `port-${++n}.db`);
  const writer = new Database(path, { create: true, strict: true });
  writer.exec("PRAGMA journal_mode = WAL");
  writer.exec("PRAGMA busy_timeout = 5000");
  return new SqliteStore(writer);
}

const engines: Array<[string, () => Store]> = [["sqlite", sqliteStore]];
if (pg) engines.push(["postgres", () => new PostgresStore({ url: cluster!.url, poolMax: 8 })]);

const SCHEMA = [
  "DROP TABLE IF EXISTS port_accounts",
  "CREATE TABLE port_accounts (id INTEGER PRIMARY KEY, owner TEXT NOT NULL, balance BIGINT NOT NULL DEFAULT 0, CONSTRAINT port_accounts_owner_key UNIQUE (owner))",
];

for (const [name, make] of engines) {
  describe(`the storage port on ${name}`, () => {
    async function fresh(): Promise<Store> {
      const s = make();
      for (const sql of SCHEMA) await s.run(sql);
      return s;
    }

    test("run, get and all with ? placeholders; a ? inside a string literal is text", async () => {
      const s = await fresh();
      expect(await s.run("INSERT INTO port_accounts (id, owner, balance) VALUES (?, ?, ?), (?, ?, ?)", [1, "ana", 10, 2, "bo?", 20])).toEqual({ changes: 2 });
      expect(await s.get("SELECT owner, balance FROM port_accounts WHERE id = ?", [2])).toEqual({ owner: "bo?", balance: 20 });
      expect(await s.get("SELECT owner FROM port_accounts WHERE id = ?", [99])).toBeNull();
      expect(await s.all("SELECT id, 'what?' AS q FROM port_accounts WHERE balance >= ? ORDER BY id", [0])).toEqual([
        { id: 1, q: "what?" },
        { id: 2, q: "what?" },
      ]);
      expect((await s.run("UPDATE port_accounts SET balance = balance + ? WHERE owner = ?", [5, "ana"])).changes).toBe(1);
      await s.close();
    });

    test("get() of a write (INSERT … RETURNING) outside a transaction writes and answers", async () => {
      const s = await fresh();
      expect(await s.get("INSERT INTO port_accounts (id, owner, balance) VALUES (?, ?, ?) RETURNING balance", [7, "eve", 3])).toEqual({ balance: 3 });
      expect(await s.all("UPDATE port_accounts SET balance = balance + 1 WHERE id = ? RETURNING balance", [7])).toEqual([{ balance: 4 }]);
      expect(await s.get("WITH x AS (SELECT 1 AS one) SELECT balance FROM port_accounts, x WHERE id = ?", [7])).toEqual({ balance: 4 });
      await s.close();
    });

    test("sums and averages of integers are numbers (PostgreSQL answers numeric); text that looks numeric stays text", async () => {
      const s = await fresh();
      await s.run("INSERT INTO port_accounts (id, owner, balance) VALUES (?, ?, ?), (?, ?, ?)", [1, "42", 4, 2, "43", 5]);
      expect(await s.get("SELECT SUM(balance) AS total, AVG(balance) AS mean, count(*) AS n, MIN(owner) AS first FROM port_accounts")).toEqual({
        total: 9,
        mean: 4.5,
        n: 2,
        first: "42",
      });
      await s.close();
    });

    test("a unique violation is a UniqueViolation naming the constraint", async () => {
      const s = await fresh();
      await s.run("INSERT INTO port_accounts (id, owner) VALUES (?, ?)", [1, "ana"]);
      const err = await s.run("INSERT INTO port_accounts (id, owner) VALUES (?, ?)", [2, "ana"]).catch((e) => e);
      expect(err).toBeInstanceOf(UniqueViolation);
      expect((err as UniqueViolation).constraint).toContain(name === "postgres" ? "port_accounts_owner_key" : "port_accounts.owner");
      await s.close();
    });

    // The HTTP layer answers an UnstorableText with 400 (src/http/core.ts): the OpenAPI fuzz's control-character
    // variants, run on PostgreSQL, are 500s without it.
    test("text holding U+0000 is refused as UnstorableText on both engines, written or read (client input, not a 500)", async () => {
      const s = await fresh();
      expect(await s.run("INSERT INTO port_accounts (id, owner) VALUES (?, ?)", [1, "a\u0000b"]).catch((e) => e)).toBeInstanceOf(UnstorableText);
      expect(await s.get("SELECT count(*) AS n FROM port_accounts WHERE owner = ?", ["a\u0000b"]).catch((e) => e)).toBeInstanceOf(UnstorableText);
      expect(await s.all("SELECT id FROM port_accounts WHERE owner = ?", ["\u0000"]).catch((e) => e)).toBeInstanceOf(UnstorableText);
      // In a transaction: the statement fails, the transaction with it, nothing was written.
      const tx = s.tx(async (t) => {
        await t.run("INSERT INTO port_accounts (id, owner) VALUES (?, ?)", [2, "fine"]);
        await t.run("INSERT INTO port_accounts (id, owner) VALUES (?, ?)", [3, "x\u0000"]);
      });
      expect(await tx.catch((e) => e)).toBeInstanceOf(UnstorableText);
      expect(await s.get("SELECT count(*) AS n FROM port_accounts")).toEqual({ n: 0 });
      // U+FFFD and other control characters are text like any other.
      await s.run("INSERT INTO port_accounts (id, owner) VALUES (?, ?)", [4, "a\ufffd\u0001b"]);
      expect(await s.get("SELECT owner FROM port_accounts WHERE id = ?", [4])).toEqual({ owner: "a\ufffd\u0001b" });
      await s.close();
    });

    test("a transaction commits when it resolves and rolls back whole when it throws", async () => {
      const s = await fresh();
      await s.tx(async (t) => {
        await t.run("INSERT INTO port_accounts (id, owner, balance) VALUES (?, ?, ?)", [1, "ana", 100]);
        await t.run("UPDATE port_accounts SET balance = balance - ? WHERE id = ?", [30, 1]);
      });
      const boom = await s
        .tx(async (t) => {
          await t.run("UPDATE port_accounts SET balance = 0 WHERE id = ?", [1]);
          await t.run("INSERT INTO port_accounts (id, owner) VALUES (?, ?)", [2, "ana"]);
        })
        .catch((e) => e);
      expect(boom).toBeInstanceOf(UniqueViolation);
      expect(await s.get("SELECT balance FROM port_accounts WHERE id = ?", [1])).toEqual({ balance: 70 });
      // The store writes on after a rolled-back transaction (on SQLite a batch of one, without a savepoint).
      await s.tx((t) => t.run("INSERT INTO port_accounts (id, owner) VALUES (?, ?)", [2, "bo"]));
      expect(await s.all("SELECT owner FROM port_accounts ORDER BY id")).toEqual([{ owner: "ana" }, { owner: "bo" }]);
      await s.close();
    });

    test("concurrent conditional debits never overspend: balance = what the successful debits left", async () => {
      const s = await fresh();
      await s.run("INSERT INTO port_accounts (id, owner, balance) VALUES (?, ?, ?)", [1, "ana", 500]);
      // 80 debits of 10 racing for 500: exactly 50 succeed, whatever the interleaving.
      const results = await Promise.all(
        Array.from({ length: 80 }, () =>
          s.tx(async (t) => (await t.run("UPDATE port_accounts SET balance = balance - ? WHERE id = ? AND balance - ? >= 0", [10, 1, 10])).changes),
        ),
      );
      expect(results.filter((c) => c === 1)).toHaveLength(50);
      expect(await s.get("SELECT balance FROM port_accounts WHERE id = ?", [1])).toEqual({ balance: 0 });
      await s.close();
    });

    test("integers come back as numbers; one past 2^53 is refused, never rounded", async () => {
      const s = await fresh();
      await s.run("INSERT INTO port_accounts (id, owner, balance) VALUES (?, ?, ?)", [1, "ana", Number.MAX_SAFE_INTEGER]);
      expect(await s.get("SELECT balance FROM port_accounts WHERE id = ?", [1])).toEqual({ balance: Number.MAX_SAFE_INTEGER });
      if (name === "postgres") {
        await s.run("UPDATE port_accounts SET balance = balance + 2 WHERE id = ?", [1]);
        const err = await s.get("SELECT balance FROM port_accounts WHERE id = ?", [1]).catch((e) => e);
        expect(err).toBeInstanceOf(RangeError);
        expect(String(err.message)).toContain("past 2^53");
      }
      await s.ping();
      expect(await s.version()).toMatch(name === "postgres" ? /^PostgreSQL \d+/ : /^SQLite 3\.\d+/);
      await s.close();
    });
  });
}

describe("SQLite group commit", () => {
  test("transactions arriving together share one commit; one that throws is rolled back alone, answered after the commit", async () => {
    const s = sqliteStore() as SqliteStore;
    for (const sql of SCHEMA) await s.run(sql);
    const before = { commits: s.commits, transactions: s.transactions };
    const results = await Promise.allSettled(
      Array.from({ length: 200 }, (_, i) =>
        s.tx(async (t) => {
          await t.run("INSERT INTO port_accounts (id, owner, balance) VALUES (?, ?, ?)", [i + 1, `owner-${i % 199}`, i]);
          return i;
        }),
      ),
    );
    // owner-0 is used twice (i = 0 and i = 199): the second is a unique violation, rolled back to its savepoint.
    expect(results.filter((r) => r.status === "fulfilled")).toHaveLength(199);
    const failed = results.find((r) => r.status === "rejected") as PromiseRejectedResult;
    expect(failed.reason).toBeInstanceOf(UniqueViolation);
    expect(await s.get("SELECT count(*) AS n FROM port_accounts")).toEqual({ n: 199 });
    expect(s.transactions - before.transactions).toBe(200);
    expect(s.commits - before.commits).toBeLessThan(200);
    await s.close();
  });
});

describe("SQLite: where a grouped batch keeps its sub-journal", () => {
  // A savepoint's sub-journal past 64 KiB goes to a temporary file unless temporary storage is in memory; a grouped
  // batch (a savepoint per transaction) runs with temp_store=MEMORY and gives the connection its setting back, so
  // reads outside a transaction (big sorts) keep their temporary files. A batch of one has no savepoint.
  test("transactions sharing a batch see temp_store MEMORY; a lone one, and everything after, the connection's own", async () => {
    const s = sqliteStore() as SqliteStore;
    for (const sql of SCHEMA) await s.run(sql);
    const tempStore = (q: { get: Store["get"] }) => q.get<{ temp_store: number }>("PRAGMA temp_store").then((r) => r!.temp_store);
    const own = await tempStore(s);
    expect(own).not.toBe(2);
    const commits = s.commits;
    const grouped = await Promise.all(
      Array.from({ length: 5 }, (_, i) =>
        s.tx(async (t) => {
          await t.run("INSERT INTO port_accounts (id, owner) VALUES (?, ?)", [i + 1, `g${i}`]);
          return tempStore(t);
        }),
      ),
    );
    expect(s.commits - commits).toBe(1);
    expect(grouped).toEqual([2, 2, 2, 2, 2]);
    expect(await s.tx((t) => tempStore(t))).toBe(own);
    expect(await tempStore(s)).toBe(own);
    await s.close();
  });
});

describe("SQLite: the prepared statements' cache", () => {
  test("past 1,000 SQL texts it starts again (finalizing what it held); the text that overflowed it and earlier ones still run", async () => {
    const store = sqliteStore();
    await store.run("CREATE TABLE t (n INTEGER)");
    await store.run("INSERT INTO t (n) VALUES (?)", [7]);
    for (let i = 0; i < 1_005; i++) expect(await store.get<{ n: number }>(`SELECT n + ${i} AS n FROM t`)).toEqual({ n: 7 + i });
    expect(await store.get<{ n: number }>("SELECT n + 0 AS n FROM t")).toEqual({ n: 7 });
    expect(await store.all<{ n: number }>("SELECT n FROM t")).toEqual([{ n: 7 }]);
    await store.close();
  });
});

describe("SQLite: the writer is shared with synchronous writers", () => {
  test("a synchronous write by other code never lands inside a transaction that is rolled back", async () => {
    const path = join(dir, `shared-${++n}.db`);
    const writer = new Database(path, { create: true, strict: true });
    writer.exec("PRAGMA journal_mode = WAL");
    const s = new SqliteStore(writer);
    for (const sql of SCHEMA) await s.run(sql);
    await s.run("CREATE TABLE legacy_rows (id INTEGER PRIMARY KEY)");
    const legacy = writer.prepare("INSERT INTO legacy_rows (id) VALUES (?)");
    // Transactions that write and then throw, while other chains write synchronously on the same connection
    // whenever they get a turn (as code not yet on the port does): every synchronous row must survive.
    const work: Promise<unknown>[] = [];
    for (let i = 0; i < 60; i++) {
      work.push(
        s
          .tx(async (t) => {
            await t.run("INSERT INTO port_accounts (id, owner) VALUES (?, ?)", [i + 1, `o${i}`]);
            await t.get("SELECT count(*) AS n FROM port_accounts");
            throw new Error("refused");
          })
          .catch(() => null),
      );
      work.push(
        (async () => {
          for (let k = 0; k < 5; k++) await Promise.resolve();
          legacy.run(i + 1);
        })(),
      );
      if (i % 10 === 0) await new Promise((r) => setImmediate(r));
    }
    await Promise.all(work);
    expect(await s.get("SELECT count(*) AS n FROM legacy_rows")).toEqual({ n: 60 });
    expect(await s.get("SELECT count(*) AS n FROM port_accounts")).toEqual({ n: 0 });
    await s.close();
    writer.close();
  });

  test("a body that awaits outside the store is refused and its batch rolled back", async () => {
    const s = sqliteStore();
    for (const sql of SCHEMA) await s.run(sql);
    const err = await s
      .tx(async (t) => {
        await t.run("INSERT INTO port_accounts (id, owner) VALUES (?, ?)", [1, "ana"]);
        // A turn of the event loop, queued after the writer's watch: a timer (as this test had, 5 ms) fires first
        // when the loop is stalled longer than it, and the body then resumes before the watch can notice.
        await new Promise((r) => setImmediate(r));
      })
      .catch((e) => e);
    expect(err).toBeInstanceOf(BodyAwaitedOutsideStore);
    expect(await s.get("SELECT count(*) AS n FROM port_accounts")).toEqual({ n: 0 });
    await s.close();
  });
});

describe("placeholders", () => {
  test("? becomes $n outside strings, identifiers, comments and dollar-quoted bodies", () => {
    expect(toDollarPlaceholders("SELECT ? , '?' , \"a?\" , ? -- why?\n , ? /* ? */ , $$ ? $$ , $t$ ? $t$ , ?")).toBe(
      "SELECT $1 , '?' , \"a?\" , $2 -- why?\n , $3 /* ? */ , $$ ? $$ , $t$ ? $t$ , $4",
    );
  });
});

test.skipIf(!pg)(
  "a stopped server is StoreUnavailable, never an untyped error",
  async () => {
    const c = await startCluster();
    const s = new PostgresStore({ url: c.url, poolMax: 1 });
    await s.ping();
    c.stop();
    const err = await s.ping().catch((e) => e);
    expect(err).toBeInstanceOf(StoreUnavailable);
    await s.close().catch(() => {});
  },
  60_000,
);

test.skipIf(!pg)("the database's size is read once and answered from memory until it is 30 s old (every /metrics scrape asks)", async () => {
  const s = new PostgresStore({ url: cluster!.url, poolMax: 2 });
  try {
    const first = await s.sizeBytes();
    expect(first).toBeGreaterThan(0);
    // 8 MB more on disk: a new read would see it; the kept size is answered instead.
    await s.run("CREATE TABLE size_probe AS SELECT g AS n, repeat('x', 100) AS pad FROM generate_series(1, 60000) g");
    expect(await s.sizeBytes()).toBe(first);
    await s.run("DROP TABLE size_probe");
  } finally {
    await s.close();
  }
});
