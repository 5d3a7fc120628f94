-- Indexes for the prunes, which now delete in bounded batches (src/db/batched-delete.ts): each batch chooses its rows
-- with WHERE <condition> LIMIT n, which without an index on the condition's column reads the table until it has n
-- rows (and the last, short batch reads all of it). The settled-delivery indexes are partial (only settled rows
-- have an entry; the prune's statements repeat the condition so that SQLite uses them). admin_sessions_revoked_idx
-- holds revoked sessions only. (PostgreSQL: drizzle/postgres/0006_prune_indexes.sql.)
CREATE INDEX `audio_share_click_seen_hour_idx` ON `audio_share_click_seen` (`hour`);--> statement-breakpoint
CREATE INDEX `audio_share_track_created_idx` ON `audio_share_track_events` (`created_at`);--> statement-breakpoint
CREATE INDEX `admin_sessions_revoked_idx` ON `admin_sessions` (`revoked_at`) WHERE revoked_at IS NOT NULL;--> statement-breakpoint
CREATE INDEX `messenger_bot_outbox_created_idx` ON `messenger_bot_outbox` (`created_at`);--> statement-breakpoint
CREATE INDEX `messenger_wallet_challenges_expires_idx` ON `messenger_wallet_challenges` (`expires_at`);--> statement-breakpoint
CREATE INDEX `status_deliveries_settled_idx` ON `status_subscriber_deliveries` (`status`,`updated_at`) WHERE status IN ('succeeded', 'dead_letter');--> statement-breakpoint
CREATE INDEX `deliveries_settled_idx` ON `webhook_deliveries` (`status`,`updated_at`) WHERE status IN ('succeeded', 'cancelled', 'dead_letter');