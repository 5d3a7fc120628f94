import { t } from "elysia";
import { Envelope } from "../http/envelope";
import { named } from "../http/openapi/names";

export const PartnerModel = {
  capabilities: named(
    "Capabilities",
    Envelope({
      partner: t.String(),
      key_id: t.String(),
      key_mode: t.Union([t.Literal("sandbox"), t.Literal("live")]),
      scopes: t.Array(t.String()),
      available_scopes: t.Array(t.String()),
      sandbox: t.Object({
        enabled_for_key: t.Boolean(),
        verify_endpoint: t.String(),
        promotion_report_endpoint: t.String(),
        promotion_policy: t.String(),
        supports_deterministic_fixtures: t.Boolean(),
        fixture_endpoints: t.Array(t.String()),
      }),
      query_support: t.Object({ include_meta: t.Boolean() }),
      webhook_event_types: t.Array(t.String()),
      signing: t.Object({ headers: t.Array(t.String()), canonical_string: t.String(), algorithm: t.String(), timestamp_skew_seconds: t.Integer() }),
      // Named links, each typed (a Record here cost the answer's check Object.entries and a regular expression per
      // key on every request: bench/README.md "The policy's checks typed").
      docs: t.Object({
        api_reference: t.String({ description: "the API reference (HTML)" }),
        openapi: t.String({ description: "the OpenAPI document" }),
        errors: t.String({ description: "the error catalog" }),
        webhook_event_types: t.String({ description: "the webhook event types and their payloads" }),
        status: t.String({ description: "this key's status" }),
        token_status: t.String({ description: "the token's status (the sandbox's for a sandbox key)" }),
      }),
    }),
  ),
  metaQuery: t.Object({ include_meta: t.Optional(t.String()) }),
};
