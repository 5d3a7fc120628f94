// The redirect baseline: the least a Bun server can do for a short link — look the code up in a Map and
// answer 302 with Location. Run as its own process, like herald.
//   PORT=<port> CODE=<code> DESTINATION=<url> bun bench/redirect-baseline-server.ts
const port = Number(process.env.PORT ?? "0");
const links = new Map([[process.env.CODE ?? "aaaaaaaaaaaaaaaa", process.env.DESTINATION ?? "http://127.0.0.1/tracks/1"]]);
const PREFIX = "/s/audio/";

const server = Bun.serve({
  hostname: "127.0.0.1",
  port,
  fetch(req) {
    const path = new URL(req.url).pathname;
    if (path === "/") return new Response("ok");
    const destination = path.startsWith(PREFIX) ? links.get(path.slice(PREFIX.length)) : undefined;
    if (!destination) return new Response("not found", { status: 404 });
    return new Response(null, { status: 302, headers: { location: destination, "cache-control": "private, no-store" } });
  },
});

const stop = () => {
  void server.stop(true).then(() => process.exit(0));
};
process.on("SIGTERM", stop);
process.on("SIGINT", stop);
export {}; // a module, so its top-level names do not clash with other bench scripts
