// The HTTP baseline: the least a Bun server can do for a JSON GET. Run as its own process (like herald) so
// both sides of the comparison pay the same process, socket and scheduling costs.
//   PORT=<port> bun bench/baseline-server.ts
const port = Number(process.env.PORT ?? "0");
const server = Bun.serve({
  hostname: "127.0.0.1",
  port,
  // Serialised per request, as a real handler (and herald) does; a prebuilt string would flatter the baseline.
  fetch: () => Response.json({ success: true, status: "up" }),
});

const stop = () => {
  void server.stop(true).then(() => process.exit(0));
};
process.on("SIGTERM", stop);
process.on("SIGINT", stop);
export {}; // a module, so its top-level names do not clash with other bench scripts
