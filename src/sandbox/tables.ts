import { integer, sqliteTable, text } from "drizzle-orm/sqlite-core";

/**
 * One row per partner whose sandbox practice state holds the deterministic fixtures. The practice rows
 * themselves live in the partner tables (users, wallets, ledger …) with mode='sandbox'; this row records that
 * they were seeded, from which key id (the generator's seed) and which rows are fixtures, so a first use seeds
 * exactly once and POST /api/partner/sandbox/reset can restore the same data.
 */
export const sandboxFixtures = sqliteTable("sandbox_fixtures", {
  /** The sandbox owner is (partner, 'sandbox'): one practice state per partner, shared by its sandbox keys. */
  partner: text("partner").primaryKey(),
  profile: text("profile").notNull(),
  seedKeyId: text("seed_key_id").notNull(),
  /** sha256 of the generated plan: two seeds with the same digest produced the same fixture data. */
  planDigest: text("plan_digest").notNull(),
  /** JSON array of the fixture users' ids. */
  userIds: text("user_ids").notNull(),
  seededAt: text("seeded_at").notNull(),
  resetCount: integer("reset_count").notNull().default(0),
});
