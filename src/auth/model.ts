import { t } from "elysia";
import { Envelope } from "../http/envelope";
import { ListAnswer, PageQuery } from "../http/pagination";
import { SCOPES } from "./scopes";
import { named } from "../http/openapi/names";

const Key = named(
  "PartnerKey",
  t.Object({
    key_id: t.String(),
    partner: t.String(),
    mode: t.Union([t.Literal("sandbox"), t.Literal("live")]),
    scopes: t.Array(t.String()),
    allowed_ips: t.Array(t.String()),
    status: t.Union([t.Literal("active"), t.Literal("disabled")]),
    created_at: t.String(),
    updated_at: t.String(),
    last_used_at: t.Union([t.String(), t.Null()]),
    previous_secret_valid_until: t.Union([t.String(), t.Null()]),
    disabled_reason: t.Union([t.String(), t.Null()]),
  }),
);

/** A session as GET /admin/sessions lists it: nothing secret (no hash beyond the public handle). */
export const AdminSessionView = named(
  "AdminSessionView",
  t.Object({
    id: t.String({ description: "Public handle: the first 16 hex characters of the session hash (not a credential)" }),
    admin_token_id: t.Integer(),
    admin_token_name: t.String(),
    created_at: t.String(),
    expires_at: t.String(),
    last_seen_at: t.Union([t.String(), t.Null()]),
    revoked_at: t.Union([t.String(), t.Null()]),
    client_ip: t.Union([t.String(), t.Null()]),
    user_agent: t.Union([t.String(), t.Null()]),
    active: t.Boolean({ description: "Not expired, not revoked, and its admin token not revoked" }),
  }),
);

export const AuthModel = {
  key: Key,
  keyList: Envelope(
    ListAnswer("keys", t.Array(Key, { description: "oldest first, then by key_id" }), {
      partner: t.Union([t.String(), t.Null()]),
      mode: t.Union([t.String(), t.Null()]),
      status: t.Union([t.String(), t.Null()]),
    }),
  ),
  keyWithSecret: Envelope({ key: Key, secret: t.String({ description: "Shown once; store it now." }) }),
  keyOnly: Envelope({ key: Key }),
  keyListQuery: t.Object({
    partner: t.Optional(t.String()),
    mode: t.Optional(t.Union([t.Literal("sandbox"), t.Literal("live")])),
    status: t.Optional(t.Union([t.Literal("active"), t.Literal("disabled")])),
    ...PageQuery,
  }),
  createKeyBody: t.Object(
    {
      partner: t.String({ minLength: 1, maxLength: 64 }),
      mode: t.Union([t.Literal("sandbox"), t.Literal("live")]),
      scopes: t.Array(t.Union(SCOPES.map((s) => t.Literal(s))), { minItems: 1, maxItems: SCOPES.length }),
      allowed_ips: t.Optional(t.Array(t.String({ maxLength: 64 }), { maxItems: 100 })),
    },
    { additionalProperties: false },
  ),
  disableBody: t.Object({ reason: t.String({ minLength: 1, maxLength: 500 }) }, { additionalProperties: false }),
  rotateBody: t.Object({ overlap_hours: t.Optional(t.Integer({ minimum: 0, maximum: 24 })) }, { additionalProperties: false }),
  keyParams: t.Object({ key_id: t.String({ maxLength: 128 }) }),
  verifyKeyQuery: t.Object({
    api_key: t.String({ minLength: 1, maxLength: 128 }),
    client: t.Optional(t.String({ maxLength: 64 })),
    include_meta: t.Optional(t.String()),
  }),
  verifyKey: named(
    "KeyVerification",
    Envelope({
      key_id: t.String(),
      client: t.Union([t.String(), t.Null()]),
      exists: t.Boolean(),
      active: t.Boolean(),
      key_mode: t.Union([t.Literal("sandbox"), t.Literal("live"), t.Null()]),
      onboarding_order: t.Array(t.Object({ step: t.Integer(), method: t.Literal("GET"), path: t.String(), signed: t.Boolean(), purpose: t.String() })),
      signing_docs: t.String(),
    }),
  ),
};
