// The floors benchmark's server (bench/floors.ts): a bare Bun.serve that does one hot route's baseline work, and
// optionally the least that Herald's features add to it, and nothing else: no herald heap, no Elysia, no database.
// What a case adds is the floor under herald's figure for that route: no implementation of the feature can do less.
//   PORT=<port> CASE=<case> [SECRET=<hsk_…>] bun bench/floors-server.ts
// Cases (each one answers every path as its route would):
//   json            the raw Bun.serve JSON baseline (as bench/baseline-server.ts)
//   json-door       + what every herald answer carries: the URL read (size guard, include_meta), Content-Length and
//                   X-Request-ID read, a request id made or echoed, and sent back as X-Request-ID
//   json-signature  json-door + the partner signature: the four X-Partner-* headers read and herald's own HMAC
//                   check (src/auth/signature.ts) of the canonical string; a wrong signature answers 401
//   json-policy     json-door with the request-logged route's answer (GET /api/public/system-status/policy, the same
//                   917 bytes of JSON) and its headers (Cache-Control, X-Content-Type-Options, X-Request-ID)
//   json-logged     json-policy + a request-log row per request as herald writes it: buffered, then 1,000 at a time
//                   in one transaction (multi-row INSERTs of 100 into herald's request_log table and its two
//                   indexes, the hourly rollup upsert) on the serving thread, over a SQLite file (DB=<path>), WAL,
//                   synchronous=NORMAL
//   json-logged-complete  json-logged + the rest of what herald's logged route must do, each the cheapest way:
//                   the repeated-parameter check's "&" test, include_meta looked for, Accept-Encoding read (the
//                   compression decision), the request counted in herald's metrics series (src/http/metrics.ts
//                   `observe`): the floor of issue 50's route with all of its required work
//   json-logged-worker  json-policy + the same rows written by a Worker thread with its own connection: what moving
//                   the write off the serving thread buys (the rows cross by postMessage, 1,000 at a time)
//   json-logged-elysia  json-logged through Elysia, as herald is served: the work of json-logged in one onRequest hook
//                   (size guards, request id and its header), the route's handler (the answer and its Cache-Control)
//                   and one mapResponse hook (the row); no response schema. Its distance to json-logged is the
//                   framework's share of herald's route, what any Elysia app pays for the same work
//   redirect        the raw redirect (as bench/redirect-baseline-server.ts: `new URL`, a Map lookup, a 302)
//   redirect-ip     + the client address (server.requestIP), which unique clicks per client need
//   redirect-door   + the click's other needs and the door's: User-Agent, X-Request-ID and Content-Length read, a
//                   request id sent back, the click counted in a Map keyed by client address and User-Agent; the
//                   code sliced off the URL string instead of the raw redirect's `new URL` (the cheapest way)
import type { Server } from "bun";
import { requestTarget, verifySignature } from "../src/auth/signature";
import { cryptoRng } from "../src/clock";
import { metaRequested } from "../src/http/envelope";
import { Metrics, observe } from "../src/http/metrics";
import { hasSeveralParameters } from "../src/http/query-once";
import { requestIdFor } from "../src/http/request-id";
import { DEFAULT_POLICY } from "../src/status/checks/policy";
import { requestLogWriter } from "./floors-log-worker";

const port = Number(process.env.PORT ?? "0");
const which = process.env.CASE ?? "json";
const secrets = [process.env.SECRET ?? ""];
const LINK = new Map([["aaaaaaaaaaaaaaaa", "http://127.0.0.1/tracks/1"]]);
const PREFIX = "/s/audio/";

/** A request id as herald makes one (src/http/request-id.ts): the client's when sane, else one from its pool. */
const requestId = (header: string | null) => requestIdFor(header, cryptoRng);

/** Herald's size guards read these two; the floor reads them and refuses nothing the load sends. */
function sizeGuarded(req: Request): boolean {
  return req.url.length <= 8192 && req.headers.get("content-length") === null;
}

