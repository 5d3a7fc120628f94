-- What the query-plan guard found reading a whole growing table (docs/storage-port.md "The query-plan guard"): an
-- index for each lookup that had none (a host's latest RPC call, a player's promo claims, a campaign's spins, a
-- wallet address across partners, an admin action's audit rows), partial indexes for the few snapshots whose check
-- set changed and the few unsent bot messages with an error (their statements name the same conditions), and the
-- audit runs' total kept in audit_state beside its version, counted once here from the runs so far.
-- (PostgreSQL: drizzle/postgres/0012_guard_indexes.sql.)
ALTER TABLE `audit_state` ADD `runs_total` integer DEFAULT 0 NOT NULL;--> statement-breakpoint
UPDATE `audit_state` SET `runs_total` = (SELECT count(*) FROM `audit_runs`);--> statement-breakpoint
CREATE INDEX `admin_audit_action_idx` ON `admin_audit` (`action`,`at`);--> statement-breakpoint
CREATE INDEX `chain_rpc_calls_host_idx` ON `chain_rpc_calls` (`host`,`at`);--> statement-breakpoint
CREATE INDEX `messenger_bot_outbox_errors_idx` ON `messenger_bot_outbox` (`id`) WHERE last_error IS NOT NULL AND status <> 'sent';--> statement-breakpoint
CREATE INDEX `messenger_promo_claims_player_idx` ON `messenger_promo_claims` (`telegram_user_id`);--> statement-breakpoint
CREATE INDEX `messenger_spins_campaign_idx` ON `messenger_spins` (`campaign_key`);--> statement-breakpoint
CREATE INDEX `wallet_links_address_idx` ON `wallet_links` (`wallet_address`);--> statement-breakpoint
CREATE INDEX `status_snapshots_checks_idx` ON `status_snapshots` (`id`) WHERE checks <> '=';
