CREATE TABLE `ops_alert_runs` (
	`id` integer PRIMARY KEY AUTOINCREMENT NOT NULL,
	`run_id` text NOT NULL,
	`at` text NOT NULL,
	`source` text NOT NULL,
	`name` text NOT NULL,
	`status` text NOT NULL,
	`value` text,
	`details` text
);
--> statement-breakpoint
CREATE INDEX `ops_alert_runs_at_idx` ON `ops_alert_runs` (`at`);--> statement-breakpoint
CREATE INDEX `ops_alert_runs_source_idx` ON `ops_alert_runs` (`source`,`at`);--> statement-breakpoint
CREATE TABLE `ops_download_tokens` (
	`token_hash` text PRIMARY KEY NOT NULL,
	`actor` text NOT NULL,
	`export` text NOT NULL,
	`params` text NOT NULL,
	`created_at` text NOT NULL,
	`expires_at` text NOT NULL,
	`used_at` text
);
--> statement-breakpoint
CREATE INDEX `ops_download_tokens_expires_idx` ON `ops_download_tokens` (`expires_at`);--> statement-breakpoint
CREATE TABLE `ops_export_usage` (
	`id` integer PRIMARY KEY AUTOINCREMENT NOT NULL,
	`at` text NOT NULL,
	`actor` text NOT NULL,
	`export` text NOT NULL,
	`bytes` integer NOT NULL,
	`source` text NOT NULL
);
--> statement-breakpoint
CREATE INDEX `ops_export_usage_at_idx` ON `ops_export_usage` (`at`);--> statement-breakpoint
CREATE TABLE `ops_link_events` (
	`id` integer PRIMARY KEY AUTOINCREMENT NOT NULL,
	`at` text NOT NULL,
	`event` text NOT NULL,
	`issue_id` text NOT NULL,
	`target` text NOT NULL,
	`url` text,
	`attempt` integer DEFAULT 0 NOT NULL,
	`status_code` integer,
	`status_code_family` text,
	`skip_reason` text,
	`outbox_id` integer,
	`error` text
);
--> statement-breakpoint
CREATE INDEX `ops_link_events_at_idx` ON `ops_link_events` (`at`);--> statement-breakpoint
CREATE INDEX `ops_link_events_event_idx` ON `ops_link_events` (`event`,`at`);--> statement-breakpoint
CREATE INDEX `ops_link_events_issue_idx` ON `ops_link_events` (`issue_id`,`at`);--> statement-breakpoint
CREATE TABLE `ops_link_outbox` (
	`id` integer PRIMARY KEY AUTOINCREMENT NOT NULL,
	`event` text NOT NULL,
	`issue_id` text NOT NULL,
	`target` text NOT NULL,
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
CREATE INDEX `ops_link_outbox_due_idx` ON `ops_link_outbox` (`status`,`next_attempt_at`);--> statement-breakpoint
CREATE INDEX `ops_link_outbox_issue_idx` ON `ops_link_outbox` (`issue_id`,`target`);--> statement-breakpoint
CREATE TABLE `ops_preflight_snapshots` (
	`day` text NOT NULL,
	`section` text NOT NULL,
	`field` text NOT NULL,
	`value` text NOT NULL,
	`fingerprint` text NOT NULL,
	`taken_at` text NOT NULL,
	PRIMARY KEY(`day`, `section`, `field`)
);
--> statement-breakpoint
CREATE INDEX `ops_preflight_snapshots_field_idx` ON `ops_preflight_snapshots` (`section`,`field`,`day`);