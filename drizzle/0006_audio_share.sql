CREATE TABLE `audio_share_click_seen` (
	`link_id` integer NOT NULL,
	`hour` text NOT NULL,
	`client_hash` text NOT NULL,
	PRIMARY KEY(`link_id`, `hour`, `client_hash`)
);
--> statement-breakpoint
CREATE TABLE `audio_share_link_hits` (
	`link_id` integer NOT NULL,
	`hour` text NOT NULL,
	`clicks` integer DEFAULT 0 NOT NULL,
	`unique_clicks` integer DEFAULT 0 NOT NULL,
	`bot_hits` integer DEFAULT 0 NOT NULL,
	`head_hits` integer DEFAULT 0 NOT NULL,
	PRIMARY KEY(`link_id`, `hour`),
	FOREIGN KEY (`link_id`) REFERENCES `audio_share_links`(`id`) ON UPDATE no action ON DELETE no action
);
--> statement-breakpoint
CREATE TABLE `audio_share_links` (
	`id` integer PRIMARY KEY AUTOINCREMENT NOT NULL,
	`code` text NOT NULL,
	`destination_url` text NOT NULL,
	`source` text NOT NULL,
	`channel` text,
	`title` text,
	`signed` integer NOT NULL,
	`signature` text,
	`created_at` text NOT NULL,
	`expires_at` text NOT NULL,
	`revoked_at` text,
	`revoke_reason` text,
	`revoked_by` text
);
--> statement-breakpoint
CREATE UNIQUE INDEX `audio_share_links_code_idx` ON `audio_share_links` (`code`);--> statement-breakpoint
CREATE INDEX `audio_share_links_expires_idx` ON `audio_share_links` (`expires_at`);--> statement-breakpoint
CREATE TABLE `audio_share_track_events` (
	`id` integer PRIMARY KEY AUTOINCREMENT NOT NULL,
	`client_event_id` text NOT NULL,
	`event_type` text NOT NULL,
	`destination_url` text NOT NULL,
	`link_id` integer,
	`channel` text,
	`token_id` integer,
	`created_at` text NOT NULL
);
--> statement-breakpoint
CREATE INDEX `audio_share_track_client_event_idx` ON `audio_share_track_events` (`client_event_id`,`created_at`);--> statement-breakpoint
CREATE INDEX `audio_share_track_link_idx` ON `audio_share_track_events` (`link_id`,`event_type`);--> statement-breakpoint
CREATE TABLE `audio_share_track_tokens` (
	`id` integer PRIMARY KEY AUTOINCREMENT NOT NULL,
	`name` text NOT NULL,
	`token_hash` text NOT NULL,
	`created_at` text NOT NULL,
	`created_by` text NOT NULL,
	`last_used_at` text,
	`revoked_at` text
);
--> statement-breakpoint
CREATE UNIQUE INDEX `audio_share_track_tokens_hash_idx` ON `audio_share_track_tokens` (`token_hash`);