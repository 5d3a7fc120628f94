// The valid request each operation's variants start from (test/fuzz). A route the suite knows gets values that
// reach its verb (a real user id, a webhook that exists); any other route gets values sampled from its
// OpenAPI schema, so a new route is fuzzed without editing this file.
import type { FuzzFixtures, FuzzOperation, FuzzTarget } from "./fuzz-target";
import { solAddress, WEBHOOK_TARGET } from "./fuzz-target";
import { pct, sampleFromSchema, type Baseline } from "./fuzz-variants";

const isSandbox = (op: FuzzOperation) => op.path.startsWith("/api/partner/sandbox/");

/** Path parameters by name: the fixtures they point at. */
function pathValue(op: FuzzOperation, name: string, f: FuzzFixtures): string | undefined {
  switch (name) {
    case "webhook_id":
      return isSandbox(op) ? f.sandboxWebhookId : f.liveWebhookId;
    case "user_id":
      return isSandbox(op) ? f.sandboxUserId : f.liveUserId;
    case "wallet_address":
      return f.walletAddress;
    case "claim_code":
      return f.claimCode;
    case "code":
      return f.shortCode;
    case "token_id":
      return f.trackTokenId;
    case "id":
      return f.maintenanceId;
    case "event_id":
      return f.deliveryId;
    case "name":
      return f.jobName;
    case "key_id":
      return f.victimKeyId;
    case "partner":
      return f.promotePartner;
    case "badge":
      return "overall.svg";
    default:
      return undefined;
  }
}

/** Query parameters every request to the route carries (required ones, and a few that take it deeper). */
function baseQuery(op: FuzzOperation, t: FuzzTarget): Record<string, string> {
  const f = t.fixtures;
  const userId = isSandbox(op) ? f.sandboxUserId : f.liveUserId;
  const known: Record<string, Record<string, string>> = {
    "GET /api/public/quickstart/verify-key": { api_key: t.keys.sandbox.keyId },
    "GET /api/salutes/balance": { user_id: userId },
    "GET /api/salutes/ledger": { user_id: userId },
    "GET /api/partner/sandbox/salutes/balance": { user_id: userId },
    "GET /api/partner/sandbox/salutes/ledger": { user_id: userId },
    "GET /api/public/audio-share-links": { track_url: pct("/tracks/42") },
    "GET /api/public/audio-share-links/validate": { track_url: pct("/tracks/42") },
    "GET /api/public/audio-share-links/preview": { track_url: pct("/tracks/42") },
    "GET /api/public/audio-share-links/expand": { short_url: pct(`http://localhost:3000/s/audio/${f.shortCode}`) },
    "GET /api/public/audio-share-links/stats": { code: f.shortCode },
    // Answers 400 unless given an id or an endpoint.
    "GET /api/public/deprecations/header-simulator": { endpoint: pct("/api/partner/users") },
  };
  const q: Record<string, string> = { ...known[op.id] };
  for (const p of op.parameters) {
    if (p.in === "query" && p.required && q[p.name] === undefined) q[p.name] = pct(String(sampleFromSchema(p.schema)));
  }
  return q;
}

