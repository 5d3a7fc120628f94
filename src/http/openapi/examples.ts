// Example inputs for the code samples of the API reference (src/http/openapi/samples.ts). Keyed by
// "METHOD /path" with the sandbox prefix removed, since a sandbox route takes its live twin's body.
// test/http/openapi-samples.test.ts checks every body here against its route's schema, so a sample can't drift
// from what the server accepts.

export const EXAMPLE_BODIES: Record<string, unknown> = {
  "POST /admin/partners/keys": { partner: "acme", mode: "live", scopes: ["read", "users", "credit", "debit", "ledger"] },
  "POST /admin/partners/keys/{key_id}/disable": { reason: "Key leaked in a support ticket" },
  "POST /admin/partners/keys/{key_id}/rotate": { overlap_hours: 24 },
  "POST /api/partner/webhooks": { event_type: "salutes.credit", target_url: "https://partner.example/hooks/herald", description: "Ledger sync" },
  "POST /api/partner/webhooks/{webhook_id}/rotate-secret": { overlap_hours: 24 },
  "POST /api/partner/webhooks/{webhook_id}/recover": { since: "2026-01-01T00:00:00Z", reason_tag: "receiver_fix", note: "Receiver fixed" },
  "POST /api/partner/webhooks/signature/verify": {
    signature: "63bbdaa4257d74150db2b2fd269934b1d09d24f4e4b7b4376bd9afcf17c97d81",
    timestamp: "1767225600",
    payload: '{"event_id":"evt_01","event_type":"salutes.credit","data":{"user_id":"42","delta":12.5}}',
    secret: "whsec_test_0123456789",
  },
  "POST /api/partner/webhook-events/replay": { event_ids: [1], reason_tag: "receiver_fix" },
  "POST /api/partner/users": { external_id: "player-1001", username: "ada", display_name: "Ada", email: "ada@example.com" },
  "PATCH /api/partner/users/{user_id}": { display_name: "Ada L.", is_verified: true },
  "POST /api/partner/users/{user_id}/wallets": { wallet_address: "4Nd1mBQtrMJVYVfKf2PJy9NZUZdTAsp7D4xWLs4gDB4T", label: "main", is_primary: true },
  "POST /api/partner/donation-claim": { campaign_id: "spring-2026", amount: "25", recipient: { email: "ada@example.com" } },
  "POST /api/partner/donation-claims/{claim_code}/redeem": { redeemed_by: "player-1001" },
  "POST /api/salutes/credit": { user_id: "42", amount: 12.5, reason: "quest_reward", source: "game.arena" },
  "POST /api/salutes/debit": { user_id: "42", amount: 2.5, reason: "shop.purchase", source: "game.shop" },
  "POST /api/salutes/convert": { user_id: "42", amount: 10 },
  "POST /api/public/audio-share-links/validate/batch": { items: [{ track_url: "/tracks/first-light" }] },
  "POST /api/public/audio-share-links/expand": { short_url: "/s/audio/abcdefghijklmnop" },
  "POST /api/public/audio-share-links/short/resolve": { code: "abcdefghijklmnop" },
  "POST /api/public/audio-share-links/track": {
    event_type: "share",
    destination_url: "/tracks/first-light",
    client_event_id: "0f8e2a6c-5b1d-4c1e-9d7a-3e4f5a6b7c8d",
  },
  "POST /admin/ops/audio-share-revocations/revoke": { short_code: "abcdefghijklmnop", reason: "Shared by mistake" },
  "POST /admin/audio-share/track-tokens": { name: "web player" },
  "POST /api/canary/echo": { message: "hello", request_id: "probe-1" },
  "POST /admin/status/maintenance": { starts_at: "2026-01-01T02:00:00Z", ends_at: "2026-01-01T03:00:00Z", title: "Database upgrade" },
  "POST /admin/status/incidents": {
    title: "Webhook deliveries delayed",
    message: "Deliveries are queued and retried; no event is lost.",
    severity: "warn",
    state: "investigating",
    components: ["webhooks"],
  },
  "PATCH /admin/status/incidents/{incident_id}": { title: "Webhook deliveries delayed in eu-west" },
  "POST /admin/status/incidents/{incident_id}/updates": { state: "identified", message: "A slow receiver held the queue; it is drained now." },
  "POST /admin/status/subscribers": { url: "https://ops.partner.example/herald-status", description: "Pager bridge" },
  // Bodies the route checks beyond its schema (bodyRule, bodyChecks, createOrUpdate): a sample the route takes.
  "POST /admin/ops/403-digest/suppressions": {
    path_pattern: "/api/partner/*",
    reason: "Scanner noise from the uptime probe",
    owner: "ops",
    expires_at: "2026-01-15T00:00:00Z",
  },
  "POST /admin/ops/alerts-monitor/silences": { matcher: "digest:*", reason: "Maintenance window", ends_at: "2026-01-02T00:00:00Z" },
  "POST /admin/transparency/declared-movements": {
    direction: "outflow",
    amount: "25000",
    window_start_utc: "2026-01-31",
    window_end_utc: "2026-02-01",
    reason: "Quarterly market-maker top-up",
  },
  "POST /api/messenger/wallet-proof/challenge": { address: "4Nd1mBQtrMJVYVfKf2PJy9NZUZdTAsp7D4xWLs4gDB4T" },
  "PATCH /admin/transparency/thresholds": { large_transfer_amount: "2000000", reason: "Treasury moves grew with the new market maker" },
  "POST /api/messenger/admin/games/promos": { code: "SPRING26", reward: { free_spins: 3, points: 50 }, max_claims: 1000, expires_at: "2026-04-01T00:00:00Z" },
  "POST /api/messenger/admin/games/audience-groups": { group_key: "testers", title: "Testers", rule: { telegram_user_ids: [4242] } },
  "POST /api/partner/reset": {},
  "POST /admin/partners/{partner}/promote": {},
  "POST /api/partner/webhook-simulator/run": { scenario_id: "claim_created" },
  // Form bodies (application/x-www-form-urlencoded: the sign-in form and the operator console's forms): every value
  // a string, as a browser sends it; the fields a form's handler needs besides the schema's required ones too.
  "POST /admin/sign-in": { token: "hat_YOUR_ADMIN_TOKEN" },
  "POST /admin/console/partners/keys/{key_id}/disable": { reason: "Key leaked in a support ticket", confirm: "yes" },
  "POST /admin/console/partners/keys/{key_id}/rotate": { overlap_hours: "24" },
  "POST /admin/console/dead-letters/{event_id}/replay": { reason: "Receiver fixed" },
  "POST /admin/console/alerts/silences": { matcher: "webhooks:*", reason: "Receiver maintenance until 10:00", hours: "4" },
  "POST /admin/console/403-digest/rules": { path_pattern: "/api/partner/users/*", reason: "Known probe from the partner's QA", expires_in_days: "7" },
  "POST /admin/console/audit-runs/triage/{signature}": { status: "investigating", owner: "ops:ada" },
  "POST /admin/console/messenger/missions/{mission_key}/state": { active: "0" },
};