/** Clicks by client address, then User-Agent (herald keeps the same two levels, src/audio-share/hits.ts). */
const clicks = new Map<string, Map<string, number>>();
const destinationOf = (req: Request) => {
  const path = new URL(req.url).pathname;
  return path.startsWith(PREFIX) ? LINK.get(path.slice(PREFIX.length)) : undefined;
};
const notFound = () => new Response("not found", { status: 404 });

// The request-logged route's answer, as herald sends it with the built-in status policy (src/status/service.ts policyView).
const { version, exclude_maintenance_default, audit_anomalies_warn_degrades, checks } = DEFAULT_POLICY;
const POLICY = {
  success: true,
  policy: { source: "builtin_default", file: null, loaded: false, error: null, version, exclude_maintenance_default, audit_anomalies_warn_degrades, checks },
};
const policyAnswer = (id: string) =>
  Response.json(POLICY, { headers: { "cache-control": "public, max-age=30", "x-content-type-options": "nosniff", "x-request-id": id } });

/** A request-log row: herald's columns (src/http/request-log/log.ts), the key ref and client address null. */
type LogRow = [at: string, method: string, route: string, status: number, latencyUs: number, requestId: string];
const ROUTE = "/api/public/system-status/policy";
let logRows: LogRow[] = [];
let logWrite: ((rows: LogRow[]) => void) | null = null;
const logged = (req: Request, started: number, id: string): void => {
  logRows.push([new Date().toISOString(), req.method, ROUTE, 200, Math.round((Bun.nanoseconds() - started) / 1000), id]);
  if (logRows.length >= 1000) {
    const rows = logRows;
    logRows = [];
    logWrite?.(rows);
  }
};

const handlers: Record<string, (req: Request, server: Server<unknown>) => Response> = {
  "json-policy": (req) => {
    if (!sizeGuarded(req)) return new Response("refused", { status: 413 });
    return policyAnswer(requestId(req.headers.get("x-request-id")));
  },
  "json-logged": (req) => {
    const started = Bun.nanoseconds();
    if (!sizeGuarded(req)) return new Response("refused", { status: 413 });
    const id = requestId(req.headers.get("x-request-id"));
    const res = policyAnswer(id);
    logged(req, started, id);
    return res;
  },
  json: () => Response.json({ success: true, status: "up" }),
  "json-door": (req) => {
    if (!sizeGuarded(req)) return new Response("refused", { status: 413 });
    const id = requestId(req.headers.get("x-request-id"));
    return new Response(JSON.stringify({ success: true, status: "up" }), { headers: { "content-type": "application/json", "x-request-id": id } });
  },
  "json-signature": (req) => {
    if (!sizeGuarded(req)) return new Response("refused", { status: 413 });
    const h = req.headers;
    const id = requestId(h.get("x-request-id"));
    const key = h.get("x-partner-key");
    const timestamp = h.get("x-partner-timestamp");
    const signature = h.get("x-partner-signature");
    const nonce = h.get("x-partner-nonce");
    if (!key || !timestamp || !signature) return new Response("unsigned", { status: 401 });
    if (!verifySignature(secrets, signature, { method: req.method, target: requestTarget(req.url), timestamp, nonce, body: null })) {
      return new Response("bad signature", { status: 401 });
    }
    return new Response(JSON.stringify({ success: true, status: "up" }), { headers: { "content-type": "application/json", "x-request-id": id } });
  },
  redirect: (req) => {
    const destination = destinationOf(req);
    if (!destination) return notFound();
    return new Response(null, { status: 302, headers: { location: destination, "cache-control": "private, no-store" } });
  },
  "redirect-ip": (req, server) => {
    const destination = destinationOf(req);
    if (!destination) return notFound();
    const ip = server.requestIP(req)?.address ?? "";
    if (ip === "") return new Response("no client address", { status: 500 });
    return new Response(null, { status: 302, headers: { location: destination, "cache-control": "private, no-store" } });
  },
  "redirect-door": (req, server) => {
    const url = req.url;
    if (url.length > 8192 || req.headers.get("content-length") !== null) return new Response("refused", { status: 413 });
    // The code sliced off the URL it had to read anyway: cheaper than the raw redirect's `new URL`, as herald's
    // door (Bun's router hands it the code) is too.
    const at = url.indexOf(PREFIX, 8);
    const query = url.indexOf("?", at);
    const destination = at === -1 ? undefined : LINK.get(url.slice(at + PREFIX.length, query === -1 ? undefined : query));
    if (!destination) return notFound();
    const ip = server.requestIP(req)?.address ?? "";
    const ua = req.headers.get("user-agent") ?? "";
    const id = requestId(req.headers.get("x-request-id"));
    let agents = clicks.get(ip);
    if (!agents) clicks.set(ip, (agents = new Map()));
    agents.set(ua, (agents.get(ua) ?? 0) + 1);
    return new Response(null, { status: 302, headers: { location: destination, "cache-control": "private, no-store", "x-request-id": id } });
  },
};

