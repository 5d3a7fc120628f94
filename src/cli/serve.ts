import { buildApp } from "../app";
import { closeContext, openContextAsync } from "../bootstrap";
import type { Config } from "../config";
import type { Draining } from "../context";
import { errorFields } from "../log";
import { SqliteStore } from "../db/sqlite-engine";
import {
  CONSOLE_PATH,
  createFirstStartCredentials,
  credentialsNeverUsed,
  firstStartBanner,
  newCredentialsHint,
  registerConfiguredToken,
} from "../auth/first-start";
import { AdminTokens } from "../auth/admin";
import { flushAudioShareHits } from "../audio-share/hits";
import { flushCounts } from "../messenger/counters";
import { nativeRedirectRoutes } from "../audio-share/redirect";
import { installNativeRoutes } from "../http/native-routes";
import { startOpenApiBuildInWorker } from "../http/openapi/documents";
import { nativeHealthRoutes } from "../system/health";
import { warmBotUsername } from "../messenger/bot/username";
import { eventLoopLag, stopEventLoopLag } from "../ops/event-loop-lag";
import type { Server } from "bun";

/** The server could not bind its address (port in use, no permission): a clear one-line reason, exit 1. */
export class ListenError extends Error {
  constructor(
    message: string,
    readonly code: string | null,
  ) {
    super(message);
    this.name = "ListenError";
  }
}

function listenErrorOf(err: unknown, host: string, port: number): ListenError {
  const code = typeof (err as { code?: unknown })?.code === "string" ? (err as { code: string }).code : null;
  const where = `${host}:${port}`;
  if (code === "EADDRINUSE") {
    return new ListenError(`cannot listen on ${where}: port ${port} is already in use (EADDRINUSE); stop the other process or set PORT to a free port`, code);
  }
  const reason = err instanceof Error ? err.message : String(err);
  return new ListenError(`cannot listen on ${where} (port ${port}): ${reason}${code ? ` (${code})` : ""}`, code);
}

/**
 * Throws ListenError when host:port cannot be bound, by binding it exclusively for a moment (no SO_REUSEPORT, as the
 * server itself binds), so that a start on a port in use leaves no data folder, database or master key behind. The
 * server cannot bind first: its app is built over the opened database. A port taken between this check and the bind
 * fails that start with its database opened but no credentials made (serve makes them only once it listens).
 */
export function assertPortFree(host: string, port: number): void {
  if (port === 0) return;
  let probe: { stop(closeActiveConnections?: boolean): void } | null = null;
  try {
    probe = Bun.listen({ hostname: host, port, socket: { data() {} } });
  } catch (err) {
    throw listenErrorOf(err, host, port);
  } finally {
    probe?.stop(true);
  }
}

/** The address this process reaches itself on: the loopback for a wildcard bind, else the bound host. */
export function ownUrl(host: string, port: number): string {
  const h =
    host === "0.0.0.0" || host === ""
      ? "127.0.0.1"
      : host === "::" || host === "[::]"
        ? "[::1]"
        : host.includes(":") && !host.startsWith("[")
          ? `[${host}]`
          : host;
  return `http://${h}:${port}`;
}

/** The master key cannot open the database's secrets, in production: a clear one-line reason, exit 78. */
export class MasterKeyRefused extends Error {
  override name = "MasterKeyRefused";
}

/** How a production server with no operator token (none made, or all revoked; no ADMIN_TOKEN) says to make the first. */
export const FIRST_OPERATOR_TOKEN = {
  command: "herald admin-token create --name <your name>",
  note:
    "run it where this server runs, with its environment (the same HERALD_DB_PATH or DATABASE_URL, and HERALD_MASTER_KEY); it prints the token once. " +
    "In the Docker image: docker exec -u herald <container> herald admin-token create --name <your name> (on Fly.io, the same command in fly ssh console). " +
    "Or set ADMIN_TOKEN (32–256 visible characters) and restart. Then sign in at /admin/sign-in with it",
} as const;

