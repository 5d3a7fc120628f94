import { sql } from "drizzle-orm";
import { index, integer, sqliteTable, text, uniqueIndex } from "drizzle-orm/sqlite-core";
import { foreignId, owner, timestamps } from "../db/columns";

/**
 * Users a partner links to Herald. Every row carries its owner (partner + mode): a sandbox key's users live
 * beside, never among, the live ones, and one partner never sees another's.
 */
export const partnerUsers = sqliteTable(
  "partner_users",
  {
    id: integer("id").primaryKey({ autoIncrement: true }),
    ...owner(),
    externalId: text("external_id").notNull(),
    username: text("username"),
    displayName: text("display_name"),
    email: text("email"),
    status: text("status", { enum: ["active", "suspended"] })
      .notNull()
      .default("active"),
    isVerified: integer("is_verified", { mode: "boolean" }).notNull().default(false),
    ...timestamps(),
  },
  (t) => [
    uniqueIndex("partner_users_external_idx").on(t.partner, t.mode, t.externalId),
    uniqueIndex("partner_users_username_idx").on(t.partner, t.mode, t.username),
    // Lookups by email within one owner.
    index("partner_users_email_idx").on(t.partner, t.mode, t.email),
    // The owner's users newest first (GET /api/partner/users, and /user-lookup by status or q): WHERE partner = ? AND
    // mode = ? ORDER BY id DESC, walked from the newest and stopped at the page's end. Without it every page sorted all
    // of the owner's users.
    index("partner_users_owner_idx").on(t.partner, t.mode, t.id),
    // The owner's users of one status newest first (status=suspended finds its few down this, not the owner's walk).
    index("partner_users_status_idx").on(t.partner, t.mode, t.status, t.id),
  ],
);

/** A row of one partner user's: the user, and their owner (partner + mode) repeated for the owner's indexes. */
export const userOwned = () => ({
  userId: foreignId("user_id", () => partnerUsers.id),
  ...owner(),
});

/** Wallets linked to a user. One primary per user; one address belongs to at most one user of an owner. */
export const walletLinks = sqliteTable(
  "wallet_links",
  {
    id: integer("id").primaryKey({ autoIncrement: true }),
    ...userOwned(),
    blockchain: text("blockchain").notNull().default("solana"),
    walletAddress: text("wallet_address").notNull(),
    label: text("label"),
    isPrimary: integer("is_primary").notNull().default(0),
    verified: integer("verified").notNull().default(0),
    verifiedAt: text("verified_at"),
    isHidden: integer("is_hidden").notNull().default(0),
    sessionConnectedAt: text("session_connected_at"),
    ...timestamps(),
  },
  (t) => [
    uniqueIndex("wallet_links_owner_address_idx").on(t.partner, t.mode, t.blockchain, t.walletAddress),
    // At most one primary wallet per user, enforced by the database itself.
    uniqueIndex("wallet_links_one_primary_idx").on(t.userId).where(sql`is_primary = 1`),
    index("wallet_links_user_idx").on(t.userId),
    // /user-lookup?wallet=: an address on any chain, WHERE partner = ? AND mode = ? AND wallet_address = ?, which the
    // unique index above (blockchain before the address) answers only by walking all of the owner's wallets.
    index("wallet_links_owner_wallet_idx").on(t.partner, t.mode, t.walletAddress),
    // markSolanaWalletProven: every partner's live links holding one address (a proof from the mini-app).
    index("wallet_links_address_idx").on(t.walletAddress),
  ],
);
