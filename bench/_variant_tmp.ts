// temporary one-off attribution server (deleted afterwards). BENCH_VARIANT selects what runs per request.
import { Elysia } from "elysia";
import type { PartnerActor } from "../src/auth/actors";
import { PartnerKeys } from "../src/auth/keys";
import type { Scope } from "../src/auth/scopes";
import { requestTarget, verifySignature } from "../src/auth/signature";
import { openContext } from "../src/bootstrap";
import { loadConfig } from "../src/config";
import { httpCore, RequestStates } from "../src/http/core";
import { ErrorBody } from "../src/http/envelope";
import { RouteIndex } from "../src/http/route-index";
import { capabilitiesFor } from "../src/partner/capabilities";
import { PartnerModel } from "../src/partner/model";

const variant = process.env.BENCH_VARIANT ?? "unsigned";
const config = loadConfig();
const ctx = openContext(config);
const keys = new PartnerKeys(ctx);
const row = keys.find(process.env.BENCH_KEY_ID!)!;
const actor: PartnerActor = { kind: "partner", keyId: row.key_id, partner: row.partner, mode: row.mode, scopes: row.scopes.split(",") as Scope[] };
const states = new RequestStates();
const routes = new RouteIndex();
const schema = { query: PartnerModel.metaQuery, response: { 200: PartnerModel.capabilities, 401: ErrorBody, 403: ErrorBody, 429: ErrorBody } };
function work(request: Request) {
  const h = request.headers;
  if (variant === "find" || variant === "inline") keys.find(h.get("x-partner-key")!);
  if (variant === "hmac" || variant === "inline") {
    const now = ctx.clock.now();
    const ok = verifySignature(keys.secretsOf(row, now), h.get("x-partner-signature")!, { method: request.method, target: requestTarget(request.url), timestamp: h.get("x-partner-timestamp")!, nonce: h.get("x-partner-nonce"), body: null });
    if (!ok) throw new Error("bad signature");
    if (variant === "inline") keys.markUsed(row, now.toISOString());
  }
}
const handler = ({ request, headers, set }: any) => {
  work(request);
  const keyUpdated = Date.parse(keys.getOrThrow(actor.keyId).updated_at);
  const lastModified = Math.floor(Math.max(keyUpdated, ctx.startedAt.getTime()) / 1000) * 1000;
  set.headers["last-modified"] = new Date(lastModified).toUTCString();
  set.headers["cache-control"] = "private, no-cache";
  const since = headers["if-modified-since"] ? Date.parse(headers["if-modified-since"]) : NaN;
  if (!Number.isNaN(since) && since >= lastModified) return new Response(null, { status: 304 });
  return { success: true as const, ...capabilitiesFor(actor) };
};
let app: any = new Elysia({ normalize: false }).use(httpCore(ctx, states, routes));
if (variant === "stubmacro") {
  const resolved = new WeakMap<Request, unknown>();
  const fixed = { actor, idempotency: null, requestId: "x" };
  const plugin = new Elysia({ name: "stub" }).macro({
    partner: (_g: { mode: string }) => ({
      transform({ request, set }: any) {
        try { resolved.set(request, fixed); } finally { Object.assign(set.headers, states.get(request)?.headers); }
      },
      resolve({ request }: any) { return { partner: resolved.get(request) }; },
    }),
  });
  app = app.use(new Elysia({ name: "p" }).use(plugin).get("/api/partner/capabilities", handler, { partner: { mode: "any" }, ...schema } as any));
} else {
  app = app.get("/api/partner/capabilities", handler, schema);
}
routes.load(app.routes);
ctx.requestLog.start(config.requestLogFlushMs);
app.listen({ port: config.port, hostname: config.host });
process.on("SIGTERM", () => { app.server.stop(true); ctx.requestLog.stop(); ctx.db.close(); process.exit(0); });
