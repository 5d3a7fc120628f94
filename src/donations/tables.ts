import { index, integer, sqliteTable, text, uniqueIndex } from "drizzle-orm/sqlite-core";
import { owner } from "../db/columns";

/** Donation claims a partner issues; redeemed exactly once. */
export const donationClaims = sqliteTable(
  "donation_claims",
  {
    id: integer("id").primaryKey({ autoIncrement: true }),
    ...owner(),
    keyId: text("key_id").notNull(),
    campaignId: text("campaign_id").notNull(),
    /** Exact decimal string as sent (never a float). */
    amount: text("amount").notNull(),
    recipientEmail: text("recipient_email"),
    recipientWallet: text("recipient_wallet"),
    userId: integer("user_id"),
    claimCode: text("claim_code").notNull(),
    status: text("status", { enum: ["issued", "redeemed", "cancelled"] }).notNull(),
    emailSent: integer("email_sent", { mode: "boolean" }).notNull().default(false),
    createdAt: text("created_at").notNull(),
    redeemedAt: text("redeemed_at"),
    redeemedBy: text("redeemed_by"),
  },
  (t) => [uniqueIndex("donation_claims_code_idx").on(t.claimCode), index("donation_claims_owner_idx").on(t.partner, t.mode, t.id)],
);

/** Outgoing email, recorded instead of sent (Herald has no SMTP): outboxEmailSender, src/donations/email.ts. */
export const emailOutbox = sqliteTable("email_outbox", {
  id: integer("id").primaryKey({ autoIncrement: true }),
  toAddress: text("to_address").notNull(),
  subject: text("subject").notNull(),
  body: text("body").notNull(),
  status: text("status", { enum: ["queued", "sent", "failed"] })
    .notNull()
    .default("queued"),
  createdAt: text("created_at").notNull(),
});
