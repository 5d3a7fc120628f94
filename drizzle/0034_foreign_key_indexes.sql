-- Indexes for two foreign keys whose parents are deleted in batches (issue 71: a sandbox reset, prunes): deleting an
-- event makes the database look for deliveries that reference it, deleting a ledger entry for conversions that do;
-- without an index each looked at every row (20,000 sandbox events beside 100,000 deliveries took 82 s on SQLite).
-- (PostgreSQL: drizzle/postgres/0010_foreign_key_indexes.sql.)
CREATE INDEX `salutes_conversions_ledger_entry_idx` ON `salutes_conversions` (`ledger_entry_id`);--> statement-breakpoint
CREATE INDEX `deliveries_event_idx` ON `webhook_deliveries` (`event_id`);