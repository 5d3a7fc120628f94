// The `signed` benchmark's middle case: GET /api/partner/capabilities doing herald's real work WITHOUT the
// partner-auth macro. It runs the same pieces `herald serve` runs (loadConfig → openContext → the real httpCore →
// requestLog.start → listen, the same shutdown), and a copy of the route's handler from src/partner/routes.ts
// (Last-Modified from the key row, cache-control, capabilitiesFor, the same query and response schemas), for one
// fixed actor built from an existing key row exactly as the macro builds it. So the only thing this server does
// not do, compared with herald, is the macro: rate-limit group lookup, the X-Partner-* header checks, the key-row
// lookup, secret decryption (cached), HMAC verification, status/IP/mode/scope checks, the nonce branch,
// last_used_at and the key's ref in the request_log row. Keep the handler in step with src/partner/routes.ts.
// The process also holds herald's whole app in memory (built, never served), as `herald serve` does: a server
// with only this route has a heap a fraction of herald's, and the collector's work per request grows with the heap
// (the same route cost 17.7 µs of CPU here without it, 19.4 µs with it: bench/README.md "signed"), so without it a/b
// charged the size of herald's app to signature verification.
//
//   HERALD_DB_PATH=… (or DATABASE_URL=…) BENCH_KEY_ID=hk_live_… PORT=… bun bench/unsigned-server.ts   (the harness sets the rest)
import { Elysia } from "elysia";
import type { PartnerActor } from "../src/auth/actors";
import { PartnerKeys } from "../src/auth/keys";
import type { Scope } from "../src/auth/scopes";
import { buildApp } from "../src/app";
import { openContextAsync } from "../src/bootstrap";
import { loadConfig } from "../src/config";
import { httpCore, RequestStates } from "../src/http/core";
import { applyHookScopes } from "../src/http/hook-scope";
import { notModifiedSince } from "../src/http/caching/conditional";
import { ErrorBody } from "../src/http/envelope";
import { RouteIndex } from "../src/http/routes/route-index";
import { capabilitiesFor } from "../src/partner/capabilities";
import { PartnerModel } from "../src/partner/model";
import type { AnyElysia } from "elysia";
import { listenUntilSignal } from "./core-server";

const keyId = process.env.BENCH_KEY_ID;
if (!keyId) {
  process.stderr.write("unsigned-server: BENCH_KEY_ID (an existing partner key id in HERALD_DB_PATH) is required\n");
  process.exit(2);
}

const config = loadConfig();
const ctx = await openContextAsync(config);
const keys = new PartnerKeys(ctx);
const row = await keys.find(keyId);
if (!row) {
  process.stderr.write(`unsigned-server: no key ${keyId} in ${config.dbPath}\n`);
  process.exit(2);
}
// As partner-plugin.ts builds it after a successful verification.
const actor: PartnerActor = { kind: "partner", keyId: row.key_id, partner: row.partner, mode: row.mode, scopes: row.scopes.split(",") as Scope[] };
const partner = { actor, keyUpdatedAt: row.updated_at };

const authErrors = { 401: ErrorBody, 403: ErrorBody, 429: ErrorBody };
const states = new RequestStates();
const routes = new RouteIndex();
// normalize: false and encodeSchema: false, as buildApp (src/app.ts) sets them: they change how responses are
// checked against their schema.
const app = new Elysia({ name: "herald-unsigned-bench", normalize: false, encodeSchema: false }).use(httpCore(ctx, states, routes)).get(
  "/api/partner/capabilities",
  ({ request, set }) => {
    // Copied from src/partner/routes.ts; `partner` is the fixed actor instead of the macro's result.
    const keyUpdated = Date.parse(partner.keyUpdatedAt);
    const lastModified = Math.floor(Math.max(keyUpdated, ctx.startedAt.getTime()) / 1000) * 1000;
    set.headers["last-modified"] = new Date(lastModified).toUTCString();
    set.headers["cache-control"] = "private, no-cache";
    if (notModifiedSince(request, null, new Date(lastModified).toISOString()))
      return new Response(null, { status: 304, headers: set.headers as Record<string, string> });
    return { success: true as const, ...capabilitiesFor(partner.actor, ctx.config.signatureSkewSeconds) };
  },
  {
    query: PartnerModel.metaQuery,
    response: { 200: PartnerModel.capabilities, ...authErrors },
    // The signed route's OpenAPI security, which decides its global hooks (src/http/hook-scope.ts: no compression,
    // no core query check); without it this route carried hooks herald's signed route does not.
    detail: { security: [{ PartnerKey: [], PartnerTimestamp: [], PartnerSignature: [] }] },
  },
);
routes.load(app.routes);
// herald's own app over the same context, kept in memory and never served: the heap `herald serve` carries.
const herald = buildApp(ctx);
// As buildApp (src/app.ts) does: each global hook only on the routes it serves (probes' and bodies' hooks off).
applyHookScopes(app.router.history as never);

listenUntilSignal(app as unknown as AnyElysia, ctx, config);
// Referenced after listening, so nothing may drop it as unused.
if (herald.routes.length === 0) process.stderr.write("unsigned-server: herald's app has no routes\n");
