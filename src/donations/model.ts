import { t } from "elysia";
import { Envelope } from "../http/envelope";
import { named } from "../http/openapi/names";
import { nullable } from "../http/routes/declare";

const ClaimStatus = t.Union([t.Literal("issued"), t.Literal("redeemed"), t.Literal("cancelled")]);
const EmailStatus = t.Union([t.Literal("sent"), t.Literal("queued"), t.Literal("not_requested")], {
  description: "queued: written to the email outbox, not yet sent (Herald has no SMTP); not_requested: no email recipient",
});

const Claim = named(
  "DonationClaim",
  t.Object({
    claim_id: t.Integer(),
    claim_code: t.String(),
    /** The claim's state: the same value as claim_status (the spec names both). */
    status: ClaimStatus,
    claim_status: ClaimStatus,
    campaign_id: t.String(),
    amount: t.String({ description: "Exact decimal string" }),
    recipient: t.Object({ email: nullable(t.String()), wallet_address: nullable(t.String()) }),
    user_id: nullable(t.String({ description: "Herald user id of one of your users" })),
    partner_key_id: t.String({ description: "The key that issued the claim" }),
    email_sent: t.Boolean(),
    email_status: EmailStatus,
    claim_url: t.String(),
    created_at: t.String(),
    redeemed_at: nullable(t.String()),
    redeemed_by: nullable(t.String()),
  }),
);

const issuedFields = {
  status: t.Literal("issued"),
  claim_status: t.Literal("issued"),
  claim_code: t.String({ description: "Unguessable (160 random bits), dc_ + base32" }),
  partner_key_id: t.String(),
  claim_id: t.Integer(),
  campaign_id: t.String(),
  amount: t.String({ description: "Exact decimal string" }),
  email_sent: t.Boolean({ description: "True only if the email left Herald; the outbox sender only queues, so false" }),
  email_status: EmailStatus,
  claim_url: t.String(),
  created_at: t.String(),
};

export const DonationsModel = {
  claim: Claim,
  issueBody: t.Object(
    {
      campaign_id: t.String({ pattern: "^[A-Za-z0-9._-]{1,64}$", description: "1–64 characters of A-Z a-z 0-9 . _ -" }),
      amount: t.Union([t.Number(), t.String({ maxLength: 40 })], {
        description: "Greater than 0; a JSON number (≤ 15 significant digits) or a decimal string; ≤ 18 digits, ≤ 9 decimals",
      }),
      recipient: t.Object(
        {
          email: t.Optional(t.String({ maxLength: 254 })),
          wallet_address: t.Optional(t.String({ maxLength: 64, description: "Solana address (base58, 32 bytes)" })),
        },
        { additionalProperties: false, description: "At least one of email and wallet_address" },
      ),
      user_id: t.Optional(t.Union([t.String({ maxLength: 20 }), t.Integer()], { description: "One of your users (Herald user id)" })),
    },
    { additionalProperties: false },
  ),
  issuedClaim: t.Object(issuedFields),
  issued: named("DonationClaimIssued", Envelope(issuedFields)),
  codeParams: t.Object({ claim_code: t.String({ minLength: 1, maxLength: 128 }) }),
  redeemBody: t.Optional(t.Object({ redeemed_by: t.Optional(t.String({ minLength: 1, maxLength: 128 })) }, { additionalProperties: false })),
  claimResponse: Envelope({ claim: Claim }),
};
