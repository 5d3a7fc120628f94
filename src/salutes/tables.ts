import { index, integer, sqliteTable, text } from "drizzle-orm/sqlite-core";
import { owner } from "../db/columns";
import { partnerUsers, userOwned } from "../partner/tables";

/**
 * The append-only salutes ledger, amounts in integer minor units (SALUTES_DECIMALS). A balance row is updated
 * in the same transaction as each entry, so balance = sum(delta) always; a test proves it under concurrency.
 */
export const salutesLedger = sqliteTable(
  "salutes_ledger",
  {
    id: integer("id").primaryKey({ autoIncrement: true }),
    ...userOwned(),
    deltaMinor: integer("delta_minor").notNull(),
    balanceAfterMinor: integer("balance_after_minor").notNull(),
    reason: text("reason").notNull(),
    source: text("source").notNull(),
    keyId: text("key_id"),
    idempotencyKey: text("idempotency_key"),
    createdAt: text("created_at").notNull(),
  },
  (t) => [
    // The ledger route without a filter: WHERE user_id = ? ORDER BY id (and its keyset, id < ? or id > ?).
    index("salutes_ledger_user_idx").on(t.userId, t.id),
    // The ledger route's filters: WHERE user_id = ? AND reason = ? ORDER BY id, and the same with source (ledgerPage).
    // Without them a rare reason walked all of the user's entries, testing each (1.3 s for a heavy user at 10M rows);
    // with both filters the planner takes one index and tests the other column on its entries. Each costs
    // one more B-tree insert per credit or debit. partner and mode are left out: a user id names one owner already.
    index("salutes_ledger_user_reason_idx").on(t.userId, t.reason, t.id),
    index("salutes_ledger_user_source_idx").on(t.userId, t.source, t.id),
  ],
);

export const salutesBalances = sqliteTable("salutes_balances", {
  userId: integer("user_id")
    .primaryKey()
    .references(() => partnerUsers.id),
  ...owner(),
  balanceMinor: integer("balance_minor").notNull(),
  updatedAt: text("updated_at").notNull(),
});

/** Conversions of salutes under the configured policy; each debits the ledger in the same transaction. */
export const salutesConversions = sqliteTable(
  "salutes_conversions",
  {
    id: integer("id").primaryKey({ autoIncrement: true }),
    ...userOwned(),
    amountMinor: integer("amount_minor").notNull(),
    rate: text("rate").notNull(),
    convertedAmount: text("converted_amount").notNull(),
    target: text("target").notNull(),
    status: text("status", { enum: ["pending", "completed", "rejected"] }).notNull(),
    ledgerEntryId: integer("ledger_entry_id").references(() => salutesLedger.id),
    createdAt: text("created_at").notNull(),
  },
  // The daily cap: SUM(amount_minor) WHERE user_id = ? AND created_at >= start of day.
  (t) => [
    index("salutes_conversions_user_idx").on(t.userId, t.createdAt),
    // A ledger entry's conversion: the foreign key's own check when ledger rows are deleted (a sandbox reset's
    // batches) read every conversion without it (~1 s a batch beside 20,000 conversions on SQLite).
    index("salutes_conversions_ledger_entry_idx").on(t.ledgerEntryId),
  ],
);

/**
 * The SALUTES_DECIMALS the stored minor units were written with (one row, id 1, written at the first start). The
 * amounts are integers in minor units and the number of decimals lives in configuration, so a start with another
 * setting would silently rescale every balance (764.20 read as 76420 with 0 decimals): it is refused instead.
 */
export const salutesSettings = sqliteTable("salutes_settings", {
  id: integer("id").primaryKey(),
  decimals: integer("decimals").notNull(),
  recordedAt: text("recorded_at").notNull(),
});
