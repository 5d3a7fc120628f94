CREATE TABLE `ops_403_suppressions` (
	`id` integer PRIMARY KEY AUTOINCREMENT NOT NULL,
	`path_pattern` text,
	`partner_key_id` text,
	`client_prefix` text,
	`reason` text NOT NULL,
	`owner` text NOT NULL,
	`expires_at` text NOT NULL,
	`created_at` text NOT NULL,
	`created_by` text NOT NULL,
	`revoked_at` text
);
--> statement-breakpoint
CREATE INDEX `ops_403_suppressions_expires_idx` ON `ops_403_suppressions` (`expires_at`);--> statement-breakpoint
CREATE TABLE `ops_probe_runs` (
	`id` integer PRIMARY KEY AUTOINCREMENT NOT NULL,
	`run_id` text NOT NULL,
	`at` text NOT NULL,
	`probe` text NOT NULL,
	`url` text NOT NULL,
	`status` integer,
	`latency_ms` integer,
	`had_data` integer NOT NULL,
	`ok` integer NOT NULL,
	`error` text
);
--> statement-breakpoint
CREATE INDEX `ops_probe_runs_at_idx` ON `ops_probe_runs` (`at`);--> statement-breakpoint
CREATE INDEX `ops_probe_runs_probe_idx` ON `ops_probe_runs` (`probe`,`at`);--> statement-breakpoint
CREATE TABLE `request_log_403_hourly` (
	`hour` text NOT NULL,
	`route` text NOT NULL,
	`partner_key_id` text NOT NULL,
	`client_prefix` text NOT NULL,
	`count` integer DEFAULT 0 NOT NULL,
	PRIMARY KEY(`hour`, `route`, `partner_key_id`, `client_prefix`)
);
--> statement-breakpoint
CREATE INDEX `request_log_403_hourly_route_idx` ON `request_log_403_hourly` (`route`,`hour`);--> statement-breakpoint
CREATE TABLE `request_log_hourly` (
	`hour` text PRIMARY KEY NOT NULL,
	`requests` integer DEFAULT 0 NOT NULL,
	`forbidden` integer DEFAULT 0 NOT NULL
);
