import { buildApp } from "../app";
import { openContext } from "../bootstrap";
import type { Config } from "../config";
import { errorFields } from "../log";
import { firstStartBanner, prepareCredentials } from "../auth/first-start";
import { flushAudioShareHits } from "../audio-share/hits";
import { installNativeRedirects } from "../audio-share/redirect";

/**
 * Runs the server until SIGTERM/SIGINT, then: stop accepting, let in-flight requests finish (up to
 * SHUTDOWN_GRACE_MS), stop jobs, flush the request log, checkpoint the WAL, exit 0.
 */
export async function serve(config: Config): Promise<void> {
  const ctx = openContext(config);
  const firstStart = prepareCredentials(ctx);
  const app = buildApp(ctx);
  // Short-link redirects skip Elysia's hooks: a native Bun route answers them (src/audio-share/redirect.ts).
  installNativeRedirects(app, ctx);
  if (config.jobsEnabled) ctx.jobs.start();
  ctx.requestLog.start(config.requestLogFlushMs);
  app.listen({
    port: config.port,
    hostname: config.host,
    // Bun's own cap answers 413 with an empty body; keep it above ours so the JSON 413 wins.
    maxRequestBodySize: config.maxBodyBytes * 2 + 65_536,
  });
  const server = app.server!;
  if (firstStart) process.stdout.write(firstStartBanner(firstStart, config.publicBaseUrl));
  ctx.log.info("herald listening", { url: `http://${config.host}:${server.port}`, public_base_url: config.publicBaseUrl, db: config.dbPath, jobs: config.jobsEnabled });

  let stopping = false;
  const shutdown = async (signal: string) => {
    if (stopping) return;
    stopping = true;
    ctx.log.info("shutting down", { signal });
    try {
      const drained = server.stop(false);
      const timedOut = await Promise.race([
        drained.then(() => false),
        Bun.sleep(config.shutdownGraceMs).then(() => true),
      ]);
      if (timedOut) {
        ctx.log.warn("grace period over; closing remaining connections", { grace_ms: config.shutdownGraceMs });
        await server.stop(true);
      }
      // Elysia records finished requests in a setImmediate hook; let those run before the log is flushed.
      await new Promise<void>((resolve) => setImmediate(resolve));
      await ctx.jobs.stop();
      await ctx.dispatcher.idle();
      flushAudioShareHits(ctx);
      ctx.requestLog.stop();
      ctx.db.close();
      ctx.log.info("stopped cleanly");
      process.exit(0);
    } catch (err) {
      ctx.log.error("shutdown failed", errorFields(err));
      process.exit(1);
    }
  };
  process.on("SIGTERM", () => void shutdown("SIGTERM"));
  process.on("SIGINT", () => void shutdown("SIGINT"));
}