/** Bodies that pass validation, so single-field variants reach the code behind it. */
function baseBody(op: FuzzOperation, t: FuzzTarget, fresh: { shortCode?: string }): unknown {
  const f = t.fixtures;
  const userId = isSandbox(op) ? f.sandboxUserId : f.liveUserId;
  const now = t.h.clock.now().getTime();
  const iso = (offsetMs: number) => new Date(now + offsetMs).toISOString();
  const salutes = { user_id: userId, amount: 1, reason: "fuzz", source: "fuzz" };
  const bodies: Record<string, unknown> = {
    "POST /admin/partners/keys": { partner: "FuzzCreated", mode: "sandbox", scopes: ["read"] },
    "POST /admin/partners/keys/{key_id}/disable": { reason: "fuzz" },
    "POST /admin/partners/keys/{key_id}/rotate": { overlap_hours: 1 },
    "POST /api/partner/webhooks": { event_type: "salutes.credit", target_url: WEBHOOK_TARGET },
    "POST /api/partner/webhooks/{webhook_id}/rotate-secret": { overlap_hours: 1 },
    "POST /api/partner/webhooks/{webhook_id}/recover": { since: iso(-3_600_000) },
    "POST /api/partner/webhooks/signature/verify": { signature: "0".repeat(64), timestamp: "1767225600", payload: "{}", secret: "whsec_fuzz" },
    "POST /api/partner/webhook-events/replay": { event_ids: [Number(f.deliveryId)] },
    "POST /api/partner/users": { external_id: "fuzz-created-user" },
    "PATCH /api/partner/users/{user_id}": { display_name: "Fuzz" },
    "POST /api/partner/users/{user_id}/wallets": { wallet_address: solAddress(9) },
    "POST /api/partner/donation-claim": { campaign_id: "fuzz", amount: 1, recipient: { wallet_address: f.walletAddress }, user_id: userId },
    "POST /api/partner/donation-claims/{claim_code}/redeem": { redeemed_by: "fuzz" },
    "POST /api/salutes/credit": salutes,
    "POST /api/salutes/debit": salutes,
    "POST /api/salutes/convert": { user_id: userId, amount: 10 },
    "POST /api/public/audio-share-links/validate/batch": { items: [{ track_url: "/tracks/42" }] },
    "POST /api/public/audio-share-links/expand": { short_url: `http://localhost:3000/s/audio/${f.shortCode}` },
    "POST /api/public/audio-share-links/short/resolve": { code: f.shortCode },
    "POST /api/public/audio-share-links/track": { event_type: "click", destination_url: "/tracks/42", client_event_id: "fuzz-event-0001" },
    "POST /admin/ops/audio-share-revocations/revoke": { short_code: fresh.shortCode ?? f.shortCode, reason: "fuzz" },
    "POST /admin/audio-share/track-tokens": { name: "fuzz" },
    "POST /api/canary/echo": { message: "hello", request_id: "fuzz-0001" },
    "POST /admin/status/maintenance": { starts_at: iso(3_600_000), ends_at: iso(7_200_000), title: "fuzz" },
    "POST /api/partner/sandbox/donation-claim": { campaign_id: "fuzz", amount: 1, recipient: { wallet_address: f.walletAddress } },
    "POST /api/partner/sandbox/reset": {},
    "POST /admin/partners/{partner}/promote": { force: true, reason: "fuzz" },
    "POST /api/partner/sandbox/users": { external_id: "fuzz-created-sandbox-user" },
    "PATCH /api/partner/sandbox/users/{user_id}": { display_name: "Fuzz" },
    "POST /api/partner/sandbox/users/{user_id}/wallets": { wallet_address: solAddress(11) },
    "POST /api/partner/sandbox/salutes/credit": salutes,
    "POST /api/partner/sandbox/salutes/debit": salutes,
    "POST /api/partner/sandbox/webhooks": { event_type: "salutes.credit", target_url: WEBHOOK_TARGET },
    "POST /api/partner/sandbox/webhook-events/replay": { event_ids: [1] },
    "POST /api/partner/sandbox/webhook-simulator/run": { scenario_id: f.scenarioId },
  };
  if (op.id in bodies) return bodies[op.id];
  return op.bodySchema ? sampleFromSchema(op.bodySchema) : undefined;
}

/**
 * Routes that destroy what they are aimed at get an object of their own, made just for them, so the shared
 * fixtures stay usable by every other route whatever order the tests run in.
 */
async function freshObjects(op: FuzzOperation, t: FuzzTarget): Promise<{ pathParams?: Record<string, string>; shortCode?: string }> {
  switch (op.id) {
    case "DELETE /api/partner/webhooks/{webhook_id}":
      return { pathParams: { webhook_id: await t.createWebhook("live", true) } };
    case "DELETE /api/partner/sandbox/webhooks/{webhook_id}":
      return { pathParams: { webhook_id: await t.createWebhook("sandbox", true) } };
    case "DELETE /admin/status/maintenance/{id}":
      return { pathParams: { id: await t.createMaintenance() } };
    case "POST /admin/audio-share/track-tokens/{token_id}/revoke":
      return { pathParams: { token_id: await t.createTrackToken() } };
    case "POST /admin/partners/keys/{key_id}/disable":
    case "POST /admin/partners/keys/{key_id}/rotate":
      return { pathParams: { key_id: await t.createKeyId("FuzzVictim") } };
    case "POST /admin/ops/audio-share-revocations/revoke":
      return { shortCode: await t.createShortCode() };
    default:
      return {};
  }
}

export async function baselineFor(op: FuzzOperation, t: FuzzTarget): Promise<Baseline> {
  const fresh = await freshObjects(op, t);
  const pathParams: Record<string, string> = {};
  for (const p of op.parameters.filter((p) => p.in === "path")) {
    pathParams[p.name] = fresh.pathParams?.[p.name] ?? pct(pathValue(op, p.name, t.fixtures) ?? String(sampleFromSchema(p.schema)));
  }
  // Path parameters the template names but the document does not declare still need a value.
  for (const m of op.path.matchAll(/\{([A-Za-z0-9_]+)\}/g)) {
    pathParams[m[1]!] ??= pct(pathValue(op, m[1]!, t.fixtures) ?? "1");
  }
  return { pathParams, query: baseQuery(op, t), body: baseBody(op, t, fresh) };
}