/** Bodies up to this size reach Herald's own 413 (the JSON envelope with a request id) rather than Bun's bare one. */
const BUN_BODY_CAP_FLOOR = 64 * 1024 * 1024;

type ServeOptions = Parameters<Server<unknown>["reload"]>[0];

/**
 * Remembers what the server was last told to serve. Elysia (pinned 1.4.30) starts Bun.serve with a first route table
 * and, once the app is compiled, hands the finished one to `server.reload` (a turn of the event loop after `listen`
 * returns); the drain serves that same table with one header more.
 */
function keepServeOptions(server: Server<unknown>): () => ServeOptions | null {
  let latest: ServeOptions | null = null;
  const reload = server.reload.bind(server);
  server.reload = ((options: ServeOptions) => {
    latest = options;
    return reload(options);
  }) as typeof server.reload;
  return () => latest;
}

/** The answer with `Connection: close`: Bun then closes the connection once it is sent. */
function closing(res: Response): Response {
  try {
    res.headers.set("connection", "close");
    return res;
  } catch {
    // Immutable headers: the same answer in a copy that can carry the header.
    const copy = new Response(res.body, res);
    copy.headers.set("connection", "close");
    return copy;
  }
}

type BunHandler = (request: Request, server: Server<unknown>) => Response | Promise<Response>;

function closingHandler(h: unknown): unknown {
  if (h instanceof Response) return () => closing(h.clone() as Response);
  if (typeof h !== "function") return h;
  const handler = h as BunHandler;
  return (request: Request, server: Server<unknown>) => {
    const res = handler(request, server);
    return res instanceof Promise ? res.then((r) => (r instanceof Response ? closing(r) : r)) : res instanceof Response ? closing(res) : res;
  };
}

/**
 * While the instance drains, every answer carries `Connection: close`, so a keep-alive client or balancer opens its
 * next connection afresh (to another instance, once /readyz failed) instead of finding it closed under it when the
 * instance stops listening. The same handlers are served, wrapped; false when there was no route table to wrap.
 */
function closeEachConnection(server: Server<unknown>, options: ServeOptions | null): boolean {
  if (!options) return false;
  const isMethodMap = (v: unknown): v is Record<string, unknown> =>
    typeof v === "object" && v !== null && !(v instanceof Response) && Object.keys(v).every((k) => /^[A-Z]+$/.test(k));
  const routes = Object.fromEntries(
    Object.entries((options as { routes?: Record<string, unknown> }).routes ?? {}).map(([path, v]) => [
      path,
      isMethodMap(v) ? Object.fromEntries(Object.entries(v).map(([method, h]) => [method, closingHandler(h)])) : closingHandler(v),
    ]),
  );
  const fetch = (options as { fetch?: unknown }).fetch;
  server.reload({ ...options, routes, ...(fetch ? { fetch: closingHandler(fetch) } : {}) } as ServeOptions);
  return true;
}

/**
 * Runs the server until SIGTERM/SIGINT, then drains (SHUTDOWN_DRAIN_DELAY_MS), stops (SHUTDOWN_GRACE_MS) and exits 0;
 * `shutdown` below says each step and why. Throws ListenError, with jobs never started and the database closed,
 * when the address cannot be bound.
 */
