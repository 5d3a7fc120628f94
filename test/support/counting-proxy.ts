// A proxy between a store and PostgreSQL that counts round trips on the wire: it holds every answer a while, and a
// "flight" is the client writing again after an answer reached it, so a transaction's flights are the times it
// waited for the server. Used by test/db/pipelining.test.ts and test/db/together.test.ts.

/** A TCP proxy on 127.0.0.1 to PostgreSQL that holds each answer `holdMs` and counts the client's flights. */
export function countingProxy(target: URL, holdMs: number) {
  type Pair = { upstream: Promise<import("bun").Socket<undefined>> };
  const state = { flights: 0, answered: true, port: 0, stop: () => listener.stop(true) };
  const listener = Bun.listen<Pair>({
    hostname: "127.0.0.1",
    port: 0,
    socket: {
      open(client) {
        client.data = {
          upstream: Bun.connect({
            hostname: target.hostname,
            port: Number(target.port),
            socket: {
              data(_up, data) {
                const copy = new Uint8Array(data);
                setTimeout(() => {
                  state.answered = true;
                  client.write(copy);
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