handlers["json-logged-worker"] = handlers["json-logged"]!;
const series = new Metrics({ processMetrics: false }).route("GET", ROUTE);
handlers["json-logged-complete"] = (req) => {
  const started = Bun.nanoseconds();
  const url = req.url;
  if (!sizeGuarded(req)) return new Response("refused", { status: 413 });
  const id = requestId(req.headers.get("x-request-id"));
  if (hasSeveralParameters(url)) return new Response("a parameter may repeat: herald would look", { status: 400 });
  const answer = metaRequested(url) ? { ...POLICY, meta: { request_id: id, generated_at_utc: new Date().toISOString() } } : POLICY;
  // The compression decision: wrk sends no Accept-Encoding, so the answer is never compressed (as herald's is not).
  if (req.headers.get("accept-encoding") !== null) return new Response("compressed answers are not part of this floor", { status: 406 });
  const res = Response.json(answer, { headers: { "cache-control": "public, max-age=30", "x-content-type-options": "nosniff", "x-request-id": id } });
  observe(series, 200, (Bun.nanoseconds() - started) / 1e9);
  logged(req, started, id);
  return res;
};
if (which === "json-logged" || which === "json-logged-complete") logWrite = requestLogWriter(process.env.DB ?? "");
if (which === "json-logged-worker") {
  const worker = new Worker(new URL("./floors-log-worker.ts", import.meta.url).href);
  worker.postMessage({ db: process.env.DB ?? "" });
  logWrite = (rows) => worker.postMessage(rows);
}

if (which === "json-logged-elysia") {
  logWrite = requestLogWriter(process.env.DB ?? "");
  const { Elysia } = await import("elysia");
  const ids = new WeakMap<Request, { id: string; started: number }>();
  const TOO_LARGE = new Response("refused", { status: 413 });
  new Elysia()
    .onRequest(({ request, set }) => {
      const started = Bun.nanoseconds();
      // Not `return new Response(…)`: Elysia reads a hook that returns a call's result as async (herald's hooks
      // avoid it too, src/http/core.ts) and would compile every route to a promise.
      const early = sizeGuarded(request) ? undefined : TOO_LARGE.clone();
      if (early) return early;
      const id = requestId(request.headers.get("x-request-id"));
      ids.set(request, { id, started });
      set.headers["x-request-id"] = id;
      set.headers["x-content-type-options"] = "nosniff";
    })
    .mapResponse(({ request }) => {
      const r = ids.get(request);
      if (r) logged(request, r.started, r.id);
    })
    .get("/floors-ready", () => "ok")
    .get(ROUTE, ({ set }) => {
      set.headers["cache-control"] = "public, max-age=30";
      return POLICY;
    })
    .listen({ hostname: "127.0.0.1", port });
  const stop = () => process.exit(0);
  process.on("SIGTERM", stop);
  process.on("SIGINT", stop);
} else {
  const handler = handlers[which];
  if (!handler) {
    console.error(`floors-server: unknown CASE ${which}; one of ${Object.keys(handlers).join(", ")}`);
    process.exit(2);
  }

  // Every case has the same static readiness route (Bun answers it natively); the load never asks for it.
  const server = Bun.serve({ hostname: "127.0.0.1", port, routes: { "/floors-ready": new Response("ok") }, fetch: handler });

  const stop = () => {
    void server.stop(true).then(() => process.exit(0));
  };
  process.on("SIGTERM", stop);
  process.on("SIGINT", stop);
}
