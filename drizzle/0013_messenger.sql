CREATE TABLE `messenger_bot_outbox` (
	`id` integer PRIMARY KEY AUTOINCREMENT NOT NULL,
	`update_id` integer,
	`chat_id` integer NOT NULL,
	`method` text NOT NULL,
	`payload` text NOT NULL,
	`status` text NOT NULL,
	`attempts` integer DEFAULT 0 NOT NULL,
	`next_attempt_at` text NOT NULL,
	`lease_until` text,
	`last_error` text,
	`created_at` text NOT NULL,
	`sent_at` text
);
--> statement-breakpoint
CREATE INDEX `messenger_bot_outbox_due_idx` ON `messenger_bot_outbox` (`status`,`next_attempt_at`);--> statement-breakpoint
CREATE TABLE `messenger_counters` (
	`hour` text NOT NULL,
	`metric` text NOT NULL,
	`label` text NOT NULL,
	`count` integer NOT NULL,
	PRIMARY KEY(`hour`, `metric`, `label`)
);
--> statement-breakpoint
CREATE TABLE `messenger_grids` (
	`id` integer PRIMARY KEY AUTOINCREMENT NOT NULL,
	`telegram_user_id` integer NOT NULL,
	`server_seed` text NOT NULL,
	`server_seed_hash` text NOT NULL,
	`client_seed` text NOT NULL,
	`layout` text NOT NULL,
	`revealed` text NOT NULL,
	`status` text NOT NULL,
	`created_at` text NOT NULL,
	`ended_at` text
);
--> statement-breakpoint
CREATE INDEX `messenger_grids_player_idx` ON `messenger_grids` (`telegram_user_id`,`status`);--> statement-breakpoint
CREATE TABLE `messenger_ledger` (
	`id` integer PRIMARY KEY AUTOINCREMENT NOT NULL,
	`telegram_user_id` integer NOT NULL,
	`request_id` text NOT NULL,
	`action` text NOT NULL,
	`fingerprint` text NOT NULL,
	`free_spin_delta` integer NOT NULL,
	`missile_delta` integer NOT NULL,
	`points_delta` integer NOT NULL,
	`free_spin_after` integer NOT NULL,
	`missile_after` integer NOT NULL,
	`points_after` integer NOT NULL,
	`game_key` text,
	`result` text NOT NULL,
	`created_at` text NOT NULL
);
--> statement-breakpoint
CREATE UNIQUE INDEX `messenger_ledger_request_idx` ON `messenger_ledger` (`telegram_user_id`,`request_id`);--> statement-breakpoint
CREATE INDEX `messenger_ledger_created_idx` ON `messenger_ledger` (`created_at`);--> statement-breakpoint
CREATE INDEX `messenger_ledger_player_idx` ON `messenger_ledger` (`telegram_user_id`,`id`);--> statement-breakpoint
CREATE TABLE `messenger_mission_enrollments` (
	`telegram_user_id` integer NOT NULL,
	`mission_key` text NOT NULL,
	`progress` integer DEFAULT 0 NOT NULL,
	`enrolled_at` text NOT NULL,
	`completed_at` text,
	PRIMARY KEY(`telegram_user_id`, `mission_key`)
);
--> statement-breakpoint
CREATE TABLE `messenger_mission_events` (
	`id` integer PRIMARY KEY AUTOINCREMENT NOT NULL,
	`telegram_user_id` integer NOT NULL,
	`mission_key` text NOT NULL,
	`client_event_id` text NOT NULL,
	`value` integer NOT NULL,
	`accepted` integer NOT NULL,
	`reason` text,
	`result` text NOT NULL,
	`created_at` text NOT NULL
);
--> statement-breakpoint
CREATE UNIQUE INDEX `messenger_mission_events_client_idx` ON `messenger_mission_events` (`telegram_user_id`,`client_event_id`);--> statement-breakpoint
CREATE INDEX `messenger_mission_events_caps_idx` ON `messenger_mission_events` (`telegram_user_id`,`mission_key`,`created_at`);--> statement-breakpoint
CREATE TABLE `messenger_missions` (
	`mission_key` text PRIMARY KEY NOT NULL,
	`title` text NOT NULL,
	`event_type` text NOT NULL,
	`target` integer NOT NULL,
	`reward_free_spins` integer DEFAULT 0 NOT NULL,
	`reward_missiles` integer DEFAULT 0 NOT NULL,
	`reward_points` integer DEFAULT 0 NOT NULL,
	`reward_salutes` text,
	`daily_cap` integer NOT NULL,
	`per_minute_cap` integer NOT NULL,
	`active` integer DEFAULT 1 NOT NULL,
	`created_at` text NOT NULL
);
--> statement-breakpoint
CREATE TABLE `messenger_players` (
	`telegram_user_id` integer PRIMARY KEY NOT NULL,
	`username` text,
	`first_name` text,
	`language_code` text,
	`is_premium` integer DEFAULT 0 NOT NULL,
	`linked_user_id` integer,
	`linked_by` text,
	`free_spin_balance` integer DEFAULT 0 NOT NULL,
	`missile_balance` integer DEFAULT 0 NOT NULL,
	`points_balance` integer DEFAULT 0 NOT NULL,
	`points_earned` integer DEFAULT 0 NOT NULL,
	`last_free_spin_at` text,
	`created_at` text NOT NULL,
	`last_seen_at` text NOT NULL
);
--> statement-breakpoint
CREATE INDEX `messenger_players_points_idx` ON `messenger_players` (`points_earned`,`telegram_user_id`);--> statement-breakpoint
CREATE TABLE `messenger_promo_claims` (
	`code` text NOT NULL,
	`telegram_user_id` integer NOT NULL,
	`claimed_at` text NOT NULL,
	PRIMARY KEY(`code`, `telegram_user_id`)
);
--> statement-breakpoint
CREATE TABLE `messenger_promos` (
	`code` text PRIMARY KEY NOT NULL,
	`reward_free_spins` integer DEFAULT 0 NOT NULL,
	`reward_missiles` integer DEFAULT 0 NOT NULL,
	`reward_points` integer DEFAULT 0 NOT NULL,
	`reward_salutes` text,
	`max_claims` integer NOT NULL,
	`claims` integer DEFAULT 0 NOT NULL,
	`audience_group` text NOT NULL,
	`expires_at` text,
	`enabled` integer DEFAULT 1 NOT NULL,
	`created_at` text NOT NULL
);
--> statement-breakpoint
CREATE TABLE `messenger_seeds` (
	`id` integer PRIMARY KEY AUTOINCREMENT NOT NULL,
	`telegram_user_id` integer NOT NULL,
	`server_seed` text NOT NULL,
	`server_seed_hash` text NOT NULL,
	`client_seed` text NOT NULL,
	`next_nonce` integer DEFAULT 0 NOT NULL,
	`status` text NOT NULL,
	`created_at` text NOT NULL,
	`revealed_at` text
);
--> statement-breakpoint
CREATE INDEX `messenger_seeds_player_idx` ON `messenger_seeds` (`telegram_user_id`,`status`);--> statement-breakpoint
CREATE TABLE `messenger_spins` (
	`id` integer PRIMARY KEY AUTOINCREMENT NOT NULL,
	`telegram_user_id` integer NOT NULL,
	`seed_id` integer NOT NULL,
	`nonce` integer NOT NULL,
	`campaign_key` text NOT NULL,
	`segment_index` integer NOT NULL,
	`paid_with` text NOT NULL,
	`created_at` text NOT NULL
);
--> statement-breakpoint
CREATE INDEX `messenger_spins_player_idx` ON `messenger_spins` (`telegram_user_id`,`id`);--> statement-breakpoint
CREATE TABLE `messenger_updates` (
	`update_id` integer PRIMARY KEY NOT NULL,
	`kind` text NOT NULL,
	`chat_id` integer,
	`command` text,
	`received_at` text NOT NULL
);
--> statement-breakpoint
CREATE TABLE `messenger_wallet_challenges` (
	`nonce` text PRIMARY KEY NOT NULL,
	`telegram_user_id` integer NOT NULL,
	`address` text NOT NULL,
	`message` text NOT NULL,
	`issued_at` text NOT NULL,
	`expires_at` text NOT NULL,
	`consumed_at` text
);
--> statement-breakpoint
CREATE TABLE `messenger_wallets` (
	`telegram_user_id` integer NOT NULL,
	`address` text NOT NULL,
	`verified_at` text NOT NULL,
	PRIMARY KEY(`telegram_user_id`, `address`)
);
--> statement-breakpoint
CREATE INDEX `messenger_wallets_address_idx` ON `messenger_wallets` (`address`);