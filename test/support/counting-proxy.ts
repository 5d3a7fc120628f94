// A proxy between a store and PostgreSQL that counts round trips on the wire: it holds every answer a while, and a
// "flight" is the client writing again after an answer reached it, so a transaction's flights are the times it
// waited for the server. Used by test/db/pipelining.test.ts and test/db/together.test.ts, with the database and the
// one-connection store they share (wireDatabase, countedStore).
import { afterAll, beforeAll } from "bun:test";
import { PostgresStore } from "../../src/db/postgres-engine";
import { freshPostgresDatabase, testEngine } from "./engine";

/** A fresh PostgreSQL database for the file's tests (on PostgreSQL only) with `ddl` run in it, dropped after them. */
export function wireDatabase(...ddl: string[]): { url(): string } {
  let url = "";
  let drop: (() => Promise<void>) | null = null;
  beforeAll(async () => {
    if (testEngine() !== "postgres") return;
    const db = await freshPostgresDatabase();
    url = db.url;
    drop = db.drop;
    const setup = new PostgresStore({ url, poolMax: 1 });
    for (const statement of ddl) await setup.run(statement);
    await setup.close();
  });
  afterAll(async () => {
    await drop?.();
  });
  return { url: () => url };
}

/**
 * A store of ONE connection (so transactions arriving together queue into batches) reaching `url` through a
 * counting proxy that holds each answer `holdMs`.
 */
export function countedStore(url: string, holdMs = 20) {
  const proxy = countingProxy(new URL(url), holdMs);
  const via = new URL(url);
  via.port = String(proxy.port);
  const store = new PostgresStore({ url: via.toString(), poolMax: 1, transactionTimeoutMs: 10_000 });
  return { proxy, store, close: async () => (await store.close(), proxy.stop()) };
}

/**
 * A TCP proxy on 127.0.0.1 to PostgreSQL that holds each answer `holdMs` and counts the client's flights. What the
 * server sends while an answer is held goes out with it: a server busy with other work may write the answers to
 * statements sent together in two pieces a moment apart, and released separately they would count as two flights
 * of the client's (it sends what depends on the first piece before the second arrives).
 */
export function countingProxy(target: URL, holdMs: number) {
  type Pair = { upstream: Promise<import("bun").Socket<undefined>>; held: Uint8Array[] | null };
  const state = { flights: 0, answered: true, port: 0, stop: () => listener.stop(true) };
  const listener = Bun.listen<Pair>({
    hostname: "127.0.0.1",
    port: 0,
    socket: {
      open(client) {
        client.data = {
          held: null,
          upstream: Bun.connect({
            hostname: target.hostname,
            port: Number(target.port),
            socket: {
              data(_up, data) {
                const copy = new Uint8Array(data);
                if (client.data.held) {
                  client.data.held.push(copy);
                  return;
                }
                client.data.held = [copy];
                setTimeout(() => {
                  const held = client.data.held ?? [];
                  client.data.held = null;
                  state.answered = true;
                  client.write(Buffer.concat(held));
                }, holdMs);
              },
              close: () => void client.end(),
            },
          }),
        };
      },
      data(client, data) {
        if (state.answered) state.flights++;
        state.answered = false;
        const copy = new Uint8Array(data);
        void client.data.upstream.then((up) => up.write(copy));
      },
      close: (client) => void client.data?.upstream.then((up) => up.end()),
    },
  });
  state.port = listener.port;
  return state;
}