export async function serve(config: Config): Promise<void> {
  assertPortFree(config.host, config.port);
  const ctx = await openContextAsync(config, { waitForWritable: true });
  const mismatch = ctx.secrets.mismatch;
  if (mismatch && config.isProduction) {
    // Outside production the server starts (its /readyz says why it is not ready); in production a server that
    // would answer every partner call with 503 must not take traffic at all.
    await ctx.requestLog.stop();
    await closeContext(ctx);
    throw new MasterKeyRefused(
      `refusing to start: ${mismatch.detail}. This database expects the master key with fingerprint ${mismatch.expected ?? "(not recorded: the key it was made with)"}.`,
    );
  }
  const credentials = await registerConfiguredToken(ctx);
  const app = buildApp(ctx);
  // Short-link redirects and the liveness probe skip Elysia's hooks (src/http/native-routes.ts).
  installNativeRoutes(app, { ...nativeRedirectRoutes(ctx), ...nativeHealthRoutes(ctx) });
  try {
    app.listen({
      port: config.port,
      hostname: config.host,
      // Elysia turns SO_REUSEPORT on by default: a second herald on the same port would then bind silently and
      // the kernel would split connections between two processes (each with its own database). Off, a port in
      // use is a startup error.
      reusePort: false,
      // Bun's own cap answers 413 with an empty body and no request id; keep it well above ours so that the JSON 413
      // wins for any body a client plausibly sends (the core refuses a Content-Length over the limit before reading
      // a byte, and counts a chunked body as it reads it). Past this floor Bun's bare 413 stays the last guard.
      maxRequestBodySize: Math.max(config.maxBodyBytes * 2 + 65_536, BUN_BODY_CAP_FLOOR),
    });
  } catch (err) {
    // Taken since assertPortFree looked (another process bound it meanwhile): no credentials were made yet.
    const failure = listenErrorOf(err, config.host, config.port);
    ctx.log.error("cannot listen", { host: config.host, port: config.port, code: failure.code, error: failure.message });
    await ctx.requestLog.stop();
    await closeContext(ctx);
    throw failure;
  }
  const server = app.server!;
  // The signal handlers go in now, before the first awaited step: a SIGTERM that comes while the start finishes (a
  // deploy that gives up at once, a test that stops the server the moment it says it listens) is kept and acted on
  // right after the listening line, not met by the default action (exit 143 with nothing flushed).
  let onSignal: (signal: "SIGTERM" | "SIGINT") => void;
  let early: "SIGTERM" | "SIGINT" | null = null;
  onSignal = (signal) => {
    early ??= signal;
  };
  process.on("SIGTERM", () => onSignal("SIGTERM"));
  process.on("SIGINT", () => onSignal("SIGINT"));
  const serveOptions = keepServeOptions(server);
  ctx.listenUrl = ownUrl(config.host, server.port ?? config.port);
  ctx.server = server;
  // The API documents are built in a worker (src/http/openapi/documents.ts): built here they would hold every request,
  // probes included, for a second or more. Started before the jobs, so the preflight snapshot's ETag awaits this build.
  startOpenApiBuildInWorker(ctx);
  // Jobs start only once the port is ours: a process that cannot listen never runs them.
  if (config.jobsEnabled) ctx.jobs.start();
  ctx.requestLog.start(config.requestLogFlushMs);
  // SQLite: the WAL's checkpoints in the read worker, not in the commit that crosses 1,000 pages on this thread.
  if (ctx.store instanceof SqliteStore) {
    ctx.store.checkpointApart(1_000, (err) =>
      ctx.log.warn("WAL checkpoints in the worker failed; SQLite's own automatic checkpoints are back on", errorFields(err)),
    );
  }
  // Measured only while serving: the lag a partner's request would meet (herald_event_loop_lag_seconds).
  eventLoopLag(ctx).start();
  warmBotUsername(ctx);
  const firstStart = await createFirstStartCredentials(ctx, credentials);
  if (firstStart) {
    // After the log lines waiting in their batch (src/log.ts), so stdout keeps the order they were made in.
    ctx.log.flush();
    process.stdout.write(firstStartBanner(firstStart, config.publicBaseUrl));
  } else if (await credentialsNeverUsed(ctx)) {
    const hint = newCredentialsHint(config);
    ctx.log.info("no credential of this database has been used yet", {
      note:
        "the first start printed its credentials once; if they are lost, this command prints new ones (once) with the lines to paste, from any shell" +
        (hint.also_set ? `, with ${hint.also_set.join(" and ")} set as this server has them` : ""),
      ...hint,
    });
  } else if (config.isProduction && (await new AdminTokens(ctx).activeCount()) === 0) {
    // Production never makes credentials on its own: without a token nobody can reach /admin, so say how to make one.
    ctx.log.warn("no operator token: nobody can use /admin or the console yet", FIRST_OPERATOR_TOKEN);
  }
  // Said once everything the first requests need is in place (the API documents' worker build may still run): a
  // deploy script or a load balancer that waits for this line, or for /readyz, meets a process that answers at once.
  ctx.log.info("herald listening", {
    url: `http://${config.host}:${server.port}`,
    public_base_url: config.publicBaseUrl,
    console: `${config.publicBaseUrl}${CONSOLE_PATH}`,
    db: config.database.engine === "postgres" ? "postgres (DATABASE_URL)" : config.dbPath,
    engine: await ctx.store.version(),
    jobs: config.jobsEnabled,
  });
  // Written now, not with the next batch of lines: what waits for it should not wait 20 ms more.
  ctx.log.flush();
  for (const r of config.retired) ctx.log.warn("environment variable no longer read", { name: r.name, note: r.note });

  let stopping = false;
  let endDelay: (() => void) | null = null;
  const shutdown = async (signal: "SIGTERM" | "SIGINT") => {
    try {
      // SIGTERM is how a platform stops a service (systemd, Docker, Kubernetes, a deploy script): stay in rotation
      // until the balancer has noticed. SIGINT is a person at a terminal (Ctrl-C): stop now.
      const delayMs = signal === "SIGTERM" ? config.shutdownDrainDelayMs : 0;
      const since = Date.now();
      const draining: Draining = { signal, since: new Date(since), stopsListeningAt: new Date(since + delayMs) };
      if (delayMs > 0) {
        // Without a delay there is nothing to announce: the listening socket closes now, and the requests already
        // in flight (a readiness probe among them) are answered as if no signal had come.
        ctx.draining = draining;
        const closesConnections = closeEachConnection(server, serveOptions());
        ctx.log.info("draining", { signal, drain_ms: delayMs, ready: false, listening: true, connection_close: closesConnections });
        const cut = await new Promise<boolean>((resolve) => {
          const timer = setTimeout(() => resolve(false), delayMs);
          endDelay = () => {
            clearTimeout(timer);
            resolve(true);
          };
        });
        endDelay = null;
        if (cut) draining.stopsListeningAt = new Date();
      }
      // Close the listening socket before anything else, even the log line: a new connection is then refused
      // (ECONNREFUSED) and retried elsewhere at once, not accepted and reset. Requests in flight go on running.
      const drained = server.stop(false);
      ctx.log.info("shutting down", {
        signal,
        listening: false,
        ...(delayMs > 0
          ? { drained_ms: draining.stopsListeningAt.getTime() - since, drain_cut_short: draining.stopsListeningAt.getTime() - since < delayMs }
          : {}),
      });
      const timedOut = await Promise.race([drained.then(() => false), Bun.sleep(config.shutdownGraceMs).then(() => true)]);
      if (timedOut) {
        ctx.log.warn("grace period over; closing remaining connections", { grace_ms: config.shutdownGraceMs });
        await server.stop(true);
      }
      // Elysia runs after-response hooks in a setImmediate (the partner guard records a deferred nonce there): let
      // those run before the database closes. Request-log rows are buffered when each answer is made.
      await new Promise<void>((resolve) => setImmediate(resolve));
      await ctx.jobs.stop();
      stopEventLoopLag(ctx);
      await ctx.dispatcher.idle();
      await flushAudioShareHits(ctx);
      await flushCounts(ctx);
      await ctx.requestLog.stop();
      await ctx.chain.flushRecords(); // the RPC outcomes buffered off the call path (src/chain/rpc-log.ts)
      await closeContext(ctx);
      ctx.log.info("stopped cleanly");
      process.exit(0);
    } catch (err) {
      ctx.log.error("shutdown failed", errorFields(err));
      process.exit(1);
    }
  };
  onSignal = (signal) => {
    // A second signal (SIGTERM again, or Ctrl-C) while the drain delay runs: stop listening now. Later ones change
    // nothing: requests in flight still get their grace period.
    if (stopping) return endDelay?.();
    stopping = true;
    void shutdown(signal);
  };
  if (early) onSignal(early);
}
