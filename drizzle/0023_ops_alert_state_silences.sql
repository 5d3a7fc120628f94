CREATE TABLE `ops_alert_silences` (
	`id` integer PRIMARY KEY AUTOINCREMENT NOT NULL,
	`matcher` text NOT NULL,
	`reason` text NOT NULL,
	`created_by` text NOT NULL,
	`created_at` text NOT NULL,
	`ends_at` text NOT NULL,
	`expired_at` text,
	`expired_by` text
);
--> statement-breakpoint
CREATE INDEX `ops_alert_silences_ends_idx` ON `ops_alert_silences` (`ends_at`);--> statement-breakpoint
CREATE TABLE `ops_alert_state` (
	`id` integer PRIMARY KEY AUTOINCREMENT NOT NULL,
	`alert_key` text NOT NULL,
	`source` text NOT NULL,
	`name` text NOT NULL,
	`level` text NOT NULL,
	`since` text NOT NULL,
	`fired_at` text,
	`resolved_at` text,
	`last_row_id` integer NOT NULL,
	`last_seen_at` text NOT NULL,
	`notified_level` text,
	`notified_at` text
);
--> statement-breakpoint
CREATE UNIQUE INDEX `ops_alert_state_key_idx` ON `ops_alert_state` (`alert_key`);--> statement-breakpoint
CREATE INDEX `ops_alert_state_level_idx` ON `ops_alert_state` (`level`);