import type { PartnerActor } from "../auth/actors";
import { SCOPES } from "../auth/scopes";
import { EVENT_TYPE_NAMES } from "../webhooks/service";

export const SANDBOX_FIXTURE_ENDPOINTS = [
  "/api/partner/sandbox/verify",
  "/api/partner/sandbox/token-status",
  "/api/partner/sandbox/promotion-report",
  "/api/partner/sandbox/salutes/balance",
  "/api/partner/sandbox/salutes/ledger",
  "/api/partner/sandbox/users",
  "/api/partner/sandbox/webhooks",
  "/api/partner/sandbox/webhook-events",
  "/api/partner/sandbox/webhook-simulator/scenarios",
  "/api/partner/sandbox/webhook-simulator/run",
  "/api/partner/sandbox/donation-claim",
  "/api/partner/sandbox/salutes/credit",
  "/api/partner/sandbox/salutes/debit",
  "/api/partner/sandbox/webhook-events/replay",
  "/api/partner/sandbox/reset",
];

/**
 * What a key may do, and where its docs are. The same answer for the same key until the key or the deployment
 * changes (`skewSeconds` is SIGNATURE_SKEW_SECONDS, the window the signature check applies).
 */
export function capabilitiesFor(actor: PartnerActor, skewSeconds: number) {
  const sandbox = actor.mode === "sandbox";
  return {
    partner: actor.partner,
    key_id: actor.keyId,
    key_mode: actor.mode,
    scopes: [...actor.scopes],
    available_scopes: [...SCOPES],
    sandbox: {
      enabled_for_key: sandbox,
      verify_endpoint: "/api/partner/sandbox/verify",
      promotion_report_endpoint: "/api/partner/sandbox/promotion-report",
      promotion_policy: "sandbox_to_live_manual_approval",
      supports_deterministic_fixtures: true,
      fixture_endpoints: SANDBOX_FIXTURE_ENDPOINTS,
    },
    query_support: { include_meta: true },
    webhook_event_types: [...EVENT_TYPE_NAMES],
    signing: {
      headers: ["X-Partner-Key", "X-Partner-Timestamp", "X-Partner-Signature", "X-Partner-Nonce", "Idempotency-Key"],
      canonical_string: "METHOD\\nPATH_AND_QUERY\\nTIMESTAMP\\nNONCE\\nhex(sha256(RAW_BODY))",
      algorithm: "hex(HMAC-SHA256(secret, canonical))",
      timestamp_skew_seconds: skewSeconds,
    },
    docs: {
      api_reference: "/api/docs",
      openapi: "/api/openapi.yaml",
      errors: "/api/partner/errors.json",
      webhook_event_types: "/api/partner/webhooks/event-types",
      status: "/api/partner/status",
      token_status: sandbox ? "/api/partner/sandbox/token-status" : "/api/partner/token-status",
    },
  };
}