type Json = Record<string, unknown>;

/**
 * A body for a route without a curated example: its required fields, each the first value its schema allows
 * (const, enum, first branch of a union, the minimum, a string of the minimum length). A pattern it cannot
 * satisfy makes test/http/openapi-samples.test.ts fail, which asks for a curated example above.
 */
export function sampleBody(schema: unknown, depth = 0): unknown {
  const s = (schema ?? {}) as Json;
  if (depth > 6) return null;
  if ("const" in s) return s.const;
  if (Array.isArray(s.enum)) return s.enum[0];
  // A create/update body (contract.ts createOrUpdate) or a body with a rule across its fields (bodyRule): the object's
  // fields, with the first shape's (create; a mission counted by the server) required fields and constraints.
  const shapes = s.properties ? ((s.oneOf ?? s.anyOf) as Json[] | undefined) : undefined;
  if (shapes?.length) {
    const { oneOf: _oneOf, anyOf: _anyOf, ...object } = s;
    const first = shapes[0]!;
    const required = [...((s.required ?? []) as string[]), ...((first.required ?? []) as string[])];
    const properties = { ...(object.properties as Json), ...(first.properties as Json | undefined) };
    return sampleBody({ ...object, properties, required: [...new Set(required)] }, depth + 1);
  }
  const branches = (s.anyOf ?? s.oneOf) as unknown[] | undefined;
  if (branches?.length) return sampleBody(branches[0], depth + 1);
  const type = Array.isArray(s.type) ? s.type.find((t) => t !== "null") : s.type;
  switch (type) {
    case "object": {
      const props = (s.properties ?? {}) as Record<string, unknown>;
      return Object.fromEntries(((s.required ?? []) as string[]).map((k) => [k, sampleBody(props[k], depth + 1)]));
    }
    case "array":
      return Array.from({ length: Number(s.minItems ?? 0) }, () => sampleBody(s.items, depth + 1));
    case "integer":
    case "number":
      return typeof s.minimum === "number" ? s.minimum : 1;
    case "boolean":
      return true;
    case "string":
      return "example".padEnd(Number(s.minLength ?? 0), "x").slice(0, Math.max(Number(s.maxLength ?? 7), Number(s.minLength ?? 0)));
    default:
      return null;
  }
}

