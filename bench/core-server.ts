// What the benchmarks' comparison servers share with `herald serve` after their routes are built: start the request
// log, listen as serve.ts does, and on SIGTERM/SIGINT drain, flush the request log, close the database, exit 0.
import type { AnyElysia } from "elysia";
import type { Config } from "../src/config";
import type { AppContext } from "../src/context";
import { errorFields } from "../src/log";

export function listenUntilSignal(app: AnyElysia, ctx: AppContext, config: Config): void {
  ctx.requestLog.start(config.requestLogFlushMs);
  app.listen({ port: config.port, hostname: config.host, maxRequestBodySize: config.maxBodyBytes * 2 + 65_536 });
  const server = app.server!;
  ctx.server = server;
  let stopping = false;
  const shutdown = async () => {
    if (stopping) return;
    stopping = true;
    try {
      const timedOut = await Promise.race([server.stop(false).then(() => false), Bun.sleep(config.shutdownGraceMs).then(() => true)]);
      if (timedOut) await server.stop(true);
      ctx.requestLog.stop();
      await ctx.store.close();
      process.exit(0);
    } catch (err) {
      ctx.log.error("shutdown failed", errorFields(err));
      process.exit(1);
    }
  };
  process.on("SIGTERM", () => void shutdown());
  process.on("SIGINT", () => void shutdown());
}
