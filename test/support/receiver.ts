/** What the receiver does with one request. */
export type Behavior = { status: number; body?: string; headers?: Record<string, string> } | { hang: true } | { slowBody: true; status?: number };

export interface Received {
  method: string;
  path: string;
  headers: Record<string, string>;
  rawBody: string;
}

/**
 * A real webhook receiver on 127.0.0.1: records every request (raw bytes, headers) and answers from a script of
 * behaviours (then `fallback`). No mocks: Herald's dispatcher talks to it over TCP.
 */
export function startReceiver(fallback: Behavior = { status: 204 }) {
  const received: Received[] = [];
  const script: Behavior[] = [];
  const hanging: Array<() => void> = [];
  const server = Bun.serve({
    hostname: "127.0.0.1",
    port: 0,
    idleTimeout: 30,
    async fetch(req) {
      const url = new URL(req.url);
      received.push({ method: req.method, path: url.pathname, headers: Object.fromEntries(req.headers), rawBody: await req.text() });
      const b = script.shift() ?? fallback;
      if ("hang" in b) {
        // Never answers until the test ends (released in stop()).
        await new Promise<void>((resolve) => hanging.push(resolve));
        return new Response("late", { status: 200 });
      }
      if ("slowBody" in b) {
        let n = 0;
        const stream = new ReadableStream({
          async pull(c) {
            if (n++ > 200) return c.close();
            await Bun.sleep(100);
            c.enqueue(new TextEncoder().encode("x"));
          },
        });
        return new Response(stream, { status: b.status ?? 200 });
      }
      return new Response(b.body ?? "", { status: b.status, headers: b.headers });
    },
  });
  return {
    url: (path = "/hook") => `http://127.0.0.1:${server.port}${path}`,
    port: server.port,
    received,
    /** Queue behaviours for the next requests, in order. */
    then(...b: Behavior[]) {
      script.push(...b);
    },
    stop() {
      for (const h of hanging) h();
      server.stop(true);
    },
  };
}

export type Receiver = ReturnType<typeof startReceiver>;