/** Example values of path and required query parameters, by name; others become NAME placeholders. */
export const EXAMPLE_PARAMS: Record<string, string> = {
  user_id: "42",
  webhook_id: "1",
  event_id: "1",
  token_id: "1",
  id: "1",
  claim_code: "CLAIM_CODE",
  key_id: "KEY_ID",
  partner: "acme",
  badge: "overall.svg",
  code: "abcdefghijklmnop",
  wallet_address: "4Nd1mBQtrMJVYVfKf2PJy9NZUZdTAsp7D4xWLs4gDB4T",
  short_url: "/s/audio/abcdefghijklmnop",
  api_key: "hk_test_KEY_ID",
};

/** The key a route's examples are filed under: its live twin's path. */
export const exampleKey = (method: string, path: string) =>
  `${method.toUpperCase()} ${path.replace(/^\/api\/partner\/sandbox\/salutes\//, "/api/salutes/").replace(/^\/api\/partner\/sandbox\//, "/api/partner/")}`;

/** The example wallet: the WalletLink example, and (verified) the user's. */
const WALLET = {
  blockchain: "solana",
  wallet_address: "4Nd1mBQtrMJVYVfKf2PJy9NZUZdTAsp7D4xWLs4gDB4T",
  label: "main",
  is_primary: 1,
  verified: 0,
  verified_at: null,
  is_hidden: 0,
  session_connected_at: null,
};

/**
 * Example values of named schemas: the reference's response examples show them instead of "string" and 0.
 * test/http/openapi-responses.test.ts validates each against its schema in the served document.
 */
export const EXAMPLE_SCHEMAS: Record<string, unknown> = {
  User: {
    id: 42,
    external_id: "player-1001",
    username: "ada",
    display_name: "Ada",
    email: "ada@example.com",
    status: "active",
    is_verified: true,
    wallet_address: "4Nd1mBQtrMJVYVfKf2PJy9NZUZdTAsp7D4xWLs4gDB4T",
    wallets: [{ ...WALLET, verified: 1, verified_at: "2026-01-01T09:30:00.000Z" }],
    created_at: "2026-01-01T09:00:00.000Z",
    updated_at: "2026-01-01T09:30:00.000Z",
  },
  WalletLink: WALLET,
  Webhook: {
    id: 7,
    event_type: "salutes.credit",
    target_url: "https://partner.example/hooks/herald",
    description: "Ledger sync",
    is_active: 1,
    disabled_reason: null,
    failing_since: null,
    previous_secret_valid_until: null,
    created_at: "2026-01-01T09:00:00.000Z",
    updated_at: "2026-01-01T09:00:00.000Z",
  },
  WebhookEvent: {
    id: 311,
    event_id: "evt_01JH6X4Q2W9M3T7B5C8D0E1F2G",
    webhook_id: 7,
    event_type: "salutes.credit",
    status: "succeeded",
    attempts: 1,
    is_dead_letter: false,
    reason_tag: null,
    last_error: null,
    last_status_code: 200,
    target_url: "https://partner.example/hooks/herald",
    created_at: "2026-01-01T10:00:00.000Z",
    last_attempt_at: "2026-01-01T10:00:01.000Z",
    next_attempt_at: null,
    delivered_at: "2026-01-01T10:00:01.000Z",
  },
  LedgerEntry: {
    id: 1201,
    user_id: "42",
    delta: 12.5,
    balance_after: 112.5,
    reason: "quest_reward",
    source: "game.arena",
    created_at: "2026-01-01T10:00:00.000Z",
  },
  Pagination: { has_more: true, next_offset: 50, next_cursor: "eyJpZCI6MTIwMX0" },
  Meta: { request_id: "req_5f1c2b9e8a4d4f6b9c1e2d3a", generated_at_utc: "2026-01-01T10:00:00.000Z" },
  Error: { success: false, error: "not_found", message: 'user "999" was not found', request_id: "req_5f1c2b9e8a4d4f6b9c1e2d3a" },
};
