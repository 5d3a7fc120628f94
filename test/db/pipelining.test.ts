// What a transaction costs in round trips on the wire (src/db/postgres-batches.ts): BEGIN, SAVEPOINT, RELEASE and
// COMMIT are sent with the statements around them, not each after the answers before it. Counted by a proxy between
// the store and PostgreSQL that holds every answer 20 ms: a "flight" is the client writing again after an answer
// reached it, so a transaction's flights are the times it waited for the server.
import { expect } from "bun:test";
import { countedStore, wireDatabase } from "../support/counting-proxy";
import { testOn } from "../support/skipped";

const onPostgres = testOn("postgres", "test/db/pipelining.test.ts");
const db = wireDatabase("CREATE TABLE pipelined_rows (id serial PRIMARY KEY, v text NOT NULL)");

onPostgres("a transaction waits for the server twice, and a grouped batch of two once more than one alone: control statements are pipelined", async () => {
  const { proxy, store, close } = countedStore(db.url());
  const insert = (v: string) => store.tx((t) => t.run("INSERT INTO pipelined_rows (v) VALUES (?)", [v]), { group: "pipelined" });
  // One alone, then two that arrive while it runs: they share a batch (BEGIN, a SAVEPOINT each, one COMMIT).
  const scene = () => Promise.all([insert("alone"), insert("first of two"), insert("second of two")]);
  try {
    await scene(); // prepares every statement on the store's one connection
    proxy.flights = 0;
    store.health.counts.commits = 0;
    await scene();
    const commits = store.health.counts.commits;
    // Alone: [BEGIN, INSERT] then [COMMIT] = 2. The batch: [BEGIN, SAVEPOINT, INSERT], [RELEASE, SAVEPOINT,
    // INSERT], [RELEASE, COMMIT] = 3. Sent one at a time they were 3 and 8.
    expect(proxy.flights).toBe(5);
    expect(commits).toBe(2);
  } finally {
    await close();
  }
});
