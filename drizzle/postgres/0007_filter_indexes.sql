-- Indexes for the filters the routes offer (issue 72). Each serves one statement that walked every row of a user or an
-- owner to test a column row by row (measured at 10M rows on SQLite, where that stalls every request):
-- the salutes ledger's reason and source filters (ledgerPage: WHERE user_id = ? AND reason = ? ORDER BY id, 1.3 s for
-- a rare reason); the partner's dead-letter summary (deadLetterRows: WHERE partner = ? AND mode = ? AND status =
-- 'dead_letter' AND updated_at >= ?, 418 ms), a partial index holding dead letters only, which SQLite uses because the
-- summary's statements repeat its condition; the users list newest first (WHERE partner = ? AND mode = ? ORDER BY id
-- DESC, which sorted all of the owner's users per page) and the user lookup by wallet on any chain
-- (wallet_address = ? without blockchain, which the unique index answers only by walking the owner's wallets).
-- (SQLite: drizzle/0031_filter_indexes.sql.)
CREATE INDEX "partner_users_owner_idx" ON "partner_users" ("partner", "mode", "id");
--> statement-breakpoint
CREATE INDEX "wallet_links_owner_wallet_idx" ON "wallet_links" ("partner", "mode", "wallet_address");
--> statement-breakpoint
CREATE INDEX "salutes_ledger_user_reason_idx" ON "salutes_ledger" ("user_id", "reason", "id");
--> statement-breakpoint
CREATE INDEX "salutes_ledger_user_source_idx" ON "salutes_ledger" ("user_id", "source", "id");
--> statement-breakpoint
CREATE INDEX "deliveries_dead_letter_idx" ON "webhook_deliveries" ("partner", "mode", "updated_at") WHERE status = 'dead_letter';
