// The webhook receiver of the `webhooks` benchmark, run as its own process so that it does not share the bench's
// event loop. Answers every POST 204 at once. For POSTs under /hook/ it records the arrival time (wall clock,
// sub-millisecond: performance.timeOrigin + performance.now(), comparable across processes on one machine)
// with the path and X-Webhook-Id; POSTs under /raw/ (the capacity baseline) are only counted.
//   PORT=<port> bun bench/webhook-sink.ts
//   GET /ready              200
//   GET /count              {"hooks": n, "raw": n}
//   GET /arrivals?clear=1   [[path, x-webhook-id, arrival_ms], ...] (and forget them)
export {}; // a module, not a global script (its names stay its own)

const port = Number(process.env.PORT ?? "0");
const wallMs = () => performance.timeOrigin + performance.now();

let arrivals: Array<[string, string, number]> = [];
let hooks = 0;
let raw = 0;

const server = Bun.serve({
  hostname: "127.0.0.1",
  port,
  async fetch(req) {
    const at = wallMs();
    const url = new URL(req.url);
    if (req.method === "POST") {
      await req.arrayBuffer(); // read the body, as a real receiver would
      if (url.pathname.startsWith("/hook/")) {
        hooks++;
        arrivals.push([url.pathname, req.headers.get("x-webhook-id") ?? "", at]);
      } else raw++;
      return new Response(null, { status: 204 });
    }
    if (url.pathname === "/ready") return new Response("ok");
    if (url.pathname === "/count") return Response.json({ hooks, raw });
    if (url.pathname === "/arrivals") {
      const out = arrivals;
      if (url.searchParams.get("clear") === "1") {
        arrivals = [];
        hooks = 0;
        raw = 0;
      }
      return Response.json(out);
    }
    return new Response("not found", { status: 404 });
  },
});

const stop = () => {
  void server.stop(true).then(() => process.exit(0));
};
process.on("SIGTERM", stop);
process.on("SIGINT", stop);
