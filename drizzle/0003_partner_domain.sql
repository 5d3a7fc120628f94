CREATE TABLE `donation_claims` (
	`id` integer PRIMARY KEY AUTOINCREMENT NOT NULL,
	`partner` text NOT NULL,
	`mode` text NOT NULL,
	`key_id` text NOT NULL,
	`campaign_id` text NOT NULL,
	`amount` text NOT NULL,
	`recipient_email` text,
	`recipient_wallet` text,
	`user_id` integer,
	`claim_code` text NOT NULL,
	`status` text NOT NULL,
	`email_sent` integer DEFAULT false NOT NULL,
	`created_at` text NOT NULL,
	`redeemed_at` text,
	`redeemed_by` text
);
--> statement-breakpoint
CREATE UNIQUE INDEX `donation_claims_code_idx` ON `donation_claims` (`claim_code`);--> statement-breakpoint
CREATE INDEX `donation_claims_owner_idx` ON `donation_claims` (`partner`,`mode`,`id`);--> statement-breakpoint
CREATE TABLE `email_outbox` (
	`id` integer PRIMARY KEY AUTOINCREMENT NOT NULL,
	`to_address` text NOT NULL,
	`subject` text NOT NULL,
	`body` text NOT NULL,
	`status` text DEFAULT 'queued' NOT NULL,
	`created_at` text NOT NULL
);
--> statement-breakpoint
CREATE TABLE `partner_users` (
	`id` integer PRIMARY KEY AUTOINCREMENT NOT NULL,
	`partner` text NOT NULL,
	`mode` text NOT NULL,
	`external_id` text NOT NULL,
	`username` text,
	`display_name` text,
	`email` text,
	`status` text DEFAULT 'active' NOT NULL,
	`is_verified` integer DEFAULT false NOT NULL,
	`created_at` text NOT NULL,
	`updated_at` text NOT NULL
);
--> statement-breakpoint
CREATE UNIQUE INDEX `partner_users_external_idx` ON `partner_users` (`partner`,`mode`,`external_id`);--> statement-breakpoint
CREATE UNIQUE INDEX `partner_users_username_idx` ON `partner_users` (`partner`,`mode`,`username`);--> statement-breakpoint
CREATE INDEX `partner_users_email_idx` ON `partner_users` (`partner`,`mode`,`email`);--> statement-breakpoint
CREATE TABLE `wallet_links` (
	`id` integer PRIMARY KEY AUTOINCREMENT NOT NULL,
	`user_id` integer NOT NULL,
	`partner` text NOT NULL,
	`mode` text NOT NULL,
	`blockchain` text DEFAULT 'solana' NOT NULL,
	`wallet_address` text NOT NULL,
	`label` text,
	`is_primary` integer DEFAULT 0 NOT NULL,
	`verified` integer DEFAULT 0 NOT NULL,
	`verified_at` text,
	`is_hidden` integer DEFAULT 0 NOT NULL,
	`session_connected_at` text,
	`created_at` text NOT NULL,
	`updated_at` text NOT NULL,
	FOREIGN KEY (`user_id`) REFERENCES `partner_users`(`id`) ON UPDATE no action ON DELETE no action
);
--> statement-breakpoint
CREATE UNIQUE INDEX `wallet_links_owner_address_idx` ON `wallet_links` (`partner`,`mode`,`blockchain`,`wallet_address`);--> statement-breakpoint
CREATE UNIQUE INDEX `wallet_links_one_primary_idx` ON `wallet_links` (`user_id`) WHERE is_primary = 1;--> statement-breakpoint
CREATE INDEX `wallet_links_user_idx` ON `wallet_links` (`user_id`);--> statement-breakpoint
CREATE TABLE `salutes_balances` (
	`user_id` integer PRIMARY KEY NOT NULL,
	`partner` text NOT NULL,
	`mode` text NOT NULL,
	`balance_minor` integer NOT NULL,
	`updated_at` text NOT NULL,
	FOREIGN KEY (`user_id`) REFERENCES `partner_users`(`id`) ON UPDATE no action ON DELETE no action
);
--> statement-breakpoint
CREATE TABLE `salutes_conversions` (
	`id` integer PRIMARY KEY AUTOINCREMENT NOT NULL,
	`user_id` integer NOT NULL,
	`partner` text NOT NULL,
	`mode` text NOT NULL,
	`amount_minor` integer NOT NULL,
	`rate` text NOT NULL,
	`converted_amount` text NOT NULL,
	`target` text NOT NULL,
	`status` text NOT NULL,
	`ledger_entry_id` integer,
	`created_at` text NOT NULL,
	FOREIGN KEY (`user_id`) REFERENCES `partner_users`(`id`) ON UPDATE no action ON DELETE no action,
	FOREIGN KEY (`ledger_entry_id`) REFERENCES `salutes_ledger`(`id`) ON UPDATE no action ON DELETE no action
);
--> statement-breakpoint
CREATE INDEX `salutes_conversions_user_idx` ON `salutes_conversions` (`user_id`,`created_at`);--> statement-breakpoint
CREATE TABLE `salutes_ledger` (
	`id` integer PRIMARY KEY AUTOINCREMENT NOT NULL,
	`user_id` integer NOT NULL,
	`partner` text NOT NULL,
	`mode` text NOT NULL,
	`delta_minor` integer NOT NULL,
	`balance_after_minor` integer NOT NULL,
	`reason` text NOT NULL,
	`source` text NOT NULL,
	`key_id` text,
	`idempotency_key` text,
	`created_at` text NOT NULL,
	FOREIGN KEY (`user_id`) REFERENCES `partner_users`(`id`) ON UPDATE no action ON DELETE no action
);
--> statement-breakpoint
CREATE INDEX `salutes_ledger_user_idx` ON `salutes_ledger` (`user_id`,`id`);